package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBasisRun4MatchesBasisRun: the four-lane recurrences give bit for bit the values of
// basisRun lane by lane, for points across (0, 1) including ones so close to 0 or 1 that the
// recurrences stop at the underflow cutoff, point masses (x = 0, y = 0), slow lanes (left
// zero) and degrees 0 to 98.
func TestBasisRun4MatchesBasisRun(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	xs := []float64{0.5, 0.3, 1e-3, 1e-9, 1e-200, 0.999999, 1 - 1e-12, 0, 1, 0.02, 0.97}
	for _, n := range []int{0, 1, 2, 5, 48, 98} {
		p := newBernPoly(n+2, BoundedTails)
		for trial := range 200 {
			var kk [4]int
			var bk [4]float64
			var slow [4]bool
			xy := make([]float64, 8)
			want := make([]float64, 4*(n+1))
			for l := range 4 {
				x := xs[r.IntN(len(xs))]
				if trial%3 == 0 {
					x = r.Float64()
				}
				y := 1 - x
				slow[l] = r.IntN(6) == 0
				xy[l], xy[4+l] = x, y
				if slow[l] {
					continue
				}
				kk[l], bk[l] = p.basisMode(n, x, y, math.Log(x), math.Log(y))
				p.basisRun(want[l:], 4, n, kk[l], bk[l], x, y)
			}
			got := make([]float64, 4*(n+1))
			p.basisRun4(got, n, kk, bk, xy, slow)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d trial %d: b[%d] (lane %d, x=%g) = %v, basisRun %v", n, trial, i/4, i%4, xy[i%4], got[i], want[i])
				}
			}
		}
	}
}
