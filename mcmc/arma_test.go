package mcmc_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// arma11 is posteriordb's arma11 (ARMA(1,1) on T observations y) with a hand-written
// gradient, on z = (mu, phi, theta, log sigma): priors mu ~ N(0, 10), phi, theta ~ N(0, 2),
// sigma ~ half-Cauchy(0, 2.5), errors e₁ = y₁ − mu − phi·mu, eₜ = yₜ − mu − phi·yₜ₋₁ −
// theta·eₜ₋₁ ~ N(0, sigma). With |theta| > 1 the errors grow as thetaᵗ: the posterior's
// far region is a steep, narrow landscape.
func arma11(y []float64) model.Target {
	return model.GradFunc{N: 4, F: func(z, grad []float64) float64 {
		mu, phi, theta, ls := z[0], z[1], z[2], z[3]
		sigma := math.Exp(ls)
		s2 := sigma * sigma
		lp := -mu*mu/200 - phi*phi/8 - theta*theta/8 - math.Log1p(s2/6.25) + ls
		gmu, gphi, gtheta := -mu/100, -phi/4, -theta/4
		gls := 1 - 2*(s2/6.25)/(1+s2/6.25)
		var e, dmu, dphi, dtheta float64 // eₜ and its derivatives
		for t, yt := range y {
			if t == 0 {
				e = yt - mu - phi*mu
				dmu, dphi, dtheta = -(1 + phi), -mu, 0
			} else {
				dmu, dphi, dtheta = -1-theta*dmu, -y[t-1]-theta*dphi, -e-theta*dtheta
				e = yt - mu - phi*y[t-1] - theta*e
			}
			lp += -ls - e*e/(2*s2)
			w := -e / s2
			gmu += w * dmu
			gphi += w * dphi
			gtheta += w * dtheta
			gls += -1 + e*e/s2
		}
		grad[0], grad[1], grad[2], grad[3] = gmu, gphi, gtheta, gls
		return lp
	}}
}

// armaData loads the arma data (T = 200) of the full posteriordb in ../shared/data, or skips.
func armaData(t *testing.T) []float64 {
	p := filepath.Join(datadir.SharedOrSkip(t), "data", "posteriordb-full", "data", "arma.json.zip")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipping: %v", err)
	}
	d, err := model.LoadData(p)
	if err != nil {
		t.Skip(err)
	}
	n, err := d.Int("T")
	if err != nil {
		t.Fatal(err)
	}
	y, err := d.Vector("y", n)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// TestArmaChainsAgree runs 4 chains of NUTS with the defaults (seed 1, inits uniform in
// (−2, 2)) on arma11. Before chains were judged at the end of warmup, chain 4 of this run
// ended warmup with step size ≈ 1e-16 and ran every iteration to the maximum tree depth,
// and chain 3 sat in a minor mode (lp ≈ −107 against ≈ 257): R̂ far above 1. Now both are
// re-initialised, the warnings name them, and the chains agree. Bounded by a deadline.
func TestArmaChainsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: 4 chains × 2000 iterations of arma11 under -short")
	}
	y := armaData(t)
	res, err := sampleWithin(t, 120*time.Second, arma11(y), mcmc.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := diag.Summarize(res.Draws([]string{"mu", "phi", "theta", "log_sigma"}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Rows {
		if r.Rhat > mcmc.RhatThreshold {
			t.Errorf("%s: R̂ %.3f", r.Variable, r.Rhat)
		}
	}
	w := strings.Join(res.Diagnostics().Warnings(), "\n")
	t.Logf("%d gradients; warnings:\n%s", res.GradEvals, w)
	for _, c := range []int{3, 4} {
		if len(res.Chains[c-1].Restarts) == 0 || !strings.Contains(w, fmt.Sprintf("chain %d ended warmup 1 stuck", c)) {
			t.Errorf("chain %d: restarts %q; warnings:\n%s", c, res.Chains[c-1].Restarts, w)
		}
	}
	if r := res.Chains[3].Restarts; len(r) == 0 || !strings.Contains(r[0], "step size collapsed") {
		t.Errorf("chain 4: restarts %q, want a collapsed step size first", r)
	}
	for c, ch := range res.Chains {
		if ch.Stuck != "" {
			t.Errorf("chain %d: still stuck: %s", c+1, ch.Stuck)
		}
	}
}
