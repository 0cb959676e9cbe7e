package family

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// noEntropy hides a family's Entropy method (a stand-in for a flow).
type noEntropy struct{ Family }

func testAffine(t *testing.T, base Family) *Affine {
	t.Helper()
	shift := []float64{1, -2, 0.5}
	scale := []float64{2, 0, 0, 0.3, 0.5, 0, -1, 0.2, 3}
	a, err := NewAffine(base, shift, scale, false)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The whitened family's entropy is the base's plus log|det Scale|, and equals the entropy of
// the Gaussian with its moments (two exact formulas, so 1e-12).
func TestAffineEntropyOnlyWhereTheBaseHasOne(t *testing.T) {
	a := testAffine(t, NewFullRank(3))
	p := randParams(a.Base, rng.New(3, 0))
	e, ok := a.Entropic()
	if !ok {
		t.Fatal("full-rank base: no entropy")
	}
	var tp ad.Tape
	h := tp.Float(e.Entropy(&tp, tp.Input(p)))
	mean, cov := make([]float64, 3), make([]float64, 9)
	a.Moments(p, mean, cov)
	g, ok := distmv.NewNormal(mean, mat.NewSymDense(3, cov), nil)
	if !ok {
		t.Fatal("moments not positive definite")
	}
	if !relClose(h, g.Entropy(), 1e-12) {
		t.Errorf("entropy %.15g, Gaussian of its moments %.15g", h, g.Entropy())
	}
	if _, ok := testAffine(t, noEntropy{NewFullRank(3)}).Entropic(); ok {
		t.Error("a base without entropy gave an entropic Affine")
	}
	var q Family = testAffine(t, NewFullRank(3))
	if _, ok := q.(EntropyFamily); ok {
		t.Error("*Affine itself claims a closed-form entropy")
	}
}

// Init honours loc: the mean of q is loc in z coordinates (nil: Shift).
func TestAffineInitHonoursLoc(t *testing.T) {
	for _, base := range []Family{NewMeanField(3), NewFullRank(3), NewLowRank(3, 1)} {
		a := testAffine(t, base)
		p := make([]float64, a.NumParams())
		mean := make([]float64, 3)
		for _, loc := range [][]float64{nil, {4, 5, -6}} {
			a.Init(p, loc, 0.5)
			a.Moments(p, mean, nil)
			want := loc
			if want == nil {
				want = a.Shift
			}
			for i := range mean {
				if math.Abs(mean[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Errorf("%T loc %v: mean %v", base, loc, mean)
				}
			}
		}
	}
}
