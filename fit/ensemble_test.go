package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
)

// twoModes is the 1-D target p(z) = w·N(z; −a, 1) + (1 − w)·N(z; a, 1), normalised (log Z = 0):
// two modes 2a apart with masses w and 1 − w.
type twoModes struct{ a, w float64 }

func (g twoModes) Dim() int { return 1 }

func (g twoModes) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	c := -0.5 * math.Log(2*math.Pi)
	l := t.AddC(t.MulC(t.Square(t.AddC(z, g.a)), -0.5), c+math.Log(g.w))
	r := t.AddC(t.MulC(t.Square(t.AddC(z, -g.a)), -0.5), c+math.Log(1-g.w))
	return t.LogSumExp(t.Concat(l, r))
}

// ensembleRecipe is a small, fast meanfield ensemble recipe of S members.
func ensembleRecipe(S int, seed uint64) Recipe {
	r := DefaultRecipe(KindMeanField)
	r.Seed, r.MaxIter, r.DiagDraws = seed, 600, 1000
	r.Ensemble = DefaultEnsemble(S)
	return r
}

// TestEnsembleSeparatedModes fits one member in each mode of twoModes (starts at ±5) and checks
// the ensemble's numbers against their exact values: the members are then (almost exactly) the
// two components, so the JSD of the uniform mixture is log 2, MISELBO_1 with uniform weights is
// −KL(q_unif ‖ p) = −Σ ½ log(½/w_s) and, with evidence weights, the weights are the masses
// (0.25, 0.75) and MISELBO is log Z = 0. The components overlap by less than 1e-6 of their mass
// (Φ(−5)), far below the Monte Carlo error. Tolerances are 4.5 standard errors (normal
// approximation: false-failure rate < 1e-5 per check).
func TestEnsembleSeparatedModes(t *testing.T) {
	g := twoModes{a: 5, w: 0.25}
	r := ensembleRecipe(2, 3)
	r.Ensemble.Starts = [][]float64{{-5}, {5}}
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	en := res.Ensemble
	if en == nil || len(en.Members) != 2 {
		t.Fatalf("no ensemble of 2 in the result: %+v", en)
	}
	tol := func(se float64) float64 { return 4.5 * se }
	if d := en.JSD - math.Ln2; math.Abs(d) > tol(en.JSDSE)+1e-6 {
		t.Errorf("JSD %g ± %g, want log 2 = %g", en.JSD, en.JSDSE, math.Ln2)
	}
	if d := en.MISELBO1 - en.MeanELBO - en.JSD; math.Abs(d) > 1e-12 {
		t.Errorf("MISELBO_1 − mean ELBO − JSD = %g, want 0 (the identity holds on the same draws)", d)
	}
	wantMIS := -(0.5*math.Log(0.5/0.25) + 0.5*math.Log(0.5/0.75))
	if d := en.MISELBO1 - wantMIS; math.Abs(d) > tol(en.MISELBO1SE) {
		t.Errorf("uniform MISELBO_1 %g ± %g, want −KL(q_unif‖p) = %g", en.MISELBO1, en.MISELBO1SE, wantMIS)
	}
	// Each member is N(±5, 1) up to its fit: its ELBO is log w_s (the mass it covers).
	for s, want := range []float64{math.Log(0.25), math.Log(0.75)} {
		if d := en.ELBO[s] - want; math.Abs(d) > 0.02 {
			t.Errorf("member %d ELBO %g, want log w = %g", s, en.ELBO[s], want)
		}
	}
	if res.KHat > 0.5 {
		t.Errorf("mixture k̂ %g: the mixture of the two exact components should be reliable", res.KHat)
	}

	r.Ensemble.Weights = WeightsEvidence
	ev, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	w := ev.Ensemble.Weights
	if !strings.HasPrefix(ev.Ensemble.WeightNote, "fitted to the evidence") {
		t.Errorf("evidence weights not kept for separated modes: %s", ev.Ensemble.WeightNote)
	}
	// The fitted weights estimate the masses; their Monte Carlo error is that of
	// exp(ELBO_s)-ratios on 250 draws of nearly exact members, far below 0.02.
	if math.Abs(w[0]-0.25) > 0.02 || math.Abs(w[1]-0.75) > 0.02 {
		t.Errorf("evidence weights %v, want the masses (0.25, 0.75)", w)
	}
	if b := ev.Ensemble; math.Abs(b.MISELBO) > 0.02 || math.Abs(b.MISELBO1) > 0.02 {
		t.Errorf("evidence-weighted MISELBO_%d %g, MISELBO_1 %g, want log Z = 0", b.L, b.MISELBO, b.MISELBO1)
	}
	if ev.ELBO <= res.ELBO {
		t.Errorf("mixture ELBO with evidence weights %g, not above the uniform mixture's %g", ev.ELBO, res.ELBO)
	}
}

