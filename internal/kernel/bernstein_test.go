package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bernElev4Ref is BernsteinElev4 for one lane l, straight from the formulas, with the scale
// Σ|term| of each sum for the error bound.
func bernElev4Ref(m, l int, xy, b2, tds []float64) (z, hp, hpp float64, dz, dl, scale []float64) {
	P := m + 1
	at := func(a []float64, i int) float64 { return a[4*i+l] }
	x, y := xy[l], xy[4+l]
	delta, sig := tds[:4*P], tds[4*P:]
	theta := make([]float64, 4*P) // ϑ_k = δ_0 + δ_1 + … + δ_k (δ_0 standing for ϑ_0)
	for k := range P {
		theta[4*k+l] = at(delta, k)
		if k > 0 {
			theta[4*k+l] += theta[4*(k-1)+l]
		}
	}
	c := func(i int) float64 { // b_{i,m−2}, zero outside 0..m−2
		if i < 0 || i > m-2 {
			return 0
		}
		return at(b2, i)
	}
	b1 := make([]float64, m+1) // b1[m] = 0
	for i := 0; i < m; i++ {
		b1[i] = y*c(i) + x*c(i-1)
	}
	b0 := make([]float64, P)
	for k := 0; k <= m; k++ {
		prev := 0.0
		if k > 0 {
			prev = b1[k-1]
		}
		b0[k] = y*b1[k] + x*prev
	}
	scale = make([]float64, 3)
	for k := 1; k <= m; k++ {
		hp += at(delta, k) * b1[k-1]
		scale[1] += math.Abs(at(delta, k) * b1[k-1])
	}
	for i := 0; i <= m-2; i++ {
		t := (at(delta, i+2) - at(delta, i+1)) * c(i)
		hpp += t
		scale[2] += math.Abs(at(delta, i+2)*c(i)) + math.Abs(at(delta, i+1)*c(i))
	}
	hp *= float64(m)
	hpp *= float64(m * (m - 1))
	scale[1] *= float64(m)
	scale[2] *= float64(m * (m - 1))
	dz, dl = make([]float64, P), make([]float64, P)
	tail := 0.0
	for k := m; k >= 0; k-- {
		z += at(theta, k) * b0[k]
		tail += b0[k]
		scale[0] += math.Abs(at(theta, k)*b0[k]) + math.Abs(at(delta, k)*tail)
		if k > 0 {
			dz[k] = at(sig, k) * tail
			dl[k] = float64(m) / hp * b1[k-1] * at(sig, k)
		}
	}
	dz[0] = 1
	return z, hp, hpp, dz, dl, scale
}

// BernsteinElev4 (the exported function, so the assembly where it runs) and the pure-Go
// version against the formulas, for degrees that exercise both the paired and the single
// steps of each pass, with guard values around every output (no stray writes). Each output
// is a sum of at most 2m+2 rounded products of the inputs (z by parts: of δ_k and the tail
// sums, themselves sums of m+1 terms), so |error| ≤ (3m+6)ε·Σ|terms| with the terms of both
// forms in the scale; the bound used, 1e-13·Σ|terms|, holds with room up to m ≈ 100.
func TestBernsteinElev4(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type impl struct {
		name string
		f    func(m int, xy, b2, tds, b1, dzdl, res []float64)
	}
	impls := []impl{{"exported", BernsteinElev4}, {"go", bernElev4Go}}
	for _, m := range []int{2, 3, 4, 5, 8, 49, 50, 51} {
		P := m + 1
		xy := make([]float64, 8)
		for l := range 4 {
			xy[l] = rng.Float64()
			xy[4+l] = 1 - xy[l]
		}
		b2 := make([]float64, 4*(m-1))
		for i := range b2 {
			b2[i] = rng.Float64()
		}
		tds := make([]float64, 8*P)
		for i := range tds {
			tds[i] = 4*rng.Float64() - 1
		}
		for _, im := range impls {
			const pad = 8
			guard := func(n int) []float64 {
				s := make([]float64, n+2*pad)
				for i := range s {
					s[i] = -7
				}
				return s
			}
			b1g, dzdlg, resg := guard(4*m), guard(8*P), guard(12)
			b1, dzdl, res := b1g[pad:pad+4*m], dzdlg[pad:pad+8*P], resg[pad:pad+12]
			im.f(m, xy, b2, tds, b1, dzdl, res)
			for _, g := range [][]float64{b1g, dzdlg, resg} {
				n := len(g) - 2*pad
				for i := range pad {
					if g[i] != -7 || g[pad+n+i] != -7 {
						t.Fatalf("%s m=%d: write outside an output", im.name, m)
					}
				}
			}
			for l := range 4 {
				z, hp, hpp, dz, dl, sc := bernElev4Ref(m, l, xy, b2, tds)
				check := func(what string, got, want, scale float64) {
					t.Helper()
					if math.Abs(got-want) > 1e-13*scale {
						t.Errorf("%s m=%d lane %d: %s = %.17g, want %.17g", im.name, m, l, what, got, want)
					}
				}
				check("z", res[l], z, sc[0])
				check("h′", res[4+l], hp, sc[1])
				check("h″", res[8+l], hpp, sc[2])
				for k := range P {
					// dz_k: a sum of positive b's times s_k; dl_k: three products.
					check("dz", dzdl[4*k+l], dz[k], math.Abs(dz[k])+1e-300)
					check("dl", dzdl[4*P+4*k+l], dl[k], math.Abs(dl[k])+1e-300)
				}
			}
		}
	}
}

