package objective

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/zoo"
)

// perDraw hides a target's LogDensityBatch, so that an Estimator on it takes the per-draw path.
type perDraw struct{ model.Target }

// negInfBatch is a batched standard normal that is −Inf where z_0 > 1 (in both forms).
type negInfBatch int

func (n negInfBatch) Dim() int { return int(n) }

func (n negInfBatch) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	if t.Value(z)[0] > 1 {
		return t.Const(math.Inf(-1))
	}
	return t.MulC(t.Dot(z, z), -0.5)
}

func (n negInfBatch) LogDensityBatch(t *ad.Tape, Z ad.Var) (ad.Var, bool) {
	return model.LogDensityRows(t, n, Z), true
}

// batchFamilies are the families of the batched-path tests on a D-dimensional target:
// Gaussians, Bernstein flows (MADE with and without hidden layers and direct connections, a
// tanh MADE, frozen affine pairs, a t base), a MAF (no ForwardBatch: flow.ForwardBatch's
// row-by-row fallback) and Affine around a flow.
func batchFamilies(D int) map[string]family.Family {
	made := func(hidden []int, opts ...nn.MADEOption) *nn.MADE { return nn.NewMADE(D, hidden, 6, opts...) }
	bern := family.NewFlow(flow.NewBernsteinAR(made([]int{7, 5}, nn.WithActivation(ad.Linear))))
	shift, scale := make([]float64, D), make([]float64, D*D)
	for i := range D {
		shift[i] = 0.1 * float64(i)
		for j := 0; j <= i; j++ {
			scale[i*D+j] = 0.05 * float64(1+i-j)
		}
		scale[i*D+i] = 1 + 0.1*float64(i)
	}
	aff, err := family.NewAffine(bern, shift, scale, false)
	if err != nil {
		panic(err)
	}
	return map[string]family.Family{
		"meanfield":           family.NewMeanField(D),
		"fullrank":            family.NewFullRank(D),
		"fullrank_softplus":   family.NewFullRank(D, family.WithPositivity(family.Softplus)),
		"bernstein_ar":        bern,
		"bernstein_ar_tanh":   family.NewFlow(flow.NewBernsteinAR(made([]int{6}))),
		"bernstein_ar_direct": family.NewFlow(flow.NewBernsteinAR(made([]int{6}, nn.WithDirect()), flow.BernsteinFrozenAffine())),
		"bernstein_ar_nohid":  family.NewFlow(flow.NewBernsteinAR(made(nil), flow.BernsteinTails(flow.LinearTails))),
		"bernstein_ar_tbase":  family.NewFlow(flow.NewBernsteinAR(made([]int{6})), family.FlowBaseDF(5)),
		"maf":                 family.NewFlow(flow.NewMAF(nn.NewMADE(D, []int{8}, 2))),
		"affine_bernstein":    aff,
		"affine_scorer":       scorer(aff),
	}
}

// scorer returns Affine's DrawScorer view (its base is a flow).
func scorer(a *family.Affine) family.Family {
	s, ok := a.Scorer()
	if !ok {
		panic("objective: test: Affine over a flow is not a DrawScorer")
	}
	return s
}

// randParams initialises f and perturbs every parameter by N(0, sd²), so that no part of a flow
// is at its identity (zero output weights would hide errors in their adjoints).
func randParams(f family.Family, r *rng.Stream, sd float64) []float64 {
	p := make([]float64, f.NumParams())
	f.Init(p, nil, 0.8)
	for i := range p {
		p[i] += sd * r.NormFloat64()
	}
	return p
}

// TestBatchMatchesPerDraw: on eight schools (a model.BatchTarget), the batched path gives the
// per-draw path's estimate and gradient up to rounding. Both sum the same S terms per
// coordinate, in a different order and (for the Gaussians) with a different association of
// μ + Lε, so the differences are a few ulps of the largest summand: tolerance 1e-10 relative to
// max(1, |value|), far below any real error (a wrong adjoint is O(1) off).
func TestBatchMatchesPerDraw(t *testing.T) {
	const S, tol = 7, 1e-10
	tg := zoo.EightSchools()
	r := rng.New(31, 0)
	for name, f := range batchFamilies(tg.Dim()) {
		for _, o := range []Options{{}, {Entropy: true}, {STL: true}} {
			if _, ok := f.(family.EntropyFamily); o.Entropy && !ok {
				continue
			}
			_, okd := f.(family.BatchDensityFamily)
			_, oks := f.(family.DrawScorer)
			if o.STL && !okd && !oks {
				continue
			}
			eb, err := New(tg, f, o)
			if err != nil {
				t.Fatal(err)
			}
			if eb.bfam == nil {
				t.Fatalf("%s: the batched path is not used", name)
			}
			ep, err := New(perDraw{tg}, f, o)
			if err != nil {
				t.Fatal(err)
			}
			p := randParams(f, r, 0.1)
			eps := randNormal(r, eb.NoiseLen(S))
			gb, gp := make([]float64, len(p)), make([]float64, len(p))
			vb, vp := eb.Evaluate(p, eps, gb), ep.Evaluate(p, eps, gp)
			label := fmt.Sprintf("%s %+v", name, o)
			if !close(vb, vp, tol) || math.IsNaN(vb) {
				t.Errorf("%s: batched value %.17g, per draw %.17g", label, vb, vp)
			}
			for s, w := range ep.GroupValues() {
				if g := eb.GroupValues()[s]; !close(g, w, tol) {
					t.Errorf("%s: group %d: batched %.17g, per draw %.17g", label, s, g, w)
				}
			}
			bad := 0
			for i := range gp {
				if !close(gb[i], gp[i], tol) || math.IsNaN(gb[i]) {
					if bad++; bad <= 5 {
						t.Errorf("%s: ∂/∂φ[%d]: batched %.17g, per draw %.17g", label, i, gb[i], gp[i])
					}
				}
			}
		}
	}
}

