package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

func TestDefaultRecipeIsValidForEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		r := DefaultRecipe(k)
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		// Issue 17: the flows start at the Laplace approximation (WarmNone) like the Gaussians;
		// PreviousFlowRecipe keeps the warm start of before.
		if r.WarmStart != WarmNone || (IsFlowKind(k) && PreviousFlowRecipe(k).WarmStart != WarmFullRank) {
			t.Errorf("%s: warm start %q", k, r.WarmStart)
		}
		if p := PreviousFlowRecipe(k); p.Validate() != nil {
			t.Errorf("%s: previous flow recipe: %v", k, p.Validate())
		}
	}
	r := DefaultRecipe("gaussian")
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), `family.kind = "gaussian"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// Every bad value is refused with an error naming its JSON field; NaN and ±Inf included.
func TestRecipeValidateNamesTheField(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		field string
		set   func(r *Recipe)
	}{
		{"version", func(r *Recipe) { r.Version = RecipeVersion + 1 }},
		{"family.rank", func(r *Recipe) { r.Family.Rank = 2 }}, // on meanfield
		{"family.flow", func(r *Recipe) { r.Family.Flow = &FlowOptions{} }},
		{"objective.estimator", func(r *Recipe) { r.Objective.Estimator = "score" }},
		{"objective.samples", func(r *Recipe) { r.Objective.Samples = 0 }},
		{"objective.k", func(r *Recipe) { r.Objective.K = 4 }}, // with stl
		{"objective.k", func(r *Recipe) { r.Objective.K = 0 }},
		{"optimizer.name", func(r *Recipe) { r.Optimizer.Name = "sgd" }},
		{"optimizer.lr", func(r *Recipe) { r.Optimizer.LR = nan }},
		{"optimizer.lr", func(r *Recipe) { r.Optimizer.LR = inf }},
		{"optimizer.lr", func(r *Recipe) { r.Optimizer.LR = -0.1 }},
		{"stop.rule", func(r *Recipe) { r.Stop.Rule = "never" }},
		{"stop.eval_every", func(r *Recipe) { r.Stop.EvalEvery = 0 }},
		{"stop.eval_samples", func(r *Recipe) { r.Stop.EvalSamples = -1 }},
		{"stop.window", func(r *Recipe) { r.Stop.Window = 1 }},
		{"stop.window", func(r *Recipe) { r.Stop.Rule, r.Stop.Window = RuleTrend, 2 }},
		{"stop.tol", func(r *Recipe) { r.Stop.Tol = nan }},
		{"stop.tol", func(r *Recipe) { r.Stop.Tol = -inf }},
		{"stop.decays", func(r *Recipe) { r.Stop.Decays = -1 }},
		{"stop.trend_z", func(r *Recipe) { r.Stop.TrendZ = inf }},
		{"stop.trend_z", func(r *Recipe) { r.Stop.TrendZ = 0 }}, // Config would read 0 as 1.645
		{"stop.average", func(r *Recipe) { r.Stop.Average = -5 }},
		{"max_iter", func(r *Recipe) { r.MaxIter = 0 }},
		{"warm_start", func(r *Recipe) { r.WarmStart = "meanfield" }},
		{"init.method", func(r *Recipe) { r.Init.Method = "random" }},
		{"init.scale", func(r *Recipe) { r.Init.Scale = nan }},
		{"init.iter", func(r *Recipe) { r.Init.Iter = 0 }},
		{"init.point[1]", func(r *Recipe) { r.Init.Point = []float64{0, inf} }},
		{"diag_draws", func(r *Recipe) { r.DiagDraws = 1 }},
		{"nan", func(r *Recipe) { r.NaN = "ignore" }},
		{"max_skips", func(r *Recipe) { r.MaxSkips = 0 }},
	}
	for _, c := range cases {
		r := DefaultRecipe(KindMeanField)
		c.set(&r)
		err := r.Validate()
		var fe *FieldError
		if err == nil || !strings.Contains(err.Error(), c.field+" = ") || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v (field %+v)", c.field, err, fe)
		}
	}
	r := DefaultRecipe(KindBernstein)
	r.Family.Flow.Degree = -3
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "family.flow") || !strings.Contains(err.Error(), "degree") {
		t.Errorf("bad flow degree: %v", err)
	}
	r = DefaultRecipe(KindLowRank)
	r.Family.Rank = 5
	if _, err := Run(context.Background(), target(), r); err == nil || !strings.Contains(err.Error(), "family.rank = 5") {
		t.Errorf("rank above the dimension: %v", err)
	}
}

// The JSON form round-trips exactly and uses the documented snake_case names.
func TestRecipeJSONRoundTrip(t *testing.T) {
	r := DefaultRecipe(KindBernstein)
	r.Family.Flow = &FlowOptions{Degree: 30, Hidden: []int{8, 8}, Affine: AffineLast}
	r.Init.Point = []float64{0.1, -2}
	r.WarmStart = WarmFullRank // not the default since issue 17; the key must still be written
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"max_iter":`, `"warm_start":"fullrank"`, `"diag_draws":`, `"eval_samples":`, `"trend_z":`, `"estimator":"stl"`, `"affine":"last"`, `"degree":30`, `"point":[0.1,-2]`, `"antithetic":true`, `"rule":"noise"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
	var back Recipe
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, want %+v", back, r)
	}
}

// Run is Fit with the recipe's family, estimator and loop settings: the same recipe gives the
// same fit bit for bit whichever entry point assembled it.
func TestRunIsFitWithTheRecipesPieces(t *testing.T) {
	r := DefaultRecipe(KindFullRank)
	r.Seed, r.MaxIter, r.DiagDraws = 4, 600, 200
	a, err := Run(context.Background(), target(), r, WithWorkers(2))
	if err != nil {
		t.Fatal(err)
	}
	fam, err := r.Family.NewFamily(2, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Fit(context.Background(), target(), fam, r.Objective.options(), r.Config(1))
	if err != nil {
		t.Fatal(err)
	}
	sameFit(t, a, b, 2)
	if a.Recipe == nil || !reflect.DeepEqual(*a.Recipe, r) {
		t.Errorf("result's recipe %+v", a.Recipe)
	}
	if !r.Objective.options().STL {
		t.Error("the Gaussians' default estimator is not STL")
	}
}

// A warm-started flow recipe runs its full-rank stage first and counts it.
func TestRunWarmStartCountsTheGaussianStage(t *testing.T) {
	r := DefaultRecipe(KindRealNVP)
	r.Family.Flow.Hidden = []int{4}
	r.Seed, r.MaxIter, r.DiagDraws = 2, 200, 100
	r.WarmStart = WarmFullRank // the flows' default before issue 17
	res, err := Run(context.Background(), target(), r)
	if err != nil {
		t.Fatal(err)
	}
	g := res.WarmStart
	if g == nil || g.Recipe == nil || g.Recipe.Family.Kind != KindFullRank || !strings.Contains(res.InitNote, "warm start") {
		t.Fatalf("warm stage %+v, init note %q", g, res.InitNote)
	}
	if res.GradEvals <= g.GradEvals || res.Elapsed < g.Elapsed {
		t.Errorf("totals %d / %v exclude the Gaussian stage's %d / %v", res.GradEvals, res.Elapsed, g.GradEvals, g.Elapsed)
	}
}

// The initial point: InitMethodZero centres q at it (checked before the first step); the
// Laplace search started there finds the same mode as from 0.
func TestRunInitPoint(t *testing.T) {
	g := gauss2{m: [2]float64{1, 2}, sd: [2]float64{1, 3}, rho: 0.3}
	r := DefaultRecipe(KindMeanField)
	r.Init = InitRecipe{Method: InitMethodZero, Scale: 0.1, Iter: 1000, Starts: 1, Point: []float64{5, -7}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, g, r)
	if !errors.Is(err, context.Canceled) || res == nil || res.Status != Cancelled {
		t.Fatalf("cancelled run: %v, %+v", err, res)
	}
	mean, cov := make([]float64, 2), make([]float64, 4)
	res.Family.Moments(res.Params, mean, cov)
	if math.Abs(mean[0]-5) > 1e-12 || math.Abs(mean[1]+7) > 1e-12 || math.Abs(math.Sqrt(cov[0])-0.1) > 1e-12 {
		t.Errorf("start mean %v, sd %v, want (5, −7) and 0.1", mean, math.Sqrt(cov[0]))
	}
	r.Init.Method, r.MaxIter = InitMethodLaplace, 1
	res, err = Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.State.Shift[0]-1) > 1e-5 || math.Abs(res.State.Shift[1]-2) > 1e-5 {
		t.Errorf("Laplace from (5, −7): mode %v, want (1, 2)", res.State.Shift)
	}
	r.Init.Point = []float64{1}
	if _, err := Run(context.Background(), g, r); err == nil || !strings.Contains(err.Error(), "init.point has 1 values") {
		t.Errorf("short init point: %v", err)
	}
}

// RMSprop (the BF-VI paper's optimiser) fits the correlated Gaussian: full rank is exact, so
// the ELBO is log Z = 0 up to its Monte Carlo error (0.05 is > 10 MCSE at 1,000 draws).
func TestRunRMSprop(t *testing.T) {
	g := gauss2{m: [2]float64{1, 2}, sd: [2]float64{1, 3}, rho: 0.8}
	r := DefaultRecipe(KindFullRank)
	r.Optimizer = OptimizerRecipe{Name: OptRMSprop, LR: 0.005}
	r.Init.Method, r.Init.Starts = InitMethodZero, 1
	r.Seed, r.MaxIter = 3, 8000
	res, err := Run(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.ELBO) > 0.05 {
		t.Errorf("RMSprop full-rank ELBO %v ± %v, want 0", res.ELBO, res.ELBOSE)
	}
}

// The concurrency rule of model.Target: Density is called from several goroutines at once.
// A model.Model fitted with 4 workers — run this under go test -race — must give the fit of
// 1 worker bit for bit.
func TestRunModelWithSeveralWorkers(t *testing.T) {
	lay, err := model.NewLayout(model.Param{Name: "mu"}, model.Param{Name: "x", Dims: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	y := []float64{0.5, -1, 2}
	m := &model.Model{Layout: lay, Density: func(tp *ad.Tape, p []ad.Var) ad.Var {
		lp := density.Normal(tp, p[1], p[0], tp.Const(1))
		lp = tp.Add(lp, density.Normal(tp, tp.ConstRef(y), p[1], tp.Const(0.5)))
		return tp.Add(lp, density.Normal(tp, p[0], tp.Const(0), tp.Const(3)))
	}}
	r := DefaultRecipe(KindFullRank)
	r.MaxIter, r.DiagDraws = 400, 200
	a, err := Run(context.Background(), m, r, WithWorkers(4))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), m, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	sameFit(t, a, b, 4)
}

// Recipe.Config runs the values written: Config's "zero means the default" must never replace
// a value a valid recipe holds (Decays and Average 0 included).
func TestRecipeConfigKeepsEveryValue(t *testing.T) {
	for _, k := range Kinds() {
		r := DefaultRecipe(k)
		r.Stop.Decays, r.Stop.Average = 0, 0
		c := r.Config(1)
		d := c.withDefaults()
		if !reflect.DeepEqual(c, d) {
			t.Errorf("%s: Config %+v\nbecomes %+v with Fit's defaults", k, c, d)
		}
	}
}
