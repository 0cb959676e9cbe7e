package flow

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/internal/kernel"
)

// TestBasisEnd4: the four-lane basis from the ends (kernel.BernsteinBasis4 with the tables of
// bernPoly, as evalAll calls it) against C(n, i)·xⁱ·(1−x)^(n−i) in 256-bit
// arithmetic (exact C and exact 1 − x of the lane's x), for degrees 0 to 98 and 998, points
// across (0, 1), within 1e-9 of 0 and 1, at 0, 1 and 1/2 (both directions meet), and slow lanes
// (left zero). Terms above 1e-280 must agree to (3n + 8)·ε relative: the start's rounding
// (powi4: ≤ n·ε/2, and y = fl(1 − x) raised to n, ≤ n·ε/2) and two roundings per step of the
// recurrence (≤ 2n·ε); terms below 1e-280 may be zero (the cutoff at 1e-300), and none may
// exceed its reference by more than the same relative margin.
func TestBasisEnd4(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	xs := []float64{0.5, 0.3, 1e-3, 1e-9, 0.999999, 1 - 1e-9, 0, 1, 0.02, 0.97}
	for _, n := range []int{0, 1, 2, 5, 18, 47, 98, 998} {
		p := newBernPoly(n+2, LinearTails)
		tol := float64(3*n+8) * 0x1p-52
		for trial := range 60 {
			var start [4]float64
			var slow [4]bool
			xy := make([]float64, 8)
			for l := range 4 {
				x := xs[r.IntN(len(xs))]
				if trial%3 == 0 {
					x = r.Float64()
				}
				slow[l] = r.IntN(6) == 0
				if slow[l] {
					continue
				}
				xy[l], xy[4+l] = x, 1-x
			}
			start = powi4(xy, n)
			for l := range 4 {
				if slow[l] {
					start[l] = 0
				}
			}
			b := make([]float64, 4*(n+1))
			kernel.BernsteinBasis4(n, p.up, xy, start[:], make([]float64, 4*(n+2)), b)
			for l := range 4 {
				x := xy[l]
				ref := exactBasis(n, x)
				for i := 0; i <= n; i++ {
					got := b[4*i+l]
					if slow[l] {
						if got != 0 {
							t.Fatalf("n=%d: slow lane %d has b[%d] = %g", n, l, i, got)
						}
						continue
					}
					want := ref[i]
					if want < 1e-280 {
						if got > want*(1+tol)+1e-300 {
							t.Fatalf("n=%d x=%.17g: b[%d] = %g, want %g", n, x, i, got, want)
						}
						continue
					}
					if math.Abs(got-want) > tol*want {
						t.Fatalf("n=%d x=%.17g: b[%d] = %.17g, want %.17g", n, x, i, got, want)
					}
				}
			}
		}
	}
}

// exactBasis returns C(n, i)·xⁱ·(1−x)^(n−i), i = 0..n, computed with 256-bit floats (exact
// binomials, exact 1 − x), each rounded once.
func exactBasis(n int, x float64) []float64 {
	const prec = 256
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	bx := nf().SetFloat64(x)
	by := nf().Sub(nf().SetInt64(1), bx)
	px, py := make([]*big.Float, n+1), make([]*big.Float, n+1)
	px[0], py[0] = nf().SetInt64(1), nf().SetInt64(1)
	for i := 1; i <= n; i++ {
		px[i], py[i] = nf().Mul(px[i-1], bx), nf().Mul(py[i-1], by)
	}
	out := make([]float64, n+1)
	c := big.NewInt(1)
	for i := 0; i <= n; i++ {
		v := nf().SetInt(c)
		v.Mul(v, px[i])
		v.Mul(v, py[n-i])
		out[i], _ = v.Float64()
		c.Mul(c, big.NewInt(int64(n-i)))
		c.Quo(c, big.NewInt(int64(i+1)))
	}
	return out
}

// TestPowi4: powi4 against math.Pow of each lane's larger point, within (k+1)·ε/2 relative
// (repeated squaring doubles the relative error it receives at each squaring: ≈ k·ε/2 in all,
// as sequential products).
func TestPowi4(t *testing.T) {
	xy := []float64{0.5, 0.999, 0.1, 1e-3, 0.5, 1e-3, 0.9, 0.999}
	for _, k := range []int{0, 1, 2, 3, 7, 8, 31, 100, 999} {
		got := powi4(xy, k)
		for l := range 4 {
			want := math.Pow(max(xy[l], xy[4+l]), float64(k))
			if math.Abs(got[l]-want) > float64(k+1)*0x1p-53*want {
				t.Errorf("powi4 lane %d, k=%d: %.17g, math.Pow %.17g", l, k, got[l], want)
			}
		}
	}
}
