package mcmc_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// standardised is g in the coordinates u = (x − μ)/s: x = μ + s⊙u, a linear map with constant
// Jacobian, so the pushforward density is π(μ + s⊙u) and ∇_u = s⊙∇_x.
func standardised(g *gaussian) mcmc.Reparam {
	d := len(g.mean)
	a := g.target().(model.GradFunc)
	return mcmc.Reparam{
		Target: model.GradFunc{N: d, F: func(u, grad []float64) float64 {
			xs := make([]float64, d) // per call: chains evaluate concurrently
			for i := range d {
				xs[i] = g.mean[i] + g.sd[i]*u[i]
			}
			lp := a.F(xs, grad)
			for i := range d {
				grad[i] *= g.sd[i]
			}
			return lp
		}},
		To: func(dst, x []float64) {
			for i := range d {
				dst[i] = (x[i] - g.mean[i]) / g.sd[i]
			}
		},
		From: func(dst, u []float64) {
			for i := range d {
				dst[i] = g.mean[i] + g.sd[i]*u[i]
			}
		},
	}
}

// TestMixtureGaussian samples a 5-D Gaussian (neighbour correlation 0.5, scales 0.32…3.2) with
// the 50/50 mixture of static HMC in x and in the standardised coordinates, and checks the
// means and sds, the share of transitions in each system, the two step sizes and determinism.
func TestMixtureGaussian(t *testing.T) {
	g := newGaussian(5, 0.5)
	cfg := mcmc.Config{Seed: 3, Algorithm: mcmc.StaticHMC, Steps: 10, TargetAccept: 0.9, Metric: mcmc.Unit, Draws: 2000}
	mix := mcmc.Mixture{Alt: standardised(g)}
	res, err := mcmc.SampleMixture(context.Background(), g.target(), mix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dr := res.Draws(nil, nil)
	for j := range 5 {
		ch := dr.Var(j)
		// 5 MCSE, as in TestNUTSGaussian: 10 checks with a false-alarm rate of 6e-7 each.
		if m, se := mean(concat(ch)), diag.MCSEMean(ch); math.Abs(m-g.mean[j]) > 5*se {
			t.Errorf("x[%d]: mean %.4f, want %.4f ± 5·%.4f", j+1, m, g.mean[j], se)
		}
		if s, se := sdev(concat(ch)), diag.MCSESD(ch); math.Abs(s-g.sd[j]) > 5*se {
			t.Errorf("x[%d]: sd %.4f, want %.4f ± 5·%.4f", j+1, s, g.sd[j], se)
		}
	}
	for c, f := range res.AltFraction {
		// Binomial(2000, 0.5): sd 0.011; 5 sd.
		if math.Abs(f-0.5) > 5*math.Sqrt(0.25/2000) {
			t.Errorf("chain %d: %.3f of the transitions in the standardised system, want 0.5", c+1, f)
		}
		// Unit metric: in x the step is limited by the smallest scale (0.32 with correlation),
		// in u by a scale near 1, so the second step size is clearly the larger.
		if a, b := res.Chains[c].StepSize, res.AltStepSize[c]; !(b > 1.5*a) {
			t.Errorf("chain %d: step sizes %.3g (x) and %.3g (u), want the second larger", c+1, a, b)
		}
	}
	var leap int64
	for _, s := range slices.Concat(res.Stats()...) {
		leap += int64(s.NLeapfrog)
	}
	if res.GradEvals <= leap {
		t.Errorf("%d gradient evaluations for %d leapfrog steps of the kept draws", res.GradEvals, leap)
	}
	again, err := mcmc.SampleMixture(context.Background(), g.target(), mix, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for c := range res.Chains {
		if !slices.Equal(res.Chains[c].Draws, again.Chains[c].Draws) {
			t.Errorf("chain %d: two runs with the same seed differ", c+1)
		}
	}
}

func TestMixtureErrors(t *testing.T) {
	g := newGaussian(3, 0)
	mix := mcmc.Mixture{Alt: standardised(g)}
	for _, c := range []struct {
		mix  mcmc.Mixture
		cfg  mcmc.Config
		want string
	}{
		{mix, mcmc.Config{}, "unit metric"},
		{mcmc.Mixture{}, mcmc.Config{Metric: mcmc.Unit}, "Alt needs"},
		{mcmc.Mixture{Alt: mix.Alt, Prob: 1.5}, mcmc.Config{Metric: mcmc.Unit}, "Prob"},
		{mcmc.Mixture{Alt: standardised(newGaussian(4, 0))}, mcmc.Config{Metric: mcmc.Unit}, "dimension 4"},
	} {
		_, err := mcmc.SampleMixture(context.Background(), g.target(), c.mix, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
