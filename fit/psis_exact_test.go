package fit

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
)

// stdNormal is N(0, I) in d dimensions: a target a Gaussian family represents exactly, and
// where the Laplace start is exact too (mode 0, Hessian I), so the fit ends at q = p.
type stdNormal struct{ d int }

func (g stdNormal) Dim() int { return g.d }

func (g stdNormal) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	return density.Normal(t, z, t.Const(0), t.Const(1))
}

// TestExactGaussianFitIsReliable: a Gaussian family fitted to a Gaussian target ends at q = p,
// every log weight log p − log q is the same number and PSIS used to say k̂ = Inf, "do not
// trust this approximation". The verdict must be the best one instead: k̂ = −Inf (equal
// weights), reliable, with a zero bootstrap sd — full rank in 10 dimensions, and mean-field
// in 200 (the d = 5,000 case, smaller).
func TestExactGaussianFitIsReliable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range []struct {
		kind string
		d    int
	}{{KindFullRank, 10}, {KindMeanField, 200}} {
		res, err := Run(ctx, stdNormal{c.d}, DefaultRecipe(c.kind))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if !math.IsInf(res.KHat, -1) || res.KHatSD != 0 || !strings.Contains(res.Verdict, "reliable — the importance weights are all equal") {
			t.Errorf("%s: k̂ %v ± %v, verdict %q; want -Inf ± 0, reliable", c.kind, res.KHat, res.KHatSD, res.Verdict)
		}
		if math.Abs(res.ELBO) > 1e-9 {
			t.Errorf("%s: ELBO %v, want 0 (log Z of a normalised target)", c.kind, res.ELBO)
		}
	}
}
