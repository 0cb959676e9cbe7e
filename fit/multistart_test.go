package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
)

// mix2 is the 2-D mixture Σ_k w_k N(z; μ_k, s_k² I) (normalised: log Z = 0, and the mass of
// component k is w_k).
type mix2 struct {
	w  [2]float64
	mu [2][2]float64
	s  [2]float64
}

func (m mix2) Dim() int { return 2 }

func (m mix2) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	var lps [2]ad.Var
	for k := range 2 {
		u := t.MulC(t.Sub(z, t.Const(m.mu[k][0], m.mu[k][1])), 1/m.s[k])
		lps[k] = t.AddC(density.Normal(t, u, t.Const(0), t.Const(1)), math.Log(m.w[k])-2*math.Log(m.s[k]))
	}
	return t.LogSumExp(t.Concat(lps[0], lps[1]))
}

// minorAtZero is a mixture whose minor component (weight 0.2) holds z = 0 in its basin and
// whose major one (weight 0.8) sits 9.2 sds away, inside the uniform(−2, 2)² start box.
func minorAtZero() mix2 {
	return mix2{w: [2]float64{0.2, 0.8}, mu: [2][2]float64{{0.3, 0.3}, {1.6, -1.6}}, s: [2]float64{0.25, 0.25}}
}

// mixTol is TestLaplaceEvidence's tolerance for component k of m (equal scales).
func mixTol(m mix2, k int) float64 {
	j := 1 - k
	d2 := (math.Pow(m.mu[0][0]-m.mu[1][0], 2) + math.Pow(m.mu[0][1]-m.mu[1][1], 2)) / (m.s[0] * m.s[0])
	eps := m.w[j] / m.w[k] * math.Exp(-d2/2)
	return 2*eps*(1+d2) + 1e-9 // + the finite-difference Hessian's rounding (see the Gaussian case)
}

func near(z []float64, mu [2]float64, tol float64) bool {
	return math.Abs(z[0]-mu[0]) < tol && math.Abs(z[1]-mu[1]) < tol
}

// The start at z = 0 climbs to the minor mode; eight starts find the major one, start q there,
// and the verdict says the posterior is multimodal (the modes are 1.4 nats apart) and is not
// reassuring, whatever k̂ says.
func TestMultiStartFindsTheMajorMode(t *testing.T) {
	g := minorAtZero()
	r := DefaultRecipe(KindMeanField)
	r.Init.Starts = 1
	one, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if !near(one.State.Shift, g.mu[0], 0.05) {
		t.Fatalf("one start: q starts at %v, want the minor mode %v (the test's premise)", one.State.Shift, g.mu[0])
	}
	if !strings.HasPrefix(one.Verdict, "one start (other modes not looked for); ") {
		t.Errorf("one start: verdict %q", one.Verdict)
	}
	r.Init.Starts = 8
	for seed := uint64(1); seed <= 3; seed++ {
		r.Seed = seed
		res, err := Run(context.Background(), g, r)
		if err != nil {
			t.Fatal(err)
		}
		if !near(res.State.Shift, g.mu[1], 0.05) {
			t.Errorf("seed %d: 8 starts: q starts at %v, want the major mode %v", seed, res.State.Shift, g.mu[1])
		}
		// 8 starts, doubled (up to starts_max 64) while a mode was reached by one start only.
		if len(res.Modes) != 2 || res.Starts < 8 || res.Starts > DefaultStartsMax || !near(res.Modes[0].Z, g.mu[1], 0.05) || !near(res.Modes[1].Z, g.mu[0], 0.05) {
			t.Fatalf("seed %d: %d starts, modes %+v", seed, res.Starts, res.Modes)
		}
		if n := res.Modes[0].Count + res.Modes[1].Count + res.StartsFailed; n != res.Starts {
			t.Errorf("seed %d: counts add to %d, want %d", seed, n, res.Starts)
		}
		if unseen(res.Modes, res.Starts) > UnseenModeTol && res.Starts < DefaultStartsMax {
			t.Errorf("seed %d: stopped at %d starts with the unseen estimate %v", seed, res.Starts, unseen(res.Modes, res.Starts))
		}
		a := Assess(res)
		if a.Reassuring || a.Modes != 2 || a.Uncovered != 1 || !strings.Contains(res.Verdict, "multimodal") ||
			!strings.Contains(res.Verdict, "cannot see mass q does not cover") || res.Verdict != a.Text {
			t.Errorf("seed %d: assessment %+v, verdict %q", seed, a, res.Verdict)
		}
		// The Laplace evidences are log 0.8 and log 0.2 (see TestLaplaceEvidence for the
		// tolerance); the gap is log 4.
		if math.Abs(a.Gap-math.Log(4)) > mixTol(g, 0)+mixTol(g, 1) {
			t.Errorf("seed %d: gap %v, want log 4", seed, a.Gap)
		}
	}
}

