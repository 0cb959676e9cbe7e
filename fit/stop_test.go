package fit

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/rng"
)

// TestTrendMatchesClosedForm: the least-squares trend of a line is exact, and on a fixed
// noisy window it matches numpy:
//
//	/usr/bin/python3 -c "import numpy as np; y=np.array([0.,1.,0.,2.,1.]); x=np.arange(5.);
//	b,a=np.polyfit(x,y,1); r=y-(a+b*x); sd=np.sqrt(r@r/3); print(b*4, sd/np.sqrt(((x-2)**2).sum())*4, sd)"
//	→ 1.2000000000000004 1.006644591369433 0.7958224257542214
func TestTrendMatchesClosedForm(t *testing.T) {
	g, se, sd := trend([]float64{3, 3.5, 4, 4.5, 5, 5.5})
	// Exact line: rounding only.
	if math.Abs(g-2.5) > 1e-12 || se > 1e-12 || sd > 1e-12 {
		t.Errorf("line: gain %v se %v sd %v, want 2.5 0 0", g, se, sd)
	}
	g, se, sd = trend([]float64{0, 1, 0, 2, 1})
	for _, c := range [][2]float64{{g, 1.2000000000000004}, {se, 1.006644591369433}, {sd, 0.7958224257542214}} {
		// A handful of operations on small integers: rounding ~1e-15.
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Errorf("got %.17g, want %.17g", c[0], c[1])
		}
	}
}

// noisyTrace is y_i = slope·i + N(0, sd²), seeded.
func noisyTrace(n int, slope, sd float64, seed uint64) []float64 {
	s := rng.New(seed, 0)
	y := make([]float64, n)
	for i := range y {
		y[i] = slope*float64(i) + sd*s.NormFloat64()
	}
	return y
}

// firstPlateau slides cfg's window over y and returns the index of the first estimate at which
// the rule fires (−1: never).
func firstPlateau(cfg Config, y []float64) int {
	for i := cfg.Window; i <= len(y); i++ {
		if _, hit, _ := cfg.plateau(y[i-cfg.Window : i]); hit {
			return i - 1
		}
	}
	return -1
}

// TestTrendRuleIgnoresJitterOfARisingTrace: a flow's tracked ELBO rising by 0.02 nats per
// estimate (0.58 nats per 30-estimate window) under 0.2-nat iterate jitter — the situation in
// which the half-means rule on 6 estimates stopped BF-VI after 2,000–5,000 steps — never counts
// as a plateau under StopTrend over 500 estimates (50,000 steps), while the half-means rule
// fires almost at once; a flat trace with the same jitter is a plateau within a few windows.
func TestTrendRuleIgnoresJitterOfARisingTrace(t *testing.T) {
	flow := PreviousFlowRecipe(KindBernstein) // the trend rule: the flows' default before issue 17
	trendCfg := flow.Config(1).withDefaults()
	halves := Config{Tol: FlowTol}.withDefaults()
	if trendCfg.Stop != StopTrend || trendCfg.Window != 30 || halves.Stop != StopHalves || halves.Window != 6 {
		t.Fatalf("defaults: flow %v/%d, Fit %v/%d", trendCfg.Stop, trendCfg.Window, halves.Stop, halves.Window)
	}
	for seed := uint64(1); seed <= 10; seed++ {
		rising := noisyTrace(500, 0.02, 0.2, seed)
		// The window's gain 0.58 is ≈5 s.e. (s.e. ≈ 0.12) above zero; firing needs the
		// estimate below ≈ −0.1, a 5.6-s.e. low one (200 of 200 seeds never fired when the rule
		// was chosen).
		if i := firstPlateau(trendCfg, rising); i >= 0 {
			t.Errorf("seed %d: trend rule fired on a rising trace at estimate %d", seed, i)
		}
		// Half-means on 6: gain ≈ 0.06 ± 0.16, below tol 0.002 in about a third of windows.
		if i := firstPlateau(halves, rising); i < 0 || i > 50 {
			t.Errorf("seed %d: half-means rule fired at %d, expected within 50 estimates", seed, i)
		}
		flat := noisyTrace(500, 0, 0.2, seed)
		// Flat: fires when the estimated gain is ≈0.1 below zero (≈20% of windows); median 37
		// and upper quartile 50 over 200 seeds, so 150 (4 windows) leaves a wide margin.
		if i := firstPlateau(trendCfg, flat); i < 0 || i > 150 {
			t.Errorf("seed %d: trend rule on a flat trace fired at %d, want within 150 estimates", seed, i)
		}
	}
	// Noise-free and flat: the plain confidence rule, gain 0 < tol, at the first full window.
	if i := firstPlateau(trendCfg, noisyTrace(40, 0, 0, 1)); i != trendCfg.Window-1 {
		t.Errorf("constant trace: fired at %d, want %d", i, trendCfg.Window-1)
	}
}

