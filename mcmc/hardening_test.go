package mcmc_test

import (
	"context"
	"errors"
	"math"
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