// TestBatchGradientFD: the batched gradient is the derivative of the batched estimate at
// fixed noise (central differences, fdTol as TestGradientFD), for a Bernstein flow and the
// full-rank Gaussian on eight schools.
func TestBatchGradientFD(t *testing.T) {
	tg := zoo.EightSchools()
	r := rng.New(32, 0)
	fams := batchFamilies(tg.Dim())
	for _, name := range []string{"fullrank", "bernstein_ar", "bernstein_ar_direct"} {
		f := fams[name]
		e, err := New(tg, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := randParams(f, r, 0.1)
		eps := randNormal(r, e.NoiseLen(3))
		g := make([]float64, len(p))
		e.Evaluate(p, eps, g)
		checkGrad(t, name, g, fdGrad(func(x []float64) float64 { return e.Evaluate(x, eps, nil) }, p))
	}
}

// TestBatchNegInfFallsBack: a batch with a −Inf log weight is evaluated by the per-draw path
// (which drops that draw from the gradient), so the result is exactly the per-draw result.
func TestBatchNegInfFallsBack(t *testing.T) {
	tg := negInfBatch(3)
	f := family.NewFullRank(3)
	eb, _ := New(tg, f, Options{})
	ep, _ := New(perDraw{tg}, f, Options{})
	r := rng.New(33, 0)
	p := randParams(f, r, 0.1)
	eps := randNormal(r, eb.NoiseLen(20)) // P(z_0 > 1) ≈ 0.2 per draw: a −Inf draw with probability ≈ 0.99; checked below
	gb, gp := make([]float64, len(p)), make([]float64, len(p))
	vb, vp := eb.Evaluate(p, eps, gb), ep.Evaluate(p, eps, gp)
	if !math.IsInf(vp, -1) {
		t.Fatalf("no −Inf draw in the test's noise (value %g)", vp)
	}
	if !math.IsInf(vb, -1) {
		t.Errorf("batched value %g, want −Inf", vb)
	}
	for i := range gp {
		if gb[i] != gp[i] {
			t.Errorf("∂/∂φ[%d]: batched %g, per draw %g (want identical: the fallback)", i, gb[i], gp[i])
		}
	}
}

// TestBatchNoAllocs: the batched path allocates nothing in steady state.
func TestBatchNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	tg := zoo.EightSchools()
	r := rng.New(34, 0)
	fams := batchFamilies(tg.Dim())
	for _, c := range []struct {
		name string
		o    Options
	}{{"meanfield", Options{}}, {"fullrank", Options{}}, {"fullrank", Options{STL: true}}, {"bernstein_ar", Options{}}, {"affine_bernstein", Options{}},
		{"bernstein_ar", Options{STL: true}}, {"affine_scorer", Options{STL: true}}} {
		name := c.name
		f := fams[name]
		e, _ := New(tg, f, c.o)
		p := randParams(f, r, 0.1)
		eps := randNormal(r, e.NoiseLen(10))
		g := make([]float64, len(p))
		e.Evaluate(p, eps, g)
		if a := testing.AllocsPerRun(10, func() { e.Evaluate(p, eps, g) }); a != 0 {
			t.Errorf("%s %+v: %v allocations per batched Evaluate", name, c.o, a)
		}
	}
}

// noScore hides every capability of a family but objective.Family, so that an Estimator on it
// takes the per-draw path and, with STL, inverts the flow (LogDensity) instead of DrawScore.
type noScore struct{ Family }