func TestBernsteinElev4Panics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for m = 1")
		}
	}()
	BernsteinElev4(1, make([]float64, 8), nil, make([]float64, 16), make([]float64, 4), make([]float64, 16), make([]float64, 12))
}

func BenchmarkBernsteinElev4M50(b *testing.B) {
	const m = 50
	xy := []float64{0.2, 0.4, 0.6, 0.8, 0.8, 0.6, 0.4, 0.2}
	b2 := make([]float64, 4*(m-1))
	tds := make([]float64, 8*(m+1))
	for i := range tds {
		tds[i] = float64(i%7) * 0.1
	}
	b1, dzdl, res := make([]float64, 4*m), make([]float64, 8*(m+1)), make([]float64, 12)
	for b.Loop() {
		BernsteinElev4(m, xy, b2, tds, b1, dzdl, res)
	}
}

// Interleave4 and Deinterleave4 (exported, so the assembly where it runs, and the Go
// versions) at every length mod 4, with row strides above the length and guard values
// around the outputs. Interleave4 moves values: exact. Deinterleave4 rounds a product and a
// (possibly fused) multiply-add: within 2ε·(|a·x| + |b·y|) of the exact value.
func TestInterleave4(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type ilImpl struct {
		name string
		f    func(dst, src []float64, s, n int) int
	}
	type dlImpl struct {
		name string
		f    func(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int
	}
	ils := []ilImpl{{"exported", func(dst, src []float64, s, n int) int { Interleave4(dst, src, s); return n }}, {"go", interleave4Go}}
	dls := []dlImpl{{"exported", func(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int {
		Deinterleave4(dst, s, a, b, x, y)
		return n
	}}, {"go", deinterleave4Go}}
	const pad, mark = 5, -3.25
	for n := 0; n <= 13; n++ {
		for _, s := range []int{n, n + 3} {
			src := make([]float64, 3*s+n)
			for i := range src {
				src[i] = rng.NormFloat64()
			}
			for _, im := range ils {
				buf := make([]float64, 4*n+2*pad)
				for i := range buf {
					buf[i] = mark
				}
				if got := im.f(buf[pad:pad+4*n], src, s, n); got != n {
					t.Fatalf("%s n=%d: did %d entries", im.name, n, got)
				}
				for i := range pad {
					if buf[i] != mark || buf[pad+4*n+i] != mark {
						t.Fatalf("%s n=%d s=%d: write outside dst", im.name, n, s)
					}
				}
				for k := range n {
					for l := range 4 {
						if got, want := buf[pad+4*k+l], src[l*s+k]; got != want {
							t.Errorf("%s n=%d s=%d: dst[%d] = %v, want %v", im.name, n, s, 4*k+l, got, want)
						}
					}
				}
			}
			x, y := make([]float64, 4*n), make([]float64, 4*n)
			for i := range x {
				x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			a, b := []float64{0.5, -1.25, 3, 1e-3}, 0.75
			for _, im := range dls {
				buf := make([]float64, 3*s+n+2*pad)
				for i := range buf {
					buf[i] = mark
				}
				dst := buf[pad : pad+3*s+n]
				im.f(dst, s, a, b, x, y, n)
				for i := range pad {
					if buf[i] != mark || buf[pad+3*s+n+i] != mark {
						t.Fatalf("%s n=%d s=%d: write outside dst", im.name, n, s)
					}
				}
				for l := range 4 {
					for k := range s {
						if l == 3 && k >= n {
							break
						}
						got := dst[l*s+k]
						if k >= n {
							if got != mark {
								t.Errorf("%s n=%d s=%d: dst[%d] written between rows", im.name, n, s, l*s+k)
							}
							continue
						}
						ax, by := a[l]*x[4*k+l], b*y[4*k+l]
						if math.Abs(got-(ax+by)) > 2*0x1p-52*(math.Abs(ax)+math.Abs(by)) {
							t.Errorf("%s n=%d s=%d: dst[%d] = %v, want %v", im.name, n, s, l*s+k, got, ax+by)
						}
					}
				}
			}
		}
	}
}