// A minor mode with e⁻¹⁵ of the mass, 5 sds from the major one: found, reported, and judged
// negligible (shift e⁻¹⁵·5 ≪ ModeShiftTol), so the k̂ verdict stands.
func TestDominatedModeKeepsTheVerdict(t *testing.T) {
	g := mix2{w: [2]float64{1 - math.Exp(-15), math.Exp(-15)}, mu: [2][2]float64{{-1, -1}, {1.5, 1.5}}, s: [2]float64{0.5, 0.3}}
	r := DefaultRecipe(KindMeanField)
	r.Init.Starts = 16
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Modes) != 2 || !near(res.Modes[0].Z, g.mu[0], 0.01) {
		t.Fatalf("modes %+v", res.Modes)
	}
	a := Assess(res)
	if !a.Reassuring || a.Uncovered != 0 || math.Abs(a.Gap-15) > 0.1 || !strings.Contains(res.Verdict, "nats apart") ||
		!strings.HasSuffix(res.Verdict, res.KHatVerdict) {
		t.Errorf("assessment %+v, verdict %q (k̂ verdict %q)", a, res.Verdict, res.KHatVerdict)
	}
}

// Laplace evidence: exact for a Gaussian (log Z = 0 for gauss2, which is normalised; the
// Hessian is a central difference of a gradient that is linear, so only rounding, ≈ 1e-11
// relative, enters); for a two-component mixture with separated components of equal scale s,
// log w_k up to the other component's share of the density at the mode,
// ε = (w_j/w_k)·exp(−Δ²/(2s²)), which enters log p(z*) as ≈ ε and the curvature as
// ≈ ε·Δ²/s² (the other component's Hessian there is ∝ its squared score): the tolerance
// 2ε(1 + Δ²/s²) bounds both, and 1e-9 covers the rounding of the finite-difference Hessian.
func TestLaplaceEvidence(t *testing.T) {
	g := target()
	lap, err := laplace(g, []float64{0, 0}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lap.LogEvidence) > 1e-6 || lap.DiagHessian {
		t.Errorf("Gaussian: log evidence %v, want 0", lap.LogEvidence)
	}
	m := minorAtZero()
	for k, z0 := range [][]float64{{0, 0}, {1.6, -1.6}} {
		lap, err := laplace(m, z0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if d := lap.LogEvidence - math.Log(m.w[k]); math.Abs(d) > mixTol(m, k) {
			t.Errorf("mixture component %d: log evidence %v, want log %v (off by %.2g)", k, lap.LogEvidence, m.w[k], d)
		}
	}
}

// The starts depend on the seed and not on the workers: 1 and 2 workers give the same modes
// and the same fit bit for bit; another seed gives other random starts.
func TestMultiStartWorkers(t *testing.T) {
	g := minorAtZero()
	r := DefaultRecipe(KindFullRank)
	r.Init.Starts = 7
	a, err := Run(context.Background(), g, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), g, r, WithWorkers(2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Params, b.Params) || a.GradEvals != b.GradEvals || a.Verdict != b.Verdict || len(a.Modes) != len(b.Modes) {
		t.Fatalf("workers 1 and 2 differ: %v vs %v, %d vs %d evals", a.Params, b.Params, a.GradEvals, b.GradEvals)
	}
	for i := range a.Modes {
		if !slices.Equal(a.Modes[i].Z, b.Modes[i].Z) || a.Modes[i].Count != b.Modes[i].Count || a.Modes[i].LogEvidence != b.Modes[i].LogEvidence {
			t.Errorf("mode %d differs: %+v vs %+v", i, a.Modes[i], b.Modes[i])
		}
	}
	c1 := startPoints(Config{Seed: 1, Starts: 3}, 2)
	c2 := startPoints(Config{Seed: 2, Starts: 3}, 2)
	if !slices.Equal(c1[0], []float64{0, 0}) || slices.Equal(c1[1], c2[1]) || slices.Equal(c1[1], c1[2]) {
		t.Errorf("starts %v (seed 1) and %v (seed 2)", c1, c2)
	}
	// Random starts k = 1, 2, 3, … have half-widths 2, 4, 8, 2, …: in the box, and not all
	// inside the smaller one (probability 2^−(d·…) of a false failure: none with these seeds).
	c3 := startPoints(Config{Seed: 1, Starts: 64}, 2)
	wide := false
	for k, z := range c3[1:] {
		r := 2 * float64(int(1)<<(k%3))
		for _, v := range z {
			if !(v > -r && v < r) {
				t.Errorf("random start %d: %v outside (−%g, %g)", k+1, z, r, r)
			}
			wide = wide || math.Abs(v) > 4
		}
	}
	if !wide {
		t.Error("no random start outside (−4, 4) in 63")
	}
}

// An explicit init.starts of 1 is the fit of before multi-start existed: one Laplace search
// from the initial point and q started at it. The reference is built here from laplace alone
// (WithPreconditioner at its mode and scale), so the test pins the fit whatever the multi-start
// code does; and golden values from the code before multi-start pin the numbers.
func TestOneStartIsTheSingleLaplaceFit(t *testing.T) {
	g := minorAtZero()
	for _, kind := range []string{KindMeanField, KindFullRank} {
		r := DefaultRecipe(kind)
		r.Init.Starts = 1
		res, err := Run(context.Background(), g, r)
		if err != nil {
			t.Fatal(err)
		}
		lap, err := laplace(g, []float64{0, 0}, r.Init.Iter)
		if err != nil {
			t.Fatal(err)
		}
		scale, diagOnly := lap.Chol, kind == KindMeanField
		if diagOnly {
			scale = []float64{math.Sqrt(lap.Cov[0]), math.Sqrt(lap.Cov[3])}
		}
		fam, _ := r.Family.NewFamily(2, r.Seed)
		ref, err := Fit(context.Background(), g, fam, r.Objective.options(), r.Config(0), WithPreconditioner(lap.Mode, scale, diagOnly))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Params, ref.Params) || res.ELBO != ref.ELBO || res.KHat != ref.KHat || res.GradEvals != ref.GradEvals+lap.Evals || res.InitNote != lap.Note {
			t.Errorf("%s: one start %v (ELBO %v, %d evals), single Laplace %v (ELBO %v, %d + %d evals)", kind, res.Params, res.ELBO, res.GradEvals, ref.Params, ref.ELBO, ref.GradEvals, lap.Evals)
		}
	}
}

