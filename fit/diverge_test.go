package fit

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/objective"
)

// sabotaged is a standard normal whose log density is shifted by −1e200 while bad is set: the
// tracking estimates then fall by hundreds of orders of magnitude, as those of a diverged flow
// fit do (its draws overflowing), while the gradient stays that of the standard normal.
type sabotaged struct {
	stdNormal
	bad *atomic.Bool
}

func (s sabotaged) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	lp := s.stdNormal.LogDensity(t, z)
	if s.bad.Load() {
		return t.AddC(lp, -1e200)
	}
	return lp
}

// fitSabotaged fits a full-rank Gaussian to sabotaged with the target turned bad at tracking
// step 300 and, when until > 0, good again at tracking step until (the observer runs after each
// tracking estimate, so the estimate at until is still a bad one).
func fitSabotaged(t *testing.T, until int) *Result {
	t.Helper()
	var bad atomic.Bool
	tg := sabotaged{stdNormal{3}, &bad}
	flip := func(p Progress) {
		switch {
		case p.Iter == 300:
			bad.Store(true)
		case until > 0 && p.Iter == until:
			bad.Store(false)
		}
	}
	res, err := Fit(context.Background(), tg, family.NewFullRank(3), objective.Options{}, Config{Seed: 1}, WithProgress(flip))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDivergedFitRestartsFromTheBest: a tracking estimate 1e200 below the best one is a
// divergence (DivergeFactor), not a plateau: the fit restarts from the best tracked iterate at
// a fifth of the step size, once per estimate while the target stays bad (two here, the
// estimates at 400 and 500), and then converges as usual; the reason names both restarts. The
// best tracked iterate is the start (step 0): the Laplace start is exact for a Gaussian target,
// its tracking ELBO is 0, and no later estimate is above it.
func TestDivergedFitRestartsFromTheBest(t *testing.T) {
	res := fitSabotaged(t, 500)
	if res.Status != Converged {
		t.Fatalf("status %v, want converged: %s", res.Status, res.Reason)
	}
	if got := len(res.State.Restarts); got != 2 {
		t.Errorf("%d restarts, want 2: %q", got, res.State.Restarts)
	}
	for _, s := range []string{"diverged at step 400", "diverged at step 500", "restarted from the best tracked iterate (step 0) at step size 0.004", "at step size 0.0008"} {
		if !strings.Contains(res.Reason, s) {
			t.Errorf("reason lacks %q: %s", s, res.Reason)
		}
	}
	for _, tp := range res.Trace {
		if tp.ELBO < -1e100 {
			t.Errorf("the trace holds the diverged estimate %g (step %d)", tp.ELBO, tp.Iter)
		}
	}
}

// TestDivergedFitStopsWithNoReductionLeft: when the target stays bad, the third divergence
// finds no step-size reduction left (Decays 2): the fit stops with status Diverged at the best
// tracked iterate, whose parameters it reports.
func TestDivergedFitStopsWithNoReductionLeft(t *testing.T) {
	res := fitSabotaged(t, 0)
	if res.Status != Diverged {
		t.Fatalf("status %v, want diverged: %s", res.Status, res.Reason)
	}
	if res.Status.String() != "diverged" || !strings.Contains(res.Reason, "diverged at step 600") || !strings.Contains(res.Reason, "after 2 step-size reductions") {
		t.Errorf("reason %q", res.Reason)
	}
	if !strings.Contains(res.Reported, "best tracked iterate (step 0)") {
		t.Errorf("reported %q, want the best tracked iterate", res.Reported)
	}
	for i, p := range res.Params {
		if p != res.State.Best[i] {
			t.Fatalf("params[%d] = %g, the best tracked iterate's is %g", i, p, res.State.Best[i])
		}
	}
}