// TestTrendRuleAndAveragingFitAndResume: a mean-field fit with StopTrend and the iterate average
// converges on a Gaussian, says why in words, reports an iterate at least as good as the last
// one by the tracking estimate, and a resumed run equals the uninterrupted one bit for bit
// (parameters, average, status).
func TestTrendRuleAndAveragingFitAndResume(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.5}
	fam := family.NewMeanField(2)
	obj := objective.Options{STL: true}
	cfg := Config{Seed: 4, Stop: StopTrend, Window: 8, Average: 50, EvalEvery: 50, Init: InitZero}
	full, err := Fit(context.Background(), g, fam, obj, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if full.Status != Converged || !strings.Contains(full.Reason, "trend over the last 350 steps") {
		t.Fatalf("status %v after %d steps: %s", full.Status, full.Iterations, full.Reason)
	}
	if full.Reported == "" || len(full.State.Avg) != fam.NumParams() {
		t.Fatalf("reported %q, average %v", full.Reported, full.State.Avg)
	}
	if full.Trace[len(full.Trace)-1].AvgELBO == 0 {
		t.Error("trace lacks the averaged iterate's estimate")
	}
	// Stop half-way through (a multiple of EvalEvery), resume through JSON, compare.
	half := cfg
	half.MaxIter = full.Iterations / 100 * 50
	h, err := Fit(context.Background(), g, fam, obj, half)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.State.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := st.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	rest, err := Fit(context.Background(), g, fam, obj, cfg, WithResume(&st))
	if err != nil {
		t.Fatal(err)
	}
	if rest.Iterations != full.Iterations || rest.Status != full.Status || rest.Reported != full.Reported {
		t.Fatalf("resumed %d %v %q, uninterrupted %d %v %q", rest.Iterations, rest.Status, rest.Reported, full.Iterations, full.Status, full.Reported)
	}
	for i := range full.Params {
		if full.Params[i] != rest.Params[i] || full.State.Avg[i] != rest.State.Avg[i] {
			t.Fatalf("resumed params %v avg %v, uninterrupted %v %v", rest.Params, rest.State.Avg, full.Params, full.State.Avg)
		}
	}
}

func TestStopConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Stop: StopTrend, Window: 2}, "Window must be at least 3"},
		{Config{Stop: 7}, "unknown Stop"},
		{Config{TrendZ: -1}, "TrendZ"},
	} {
		if err := c.cfg.withDefaults().validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestIWELBOTracksTheIWELBO: with K > 1 the tracking estimate is the IWELBO of the same K, which
// for a mean-field q of a correlated Gaussian lies above the ELBO (the IWELBO is a tighter bound)
// and below log Z = 0.
func TestIWELBOTracksTheIWELBO(t *testing.T) {
	g := gauss2{m: [2]float64{1, -2}, sd: [2]float64{0.5, 2}, rho: 0.8}
	res, err := Fit(context.Background(), g, family.NewMeanField(2), objective.Options{K: 8}, Config{Seed: 3, Samples: 2, DiagDraws: 4000})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Trace[len(res.Trace)-1].ELBO
	// KL(q‖p) of the best mean-field fit to ρ = 0.8 is −½ log(1 − ρ²) ≈ 0.51 nats; the IWELBO
	// with K = 8 recovers much of it. 0.05 is ≈ 10 Monte Carlo s.e. of the ELBO at 4,000 draws.
	if !(last > res.ELBO+0.05 && last < 0.05) {
		t.Errorf("tracked IWELBO %.4f, ELBO %.4f ± %.4f", last, res.ELBO, res.ELBOSE)
	}
}