// TestEnsembleMISELBOAboveMeanELBO: on a unimodal target whose members overlap, MISELBO_L is
// at least the mean ELBO (Theorem 1 for L = 1: the difference is the JSD ≥ 0; for L > 1
// MISELBO_L ≥ MISELBO_1 in expectation) and the JSD lies in [0, log S]. The JSD estimate is a
// mean of log q_s − log q_mix over the same draws; it may fall below 0 by Monte Carlo error, so
// the lower bounds allow 4.5 standard errors (false-failure rate < 1e-5 each).
func TestEnsembleMISELBOAboveMeanELBO(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.8}
	r := ensembleRecipe(3, 5)
	r.Init.Method, r.Init.Starts = InitMethodZero, 1 // members started at N(0, 0.1²): the mean field ones differ
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Ensemble
	if b.JSD < -4.5*b.JSDSE || b.JSD > math.Log(3)+4.5*b.JSDSE {
		t.Errorf("JSD %g ± %g outside [0, log 3]", b.JSD, b.JSDSE)
	}
	if b.MISELBO1 < b.MeanELBO-4.5*b.JSDSE {
		t.Errorf("MISELBO_1 %g below the mean ELBO %g", b.MISELBO1, b.MeanELBO)
	}
	if b.MISELBO < b.MeanELBO-4.5*math.Hypot(b.MISELBOSE, b.MeanELBOSE) {
		t.Errorf("MISELBO_%d %g below the mean ELBO %g", b.L, b.MISELBO, b.MeanELBO)
	}
	if b.MeanIWELBO < b.MeanELBO-4.5*math.Hypot(b.IWELBOSE, b.MeanELBOSE) {
		t.Errorf("mean IWELBO_%d %g below the mean ELBO %g", b.L, b.MeanIWELBO, b.MeanELBO)
	}
	// The mean-field members of a correlated Gaussian all underestimate log Z = 0.
	if b.MISELBO > 4.5*b.MISELBOSE {
		t.Errorf("MISELBO %g above log Z = 0", b.MISELBO)
	}
	mean := (b.ELBO[0] + b.ELBO[1] + b.ELBO[2]) / 3
	if math.Abs(mean-b.MeanELBO) > 1e-12 {
		t.Errorf("mean ELBO %g, the members' mean %g", b.MeanELBO, mean)
	}
	if res.GradEvals <= b.Members[0].GradEvals*3 {
		t.Errorf("GradEvals %d do not include the members' (3 × %d) and the evaluation draws", res.GradEvals, b.Members[0].GradEvals)
	}
}

// TestEnsembleSameForAnyWorkerCount: the members run in parallel; the ensemble is bit-identical
// for 1 and 2 workers (and 3, more workers than some members' steps use).
func TestEnsembleSameForAnyWorkerCount(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.5}
	r := ensembleRecipe(3, 9)
	r.Objective.Samples = 10
	a, err := Run(context.Background(), g, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3} {
		b, err := Run(context.Background(), g, r, WithWorkers(w))
		if err != nil {
			t.Fatal(err)
		}
		sameFit(t, a, b, w)
		if a.Ensemble.MISELBO != b.Ensemble.MISELBO || a.KHat != b.KHat || a.ELBO != b.ELBO || a.GradEvals != b.GradEvals {
			t.Fatalf("ensemble numbers differ between 1 and %d workers", w)
		}
	}
}