// Bad starts and points are FieldErrors naming the field (and the point's index) and value.
func TestStartsValidate(t *testing.T) {
	g := minorAtZero()
	for _, c := range []struct {
		edit  func(*Recipe)
		field string
		msg   string
	}{
		{func(r *Recipe) { r.Init.Starts = 0 }, "init.starts", "init.starts = 0"},
		{func(r *Recipe) { r.Init.Starts = -3 }, "init.starts", "init.starts = -3"},
		{func(r *Recipe) { r.Init.Starts = MaxStarts + 1 }, "init.starts", "init.starts = 1025"},
		{func(r *Recipe) { r.Init.Starts = 2; r.Init.Points = [][]float64{{1, 1}, {2, 2}} }, "init.starts", "at least 3"},
		{func(r *Recipe) { r.Init.Method = InitMethodZero }, "init.starts", "1 with init.method zero"},
		{func(r *Recipe) { r.Init.Points = [][]float64{{1, 1}, {2, math.NaN()}} }, "init.points[1][1]", "init.points[1][1] = NaN"},
		{func(r *Recipe) { r.Init.Points = [][]float64{{1, 1}, {2}} }, "init.points[1]", "init.points[1] has 1 values"},
	} {
		r := DefaultRecipe(KindMeanField)
		c.edit(&r)
		_, err := Run(context.Background(), g, r)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("want a FieldError on %s with %q, got %v", c.field, c.msg, err)
		}
	}
	if err := (Config{Starts: -1}).withDefaults().validate(); err == nil || !strings.Contains(err.Error(), "Starts=-1") {
		t.Errorf("Config.Starts -1: %v", err)
	}
	if err := (Config{InitPoints: [][]float64{{0}, {math.Inf(1)}}}).withDefaults().validate(); err == nil || !strings.Contains(err.Error(), "InitPoints[1]") {
		t.Errorf("Config.InitPoints: %v", err)
	}
}