// TestDrawScoreMatchesLogDensity: with STL, the gradient through DrawScore (the score pushed
// forward through the draw) equals the gradient through LogDensity at the draw (the flow
// inverted on the tape) on eight schools, per draw and batched, for K = 1 and K = 3. The values
// come from the draws' own log q on both paths, so they agree to the rounding of the batched
// sums (1e-12 relative; the per-draw path sums the S terms in another order). The gradients
// are the same derivative computed two ways; the inverse's root search (Bernstein) and the
// triangular solve differ by rounding: tolerance 1e-8 relative to max(1, |∂|), far below a
// wrong term (O(1) off).
func TestDrawScoreMatchesLogDensity(t *testing.T) {
	const S, tol = 5, 1e-8
	tg := zoo.EightSchools()
	D := tg.Dim()
	r := rng.New(35, 0)
	fams := batchFamilies(D)
	fams["mafstack"] = family.NewFlow(flow.NewMAFStack(D, 2, []int{12, 12}, nil))
	fams["maf_t"] = family.NewFlow(flow.NewMAF(nn.NewMADE(D, []int{8}, 2, nn.WithDirect())), family.FlowBaseDF(4))
	fams["realnvp"] = family.NewFlow(flow.NewRealNVP(D, 2, []int{8}))
	for name, f := range fams {
		if _, ok := f.(family.DrawScorer); !ok {
			continue
		}
		for _, o := range []Options{{STL: true}, {STL: true, K: 3}} {
			for _, tgt := range []model.Target{tg, perDraw{tg}} {
				es, err := New(tgt, f, o)
				if err != nil {
					t.Fatal(err)
				}
				if es.dscore == nil {
					t.Fatalf("%s: DrawScore not used", name)
				}
				ei, err := New(perDraw{tg}, noScore{f}, o)
				if err != nil {
					t.Fatal(err)
				}
				p := randParams(f, r, 0.1)
				eps := randNormal(r, es.NoiseLen(S))
				gs, gi := make([]float64, len(p)), make([]float64, len(p))
				vs, vi := es.Evaluate(p, eps, gs), ei.Evaluate(p, eps, gi)
				label := fmt.Sprintf("%s %+v batched=%v", name, o, es.bfam != nil)
				if !close(vs, vi, 1e-12) || math.IsNaN(vs) {
					t.Errorf("%s: value %.17g through DrawScore, %.17g through LogDensity", label, vs, vi)
				}
				bad := 0
				for i := range gi {
					if !close(gs[i], gi[i], tol) || math.IsNaN(gs[i]) {
						if bad++; bad <= 5 {
							t.Errorf("%s: ∂/∂φ[%d]: %.17g through DrawScore, %.17g through LogDensity", label, i, gs[i], gi[i])
						}
					}
				}
			}
		}
	}
}

// failingScore is a flow family (batched draws included) whose DrawScore always fails, so that
// the Estimator falls back to LogDensity at the draw.
type failingScore struct{ *family.Flow }

func (failingScore) DrawScore(_, _, _, _ []float64) (float64, error) {
	return 0, fmt.Errorf("objective: test: no score")
}

// TestDrawScoreFailureFallsBack: when DrawScore fails (a singular Jacobian, say) the draw's log q
// is recorded through LogDensity instead, per draw and batched, so the value and the gradient
// are those of the path without DrawScore (the per-draw path through LogDensity): exactly per
// draw, to 1e-10 relative batched (the S terms summed in another order, as TestBatchMatchesPerDraw).
func TestDrawScoreFailureFallsBack(t *testing.T) {
	tg := zoo.EightSchools()
	f := batchFamilies(tg.Dim())["bernstein_ar"].(*family.Flow)
	r := rng.New(37, 0)
	p := randParams(f, r, 0.1)
	ei, err := New(perDraw{tg}, noScore{f}, Options{STL: true})
	if err != nil {
		t.Fatal(err)
	}
	eps := randNormal(r, ei.NoiseLen(4))
	gi := make([]float64, len(p))
	vi := ei.Evaluate(p, eps, gi)
	for _, tgt := range []model.Target{tg, perDraw{tg}} {
		ef, err := New(tgt, failingScore{f}, Options{STL: true})
		if err != nil {
			t.Fatal(err)
		}
		batched := ef.bfam != nil
		if ef.dscore == nil || batched != (tgt == model.Target(tg)) {
			t.Fatalf("DrawScore used: %v, batched: %v", ef.dscore != nil, batched)
		}
		tol := 0.0
		if batched {
			tol = 1e-10
		}
		gf := make([]float64, len(p))
		if vf := ef.Evaluate(p, eps, gf); !close(vf, vi, tol) {
			t.Errorf("batched=%v: value %.17g with the failing DrawScore, %.17g without", batched, vf, vi)
		}
		for i := range gi {
			if !close(gf[i], gi[i], tol) {
				t.Errorf("batched=%v: ∂/∂φ[%d] = %.17g with the failing DrawScore, %.17g without", batched, i, gf[i], gi[i])
				break
			}
		}
	}
}