// TestEnsembleResume interrupts an ensemble of 3 in its second member, resumes from the
// partial result's State (through JSON) and gets the uninterrupted ensemble bit for bit: the
// first member is kept as it was, the second resumes, the third starts.
func TestEnsembleResume(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.5}
	r := ensembleRecipe(3, 13)
	r.Stop.Tol = 1e-9 // never plateaus: every member runs to max_iter, so the cut falls mid-member
	full, err := Run(context.Background(), g, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stages []string
	stop := WithProgress(func(p Progress) {
		stages = append(stages, p.Stage)
		if strings.Contains(p.Stage, "member 2/3") && p.Iter >= 300 {
			cancel()
		}
	})
	part, err := Run(ctx, g, r, WithWorkers(1), stop)
	if !errors.Is(err, context.Canceled) || part == nil {
		t.Fatalf("interrupted ensemble: err %v, result %v; want the partial result and context.Canceled", err, part)
	}
	if part.Status != Cancelled || !strings.Contains(stages[0], "meanfield member 1/3") {
		t.Fatalf("status %v, first stage %q", part.Status, stages[0])
	}
	es := part.State.Ensemble
	if !es.Members[0].Done || es.Members[1].Done || es.Members[1].State == nil || es.Members[2].State != nil {
		t.Fatalf("state after the cut: member 0 done %v, member 1 done %v (state %v), member 2 state %v",
			es.Members[0].Done, es.Members[1].Done, es.Members[1].State != nil, es.Members[2].State != nil)
	}
	b, err := json.Marshal(part.State)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	rest, err := Run(context.Background(), g, r, WithWorkers(2), WithResume(&st))
	if err != nil {
		t.Fatal(err)
	}
	sameFit(t, full, rest, 2)
	if full.Ensemble.MISELBO != rest.Ensemble.MISELBO || full.KHat != rest.KHat || full.Status != rest.Status || full.Iterations != rest.Iterations {
		t.Fatalf("resumed ensemble: MISELBO %v k̂ %v %v/%d, uninterrupted %v %v %v/%d",
			rest.Ensemble.MISELBO, rest.KHat, rest.Status, rest.Iterations, full.Ensemble.MISELBO, full.KHat, full.Status, full.Iterations)
	}
	for s := range 3 {
		if a, c := full.Ensemble.Members[s], rest.Ensemble.Members[s]; a.ELBO != c.ELBO || a.Reason != c.Reason || a.LogP[7] != c.LogP[7] {
			t.Fatalf("member %d differs after resume", s)
		}
	}
	bad := ensembleRecipe(2, 13)
	if _, err := Run(context.Background(), g, bad, WithResume(&st)); err == nil || !strings.Contains(err.Error(), "ensemble.members = 2") {
		t.Fatalf("resume with another ensemble size: %v", err)
	}
}

// TestEnsembleSaveAndDraw: an ensemble saves as a mixture (fit.json version 4) that loads and
// draws the ensemble's own diagnostic draws bit for bit; the stratified draws give each of the
// 3 members a third of them.
func TestEnsembleSaveAndDraw(t *testing.T) {
	g := smallModel(t)
	r := ensembleRecipe(3, 21)
	r.Ensemble.Starts = [][]float64{{-1, 0, 0, 0, 0}, {1, 0.5, 0, 0, 0}}
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := NewSaved(res, SaveInfo{Model: "normal", Layout: g.Layout})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sv.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"kind": "mixture"`) || !strings.Contains(buf.String(), `"miselbo": `) {
		t.Fatal("fit.json has no mixture or no bounds")
	}
	back, err := Read("fit.json", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if b := back.Mixture.Bounds; b == nil || float64(b.JSD) != res.Ensemble.JSD || len(b.MemberELBO) != 3 {
		t.Fatalf("saved bounds %+v, the fit's JSD %g", b, res.Ensemble.JSD)
	}
	z, lq := back.Sample(back.Seed(), 30)
	for i := range z {
		if z[i] != res.Draws[i] || lq[i/5] != res.LogQ[i/5] {
			t.Fatalf("value %d of the loaded ensemble's draws %g (log q %g), the fit's %g (%g)", i, z[i], lq[i/5], res.Draws[i], res.LogQ[i/5])
		}
	}
	if back.Recipe == nil || back.Recipe.Ensemble == nil || back.Recipe.Ensemble.Members != 3 {
		t.Fatalf("the saved recipe lost its ensemble: %+v", back.Recipe)
	}
	// A member of another dimension is refused, naming it.
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["mixture"].(map[string]any)["members"].([]any)[1].(map[string]any)["family"].(map[string]any)["dim"] = 2
	b, _ := json.Marshal(doc)
	if _, err := Read("fit.json", bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), `"mixture.members[1].family.dim": 2`) {
		t.Fatalf("a member of dimension 2: %v", err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"version": 4`, `"version": 3`, `field "version": 3, a mixture family needs version 4`},
		{`"weights": [`, `"weights": [-1, `, `field "mixture.weights": 4 weights for 3 members`},
		{`"members": [`, `"members": [],"x": [`, `field "mixture.members": 0 members`},
	} {
		bad := strings.Replace(buf.String(), c.old, c.new, 1)
		if bad == buf.String() {
			t.Fatalf("test setup: %q not in the file", c.old)
		}
		if _, err := Read("fit.json", strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
}

// TestEnsembleBadInput: every bad ensemble value is refused by Validate or Run, naming the field.
func TestEnsembleBadInput(t *testing.T) {
	for _, c := range []struct {
		field string
		edit  func(*EnsembleRecipe)
	}{
		{"ensemble.members", func(e *EnsembleRecipe) { e.Members = 0 }},
		{"ensemble.members", func(e *EnsembleRecipe) { e.Members = MaxEnsembleMembers + 1 }},
		{"ensemble.l", func(e *EnsembleRecipe) { e.L = 0 }},
		{"ensemble.l", func(e *EnsembleRecipe) { e.L = -3 }},
		{"ensemble.l", func(e *EnsembleRecipe) { e.L = MaxSamples + 1 }},
		{"ensemble.l", func(e *EnsembleRecipe) { e.Members, e.L = 64, 10000 }},
		{"ensemble.weights", func(e *EnsembleRecipe) { e.Weights = "stacked" }},
		{"ensemble.starts", func(e *EnsembleRecipe) { e.Starts = [][]float64{{0, 0}, {0, 0}, {0, 0}, {0, 0}} }},
		{"ensemble.starts[0][1]", func(e *EnsembleRecipe) { e.Starts = [][]float64{{0, math.NaN()}} }},
	} {
		r := ensembleRecipe(3, 1)
		c.edit(r.Ensemble)
		err := r.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: Validate: %v, want a FieldError for %s", c.field, err, c.field)
		}
	}
	r := ensembleRecipe(3, 1)
	r.Ensemble.Starts = [][]float64{{0, 0, 0}}
	_, err := Run(context.Background(), gauss2{sd: [2]float64{1, 1}}, r)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "ensemble.starts[0]" || !strings.Contains(err.Error(), "has 3 values, the target's dimension is 2") {
		t.Errorf("start of the wrong length: %v", err)
	}
	if _, err := family.NewMixture([]family.Family{family.NewMeanField(2), family.NewMeanField(3)}, nil); err == nil || !strings.Contains(err.Error(), "member 1 has dimension 3") {
		t.Errorf("members of different dimensions: %v", err)
	}
}