// User points are starts 1, 2, …: a point in the major basin finds the major mode.
func TestUserPoints(t *testing.T) {
	g := minorAtZero()
	r := DefaultRecipe(KindMeanField)
	r.Init.Starts, r.Init.Points = 2, [][]float64{{1.5, -1.5}}
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Modes) != 2 || res.Modes[0].First != 1 || !near(res.State.Shift, g.mu[1], 0.05) {
		t.Errorf("modes %+v, q at %v", res.Modes, res.State.Shift)
	}
}

// A version-1 recipe has no init.starts: it validates and runs one start, as when it was
// written; a version-2 recipe round-trips its starts and points through JSON.
func TestRecipeV1HasOneStart(t *testing.T) {
	r := DefaultRecipe(KindMeanField)
	r.Version, r.Init.Starts = 1, 0
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if c := r.Config(1); c.Starts != 1 {
		t.Errorf("v1 recipe: Config.Starts %d, want 1", c.Starts)
	}
	r = DefaultRecipe(KindMeanField)
	r.Init.Starts, r.Init.Points = 5, [][]float64{{1, 2}}
	b, _ := json.Marshal(r)
	var back Recipe
	if err := json.Unmarshal(b, &back); err != nil || back.Init.Starts != 5 || len(back.Init.Points) != 1 || back.Init.Points[0][1] != 2 {
		t.Errorf("round trip: %+v, %v (%s)", back.Init, err, b)
	}
}

// The modes survive the state's JSON (resume) with a NaN log q.
func TestModesJSON(t *testing.T) {
	m := []Mode{{Z: []float64{1, 2}, SD: []float64{0.5, 0.25}, LogDensity: -1, LogEvidence: -0.5, LogQ: math.NaN(), Count: 3, First: 2}}
	st := State{Modes: m, Starts: 4, StartsFailed: 1}
	b, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Modes
	if len(got) != 1 || !math.IsNaN(got[0].LogQ) || got[0].Count != 3 || got[0].First != 2 || got[0].LogEvidence != -0.5 || !slices.Equal(got[0].SD, m[0].SD) || back.Starts != 4 || back.StartsFailed != 1 {
		t.Errorf("round trip %+v (%s)", back, b)
	}
	if !bytes.Contains(b, []byte(`"log_q":null`)) {
		t.Errorf("NaN log q not written as null: %s", b)
	}
}

// A warm-started flow reports its full-rank stage's modes, with log q of the flow.
func TestWarmStartKeepsModes(t *testing.T) {
	g := minorAtZero()
	r := DefaultRecipe(KindFullRank)
	r.Init.Starts = 6
	fr, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := Fit(context.Background(), g, family.NewMeanField(2), objective.Options{STL: true}, Config{Seed: 1, MaxIter: 200}, WithWarmStart(fr))
	if err != nil {
		t.Fatal(err)
	}
	if mf.Starts != 6 || len(mf.Modes) != len(fr.Modes) || math.IsNaN(mf.Modes[0].LogQ) || mf.Verdict != Assess(mf).Text {
		t.Errorf("warm-started fit: starts %d, modes %+v, verdict %q", mf.Starts, mf.Modes, mf.Verdict)
	}
}

