package family

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// bare hides every optional capability of a family (Entropy, LogProb, SetMoments): a stand-in
// for a user's family that implements Family alone.
type bare struct{ Family }

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
func TestAffineEntropyIsTheBasesPlusLogDet(t *testing.T) {
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
}

// Affine offers a capability exactly when its base has it, and *Affine itself claims none of
// the base-dependent ones.
func TestAffineOffersOnlyItsBasesCapabilities(t *testing.T) {
	views := []struct {
		name string
		get  func(*Affine) (Family, bool)
		is   func(Family) bool
	}{
		{"Entropic",
			func(a *Affine) (Family, bool) { e, ok := a.Entropic(); return e, ok },
			func(f Family) bool { _, ok := f.(EntropyFamily); return ok }},
		{"MomentSetter",
			func(a *Affine) (Family, bool) { m, ok := a.MomentSetter(); return m, ok },
			func(f Family) bool { _, ok := f.(MomentSetter); return ok }},
	}
	full, none := testAffine(t, NewFullRank(3)), testAffine(t, bare{NewFullRank(3)})
	for _, v := range views {
		if f, ok := v.get(full); !ok || !v.is(f) {
			t.Errorf("%s: a full-rank base gave (%T, %v)", v.name, f, ok)
		}
		if _, ok := v.get(none); ok {
			t.Errorf("%s: offered for a base without the capability", v.name)
		}
		if v.is(full) {
			t.Errorf("%s: *Affine itself claims the capability", v.name)
		}
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

// SetMoments through the whitening is exact for a full-rank base (Moments gives back the
// moments in z coordinates) and rejects a covariance that is not positive definite.
func TestAffineSetMomentsIsExactForAFullRankBase(t *testing.T) {
	a := testAffine(t, NewFullRank(3))
	ms, ok := a.MomentSetter()
	if !ok {
		t.Fatal("full-rank base: no MomentSetter")
	}
	mean := []float64{0.3, -1, 2}
	cov := []float64{2, 0.4, -0.3, 0.4, 1, 0.2, -0.3, 0.2, 0.5}
	p := make([]float64, a.NumParams())
	if err := ms.SetMoments(p, mean, cov); err != nil {
		t.Fatal(err)
	}
	m, c := make([]float64, 3), make([]float64, 9)
	a.Moments(p, m, c)
	for i := range m {
		if math.Abs(m[i]-mean[i]) > 1e-12 {
			t.Errorf("mean[%d] = %.15g, want %g", i, m[i], mean[i])
		}
	}
	for i := range c {
		if math.Abs(c[i]-cov[i]) > 1e-12 {
			t.Errorf("cov[%d] = %.15g, want %g", i, c[i], cov[i])
		}
	}
	if err := ms.SetMoments(p, mean, make([]float64, 9)); err == nil {
		t.Error("a zero covariance was accepted")
	}
}

// LogProb is the log q that Sample returns at its own draw, and the same whether the base's
// float64 LogProb or (for a base without one) its tape LogDensity computes it.
func TestAffineLogProbWithAndWithoutTheBases(t *testing.T) {
	for _, base := range []Family{NewMeanField(3), NewFullRank(3), NewLowRank(3, 2)} {
		with, without := testAffine(t, base), testAffine(t, bare{base})
		p := randParams(base, rng.New(5, 0))
		r := rng.New(6, 0)
		eps, z := make([]float64, base.NoiseDim()), make([]float64, 3)
		for range 5 {
			for i := range eps {
				eps[i] = r.NormFloat64()
			}
			lq := with.Sample(p, eps, z)
			a, b := with.LogProb(p, z), without.LogProb(p, z)
			if !relClose(a, lq, 1e-12) || !relClose(b, lq, 1e-12) {
				t.Errorf("%T: Sample log q %.15g, LogProb %.15g, through the tape %.15g", base, lq, a, b)
			}
		}
	}
}
