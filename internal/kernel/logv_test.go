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
