package mcmc_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// sampleWithin runs Sample in a goroutine and fails the test when it has not returned after
// limit: a regression that hangs (a loop that checks neither its bounds nor the context)
// then fails instead of stalling the test binary. The context gets the same deadline.
func sampleWithin(t *testing.T, limit time.Duration, tg model.Target, cfg mcmc.Config) (*mcmc.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	type out struct {
		res *mcmc.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := mcmc.Sample(ctx, tg, cfg)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(limit + 5*time.Second):
		t.Fatalf("Sample did not return within %v of its context's deadline", limit)
		return nil, nil
	}
}

// TestPlusInfIsDivergence samples a standard normal whose log density is +∞ for x₁ > 1:
// such points must be rejected as divergences, not accepted (once accepted, every energy
// difference is ∞ − ∞ = NaN, dual averaging returns a NaN step size and the step-size
// search never ends).
func TestPlusInfIsDivergence(t *testing.T) {
	tg := model.GradFunc{N: 2, F: func(x, grad []float64) float64 {
		if x[0] > 1 {
			return math.Inf(1)
		}
		grad[0], grad[1] = -x[0], -x[1]
		return -0.5 * (x[0]*x[0] + x[1]*x[1])
	}}
	res, err := sampleWithin(t, 30*time.Second, tg, mcmc.Config{Seed: 1, Chains: 2, Warmup: 300, Draws: 300, Inits: [][]float64{{0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range res.Chains {
		if !(ch.StepSize > 0) || math.IsInf(ch.StepSize, 0) {
			t.Errorf("chain %d: step size %v", c+1, ch.StepSize)
		}
		for i := range ch.Len() {
			if x := ch.Draws[2*i]; !(x <= 1) {
				t.Fatalf("chain %d: draw %d has x₁ = %v, where the log density is +Inf", c+1, i+1, x)
			}
			if !(ch.Stats[i].LogDensity < math.Inf(1)) {
				t.Fatalf("chain %d: draw %d has lp %v", c+1, i+1, ch.Stats[i].LogDensity)
			}
		}
	}
	if d := res.Diagnostics(); d.Divergent == 0 {
		t.Errorf("no divergences reported: %s", d.Summary())
	}
}

// TestStepSizeSearchCancels checks that the step-size search looks at the context: on a
// target so sharply curved (log π = −10³⁰⁰x²/2 around x = 0) that the search halves ε
// about 500 times, one gradient each, an already cancelled run must stop after a handful of
// gradients instead of finishing the search first.
func TestStepSizeSearchCancels(t *testing.T) {
	const prec = 1e300
	tg := model.GradFunc{N: 1, F: func(x, grad []float64) float64 {
		grad[0] = -prec * x[0]
		return -0.5 * prec * x[0] * x[0]
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := mcmc.Sample(ctx, tg, mcmc.Config{Seed: 1, Chains: 1, Warmup: 10, Draws: 10, Inits: [][]float64{{0}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.GradEvals > 10 {
		t.Errorf("a cancelled run evaluated %d gradients, want at most 10", res.GradEvals)
	}
}

// twoModes is a 2-D target with a standard normal mode at 0 and a minor one, e^−40 times as
// heavy, at (40, 0): log π = log(N(x; 0, I) + e^−40·N(x; (40, 0), I)). A chain started in
// the minor mode never leaves it (the valley between them is ≈ 180 nats deep).
func twoModes() model.Target {
	return model.GradFunc{N: 2, F: func(x, grad []float64) float64 {
		a := -0.5 * (x[0]*x[0] + x[1]*x[1])
		dx := x[0] - 40
		b := -0.5*(dx*dx+x[1]*x[1]) - 40
		m := math.Max(a, b)
		wa, wb := math.Exp(a-m), math.Exp(b-m)
		s := wa + wb
		wa, wb = wa/s, wb/s
		grad[0] = -wa*x[0] - wb*dx
		grad[1] = -x[1]
		return m + math.Log(s)
	}}
}

// TestMinorModeChainReinitialised starts chain 4 in twoModes' minor mode: at the end of its
// warmup its mean log density is ≈ 40 sd below the other chains', so it must be
// re-initialised (from a uniform draw, Inits notwithstanding), sample the main mode, and the
// diagnostics must say so naming the chain.
func TestMinorModeChainReinitialised(t *testing.T) {
	cfg := mcmc.Config{Seed: 2, Warmup: 300, Draws: 300, Inits: [][]float64{{0, 0}, {0, 0}, {0, 0}, {40, 0}}}
	res, err := sampleWithin(t, 60*time.Second, twoModes(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range res.Chains {
		var m float64
		for i := range ch.Len() {
			m += ch.Draws[2*i] / float64(ch.Len())
		}
		if math.Abs(m) > 0.5 {
			t.Errorf("chain %d: mean x₁ %.3g, want ≈ 0 (restarts %q)", c+1, m, ch.Restarts)
		}
		if ch.Stuck != "" {
			t.Errorf("chain %d: still stuck: %s", c+1, ch.Stuck)
		}
	}
	if r := res.Chains[3].Restarts; len(r) != 1 || !strings.Contains(r[0], "log density") {
		t.Errorf("chain 4: restarts %q, want one for its log density", r)
	}
	for c := range 3 {
		if r := res.Chains[c].Restarts; len(r) != 0 {
			t.Errorf("chain %d: restarts %q, want none", c+1, r)
		}
	}
	w := strings.Join(res.Diagnostics().Warnings(), "\n")
	if !strings.Contains(w, "chain 4 ended warmup 1 stuck") {
		t.Errorf("warnings do not name chain 4:\n%s", w)
	}
}

// TestConfigErrorsNameTheField checks that an out-of-range Config value is an error naming
// the field and the value (NaN and ±Inf included, which comparisons like x < 0 let through).
func TestConfigErrorsNameTheField(t *testing.T) {
	tg := newGaussian(2, 0).target()
	cases := []struct {
		cfg   mcmc.Config
		field string
	}{
		{mcmc.Config{TargetAccept: 1}, "Config.TargetAccept"},
		{mcmc.Config{TargetAccept: math.NaN()}, "Config.TargetAccept"},
		{mcmc.Config{TargetAccept: -0.5}, "Config.TargetAccept"},
		{mcmc.Config{MaxDepth: -1}, "Config.MaxDepth"},
		{mcmc.Config{MaxDepth: 31}, "Config.MaxDepth"},
		{mcmc.Config{Thin: -2}, "Config.Thin"},
		{mcmc.Config{Chains: -1}, "Config.Chains"},
		{mcmc.Config{Draws: -1}, "Config.Draws"},
		{mcmc.Config{MaxDeltaH: math.NaN()}, "Config.MaxDeltaH"},
		{mcmc.Config{StepSize: math.Inf(1)}, "Config.StepSize"},
		{mcmc.Config{Gamma: math.Inf(1)}, "Config.Gamma"},
		{mcmc.Config{InitRadius: math.Inf(1)}, "Config.InitRadius"},
		{mcmc.Config{ProgressEvery: -1}, "Config.ProgressEvery"},
		{mcmc.Config{Inits: [][]float64{{0, math.NaN()}}}, "Config.Inits"},
	}
	for _, c := range cases {
		_, err := mcmc.Sample(context.Background(), tg, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: err = %v, want one naming %s", c.cfg, err, c.field)
		}
	}
}

// TestFailingChainReleasesOthers: a chain that cannot start must not leave the others
// waiting at the end of warmup for it.
func TestFailingChainReleasesOthers(t *testing.T) {
	tg := model.GradFunc{N: 1, F: func(x, grad []float64) float64 {
		if x[0] > 1 {
			return math.Inf(-1)
		}
		grad[0] = -x[0]
		return -0.5 * x[0] * x[0]
	}}
	_, err := sampleWithin(t, 30*time.Second, tg, mcmc.Config{Seed: 1, Chains: 3, Warmup: 100, Draws: 100, Inits: [][]float64{{0}, {5}, {0}}})
	if err == nil || !strings.Contains(err.Error(), "chain 2") {
		t.Errorf("err = %v, want chain 2's start-up error", err)
	}
}
