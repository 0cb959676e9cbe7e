package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLog: Log (the assembly on an AVX2 machine) and logGo within 2 ulp of logRef (math.Log,
// itself within 1 ulp of the exact value; for subnormal x, whose logarithm math.Log's amd64
// assembly gets wrong, math.Log(x·2⁵⁴) − 54·log 2) on every length up to 18
// at unaligned starts (the masked tail; the memory after dst untouched), on a logarithmic grid
// from 2⁻¹⁰⁷⁴ to 2¹⁰²³, points near 1 and random points; special values exactly.
func TestLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(75, 76))
	var xs []float64
	for e := -1074.0; e < 1024; e += 0.37 {
		xs = append(xs, math.Exp2(e))
	}
	for range 2000 {
		xs = append(xs, math.Exp(40*rng.NormFloat64()), 1+1e-3*rng.NormFloat64(), rng.Float64())
	}
	for _, f := range []func(dst, x []float64){Log, logGo} {
		dst := make([]float64, len(xs))
		f(dst, xs)
		for i, x := range xs {
			want := logRef(x)
			if math.Abs(dst[i]-want) > 2*ulp(want) {
				t.Fatalf("log(%g) = %.17g, math.Log %.17g", x, dst[i], want)
			}
		}
		for n := range 19 {
			for off := range 4 {
				x, _ := guarded(rng, n, (off+1)%4)
				for i := range x {
					x[i] = math.Abs(x[i]) + 0.1
				}
				d, intact := guarded(rng, n, off)
				f(d, x)
				for i := range x {
					if want := math.Log(x[i]); math.Abs(d[i]-want) > 2*ulp(want) {
						t.Fatalf("n=%d off=%d: log(%g) = %v, want %v", n, off, x[i], d[i], want)
					}
				}
				if !intact() {
					t.Fatalf("n=%d off=%d: write outside dst", n, off)
				}
			}
		}
		sp := []float64{0, math.Copysign(0, -1), -1, math.Inf(1), math.Inf(-1), math.NaN(), 1, 0x1p-1074, 0x1p-1023}
		got := make([]float64, len(sp))
		f(got, sp)
		for i, x := range sp {
			want := logRef(x)
			if math.IsNaN(want) != math.IsNaN(got[i]) || (!math.IsNaN(want) && math.Abs(got[i]-want) > 2*ulp(want)) && got[i] != want {
				t.Errorf("log(%v) = %v, want %v", x, got[i], want)
			}
		}
	}
}

func logRef(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// ulp returns the spacing of float64 values at |x| (the smallest subnormal at 0).
func ulp(x float64) float64 {
	x = math.Abs(x)
	if math.IsInf(x, 0) {
		return 0
	}
	return math.Nextafter(x, math.Inf(1)) - x
}

// TestTanh: Tanh (the assembly on an AVX2 machine) within 4 ulp of math.Tanh (the bound of
// the algorithm: e^(−2|x|) − 1 to ≈ 1.5 ulp, 2 + E, the division, and math.Tanh's own ≤ 1 ulp)
// on a dense grid over [−25, 25], logarithmically spaced points from 1e-300 to 1 of both signs
// (near 0, where 1 − e^(−2|x|) would cancel), subnormal x, random points, every tail length at
// unaligned starts (the memory after dst untouched), aliased dst = x; ±0, ±Inf and NaN exactly.
func TestTanh(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	var xs []float64
	for x := -25.0; x <= 25; x += 1e-4 {
		xs = append(xs, x)
	}
	for e := -300.0; e <= 0; e += 0.01 {
		v := math.Pow(10, e)
		xs = append(xs, v, -v)
	}
	xs = append(xs, 0x1p-1074, -0x1p-1060, 0x1p-1022, 0.1733, 0.1734, 0.52, 0.53, 18.3, 19.1, 20, 20.5, 700, -800)
	for range 100000 {
		xs = append(xs, 3*rng.NormFloat64())
	}
	for _, f := range []func(dst, x []float64){Tanh, tanhGo} {
		got := make([]float64, len(xs))
		f(got, xs)
		worst, at := 0.0, 0.0
		for i, x := range xs {
			want := math.Tanh(x)
			u := ulp(want)
			if want == 0 {
				u = 0x1p-1074
			}
			if e := math.Abs(got[i]-want) / u; e > worst {
				worst, at = e, x
			}
		}
		t.Logf("max %.2f ulp from math.Tanh (at x=%v)", worst, at)
		if worst > 4 {
			t.Errorf("Tanh: %.2f ulp from math.Tanh at x=%v", worst, at)
		}
		for n := range 19 {
			for off := range 4 {
				x, _ := guarded(rng, n, (off+1)%4)
				d, intact := guarded(rng, n, off)
				f(d, x)
				for i := range x {
					if want := math.Tanh(x[i]); math.Abs(d[i]-want) > 4*ulp(want) {
						t.Fatalf("n=%d off=%d: tanh(%v) = %v, want %v", n, off, x[i], d[i], want)
					}
				}
				if !intact() {
					t.Fatalf("n=%d off=%d: write outside dst", n, off)
				}
				want := append([]float64(nil), d...)
				f(x, x) // aliased
				for i := range x {
					if math.Abs(x[i]-want[i]) > 0 {
						t.Fatalf("n=%d: aliased tanh differs at %d", n, i)
					}
				}
			}
		}
		sp := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
		out := make([]float64, len(sp))
		f(out, sp)
		for i, x := range sp {
			want := math.Tanh(x)
			if math.Float64bits(out[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(out[i])) {
				t.Errorf("tanh(%v) = %v, want %v", x, out[i], want)
			}
		}
	}
}