var _ model.Target = twoModes{}

// FuzzReadMixture is FuzzRead (save_test.go) from saved mixtures: Read of any bytes either fails
// or gives a mixture that draws, with memory bounded by the input's length.
func FuzzReadMixture(f *testing.F) {
	member := `{"family":{"kind":"meanfield","dim":1,"positivity":"exp"},"params":[%s,0],"shift":[0],"scale":[1],"scale_is_diagonal":true}`
	for i, w := range []string{"0.5,0.5", "0,1", "1e308,1e308"} {
		doc := `{"format":"vigo-fit","version":4,"family":{"kind":"mixture","dim":1},"params":[0,0,1,0],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"a","transform":"identity"}],"mixture":{"weights":[` +
			w + `],"members":[` + strings.Replace(member, "%s", "0", 1) + `,` + strings.Replace(member, "%s", "1", 1) + `]}}`
		if _, err := Read("seed.json", strings.NewReader(doc)); (err == nil) != (i < 2) {
			f.Fatalf("seed %d (weights %s): %v", i, w, err)
		}
		f.Add(doc)
	}
	f.Fuzz(fuzzRead)
}

// TestEnsembleOfFlows: members of a flow family (warm-started realnvp) save into the mixture
// and load back with the same draws, and a finished flow member is restored on resume exactly.
func TestEnsembleOfFlows(t *testing.T) {
	g := smallModel(t)
	r := DefaultRecipe(KindRealNVP)
	r.Seed, r.MaxIter, r.DiagDraws = 4, 60, 200
	r.Family.Flow = &FlowOptions{Layers: 2, Hidden: []int{8}}
	r.Ensemble = DefaultEnsemble(2)
	res, err := Run(context.Background(), g, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := NewSaved(res, SaveInfo{Model: "small", Layout: g.Layout})
	if err != nil {
		t.Fatal(err)
	}
	back := writeRead(t, sv)
	if back.Mixture.Members[1].Family.Kind != KindFlow {
		t.Fatalf("member 1 saved as %q, want a flow", back.Mixture.Members[1].Family.Kind)
	}
	z, lq := back.Sample(back.Seed(), 10)
	for i := range lq {
		if lq[i] != res.LogQ[i] || z[i*5] != res.Draws[i*5] {
			t.Fatalf("draw %d of the loaded flow ensemble differs from the fit's", i)
		}
	}
	// Every member done: resuming rebuilds both without fitting, to the same ensemble.
	again, err := Run(context.Background(), g, r, WithResume(res.State))
	if err != nil {
		t.Fatal(err)
	}
	sameFit(t, res, again, 1)
	if again.Ensemble.MISELBO != res.Ensemble.MISELBO || again.GradEvals != res.GradEvals {
		t.Fatalf("restored flow ensemble: MISELBO %g, grad evals %d; fitted %g, %d", again.Ensemble.MISELBO, again.GradEvals, res.Ensemble.MISELBO, res.GradEvals)
	}
}