// Auto on a two-mode target (masses 0.2 and 0.8, 9.2 sds apart): the Gaussian stages start at
// the major mode and miss the minor one (9.2 sds away: VI does not drift over), so Auto escalates to an ensemble over the two modes
// with weights fitted to the evidence, which covers both; the choice is that ensemble (or a
// later stage covering both), never a single Gaussian, and the totals count every stage.
func TestAutoEscalatesToAnEnsemble(t *testing.T) {
	g := minorAtZero()
	stages := AutoStages(FlowOptions{})[:2]
	var lines []string
	a, err := Auto(context.Background(), g, AutoConfig{Stages: stages}, WithProgress(func(p Progress) {
		if p.Line != "" {
			lines = append(lines, p.Line)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Stages) < 2 || !strings.HasPrefix(a.Stages[1].Family, "ensemble of 2 meanfield") {
		t.Fatalf("stages: %q", lines)
	}
	chosen := a.Stages[a.Chosen]
	if !strings.HasPrefix(chosen.Family, "ensemble of 2") || chosen.Result.Ensemble == nil {
		t.Fatalf("chose %s: %s (%q)", chosen.Family, a.Reason, lines)
	}
	as := Assess(chosen.Result)
	if as.Uncovered != 0 || as.Modes != 2 {
		t.Errorf("chosen ensemble: %+v, verdict %q", as, chosen.Result.Verdict)
	}
	// The evidence weights are the masses up to their Monte Carlo fit.
	if w := chosen.Result.Ensemble.Weights; math.Abs(w[0]-0.8) > 0.05 {
		t.Errorf("weights %v, want (0.8, 0.2)", w)
	}
	total := 0
	for _, s := range a.Stages {
		if s.Result != nil {
			total += s.Result.GradEvals
		}
	}
	if a.GradEvals != total || len(lines) != len(a.Stages) {
		t.Errorf("grad evals %d, stages' sum %d; %d lines for %d stages", a.GradEvals, total, len(lines), len(a.Stages))
	}
	for _, s := range a.Stages {
		if !strings.HasPrefix(s.Family, "ensemble") && Assess(s.Result).Reassuring {
			t.Errorf("%s alone is judged reassuring: %q", s.Family, s.Result.Verdict)
		}
	}
}

// fit.json keeps the multi-start search; a mode of the wrong length or a null in it is
// refused, naming the field.
func TestSavedModes(t *testing.T) {
	m := smallModel(t)
	r := DefaultRecipe(KindMeanField)
	r.MaxIter, r.DiagDraws, r.Init.Starts = 200, 300, 4
	res, err := Run(context.Background(), m, r)
	if err != nil && res == nil {
		t.Fatal(err)
	}
	s, err := NewSaved(res, SaveInfo{Model: "small", Layout: m.Layout})
	if err != nil {
		t.Fatal(err)
	}
	back := writeRead(t, s)
	if back.Starts != 4 || len(back.Modes) != len(res.Modes) || !slices.Equal(back.Modes[0].Z, res.Modes[0].Z) || back.Modes[0].LogQ != res.Modes[0].LogQ {
		t.Fatalf("round trip: %d starts, modes %+v, want %+v", back.Starts, back.Modes, res.Modes)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	i := strings.Index(js, `"z": [`) + len(`"z": [`)
	for _, c := range []struct{ edit, want string }{
		{js[:i] + "null, " + js[i:], `modes[0].z`},
		{lastReplace(js, `"starts": 4`, `"starts": 0`), `field "starts"`}, // the top-level one (the recipe's comes first)
	} {
		if _, err := Read("fit.json", strings.NewReader(c.edit)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %s, got %v", c.want, err)
		}
	}
}

// lastReplace replaces the last occurrence of old in s by new.
func lastReplace(s, old, new string) string {
	i := strings.LastIndex(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

// The importance-sampling gap against a direct computation, and its use: a k̂ in the usable
// band reads usable with a small gap and rough (not reassuring) with a gap above
// RoughGapPerDim·d.
func TestAssessRoughGap(t *testing.T) {
	// Two log weights a and b: log((e^a + e^b)/2) − (a + b)/2 = log cosh((a − b)/2).
	if g := isGap([]float64{1, 3}, []float64{0, 0}); math.Abs(g-math.Log(math.Cosh(1))) > 1e-15 {
		t.Errorf("isGap %v, want log cosh 1", g)
	}
	if g := isGap([]float64{1, math.Inf(-1)}, []float64{0, 0}); !math.IsNaN(g) {
		t.Errorf("isGap with −Inf: %v, want NaN", g)
	}
	aff, err := family.NewAffine(family.NewMeanField(2), []float64{0, 0}, []float64{1, 1}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spread float64 // log weights ±spread: gap log cosh(spread)
		rough  bool
	}{{0.1, false}, {1, true}} {
		n := 1000
		lp, lq := make([]float64, n), make([]float64, n)
		for i := range lp {
			lp[i] = c.spread * float64(2*(i%2)-1)
		}
		res := &Result{Family: aff, KHat: 0.6, LogP: lp, LogQ: lq, KHatVerdict: "k̂ = 0.6: usable"}
		a := Assess(res)
		if a.Rough != c.rough || a.Reassuring == c.rough || (c.rough && !strings.Contains(a.Text, "do not use them unweighted")) {
			t.Errorf("spread %v (gap %.3g, limit %.3g): %+v", c.spread, a.ISGap, 2*RoughGapPerDim, a)
		}
	}
}

// The doubling: a start depends on its index only, so the first starts of a doubled search are
// those of the undoubled one; a search whose modes were each reached by several starts does
// not double, one with singletons doubles until f₁/n ≤ UnseenModeTol or StartsMax.
func TestStartsDoubling(t *testing.T) {
	a := startPoints(Config{Seed: 4, Starts: 4}, 3)
	b := startPoints(Config{Seed: 4, Starts: 8}, 3)
	for k := range a {
		if !slices.Equal(a[k], b[k]) {
			t.Errorf("start %d: %v with 4 starts, %v with 8", k, a[k], b[k])
		}
	}
	g := minorAtZero()
	triggered := 0
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := Config{Seed: seed, Starts: 8, StartsMax: 8}.withDefaults()
		fixed := searchModes(g, cfg)
		if fixed.starts != 8 || fixed.doubled != 0 {
			t.Fatalf("seed %d, StartsMax = Starts: %d starts, doubled %d", seed, fixed.starts, fixed.doubled)
		}
		cfg.StartsMax = 64
		ms := searchModes(g, cfg)
		if unseen(fixed.modes, 8) <= UnseenModeTol {
			if ms.starts != 8 {
				t.Errorf("seed %d: no singleton in 8 starts, yet %d starts", seed, ms.starts)
			}
			continue
		}
		triggered++
		if ms.doubled == 0 || unseen(ms.modes, ms.starts) > UnseenModeTol && ms.starts < 64 {
			t.Errorf("seed %d (a mode reached by one of 8 starts): %d starts, doubled %d, unseen %v", seed, ms.starts, ms.doubled, unseen(ms.modes, ms.starts))
		}
	}
	if triggered == 0 {
		t.Fatal("no seed of 20 had a mode reached by one of 8 starts: the test checks nothing")
	}
	one := searchModes(g, Config{Seed: 2, Starts: 1, StartsMax: 64}.withDefaults())
	if one.starts != 1 {
		t.Errorf("one start doubled to %d", one.starts)
	}
}

// An ensemble without starts of its own spreads its members over the modes of one search:
// on the two-mode target its two members start at the two modes, the recipe it reports records
// them, and the verdict checks the mixture against the modes (it covers both).
func TestEnsembleSpreadsOverTheModes(t *testing.T) {
	g := minorAtZero()
	r := DefaultRecipe(KindMeanField)
	r.Ensemble = DefaultEnsemble(2)
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Recipe.Ensemble.Starts
	if len(st) != 2 || !near(st[0], g.mu[1], 0.05) || !near(st[1], g.mu[0], 0.05) || r.Ensemble.Starts != nil {
		t.Fatalf("starts %v (caller's recipe %v)", st, r.Ensemble.Starts)
	}
	if a := Assess(res); a.Modes != 2 || a.Uncovered != 0 || res.Verdict != a.Text || !strings.Contains(res.Verdict, "q covers them") {
		t.Errorf("assessment %+v, verdict %q", a, res.Verdict)
	}
}
