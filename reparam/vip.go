package reparam

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// VIPConfig configures LearnLambda. Zero fields take the defaults in parentheses.
type VIPConfig struct {
	Steps   int     // Adam steps (2000)
	Samples int     // Monte Carlo draws per step (4)
	LR      float64 // Adam step size (0.02)
	// Inits are the starting λ of every group, one optimisation per entry, each in (0, 1)
	// ({0.1, 0.9}); the start with the highest final ELBO wins.
	Inits []float64
	// Freeze is the number of initial steps of every start during which λ is held at its
	// start value (0).
	Freeze int
	// Recipe is the fit of q at each start's λ that the joint optimisation starts from
	// (fit.DefaultRecipe(fit.KindMeanField) when nil).
	Recipe *fit.Recipe
	Seed   uint64 // seed of the draws (1)
}

func (c VIPConfig) defaults() VIPConfig {
	if c.Steps == 0 {
		c.Steps = 2000
	}
	if c.Samples == 0 {
		c.Samples = 4
	}
	if c.LR == 0 {
		c.LR = 0.02
	}
	if len(c.Inits) == 0 {
		c.Inits = []float64{0.1, 0.9}
	}
	if c.Recipe == nil {
		r := fit.DefaultRecipe(fit.KindMeanField)
		c.Recipe = &r
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// VIPResult is the outcome of LearnLambda.
type VIPResult struct {
	Params []string  // the groups, in Spec order
	Lambda []float64 // learned λ per group, in (0, 1)
	// ELBO is the mean of the per-step ELBO estimates over the last tenth of the steps.
	ELBO float64
	// Mean and SD are the learned mean-field Gaussian over the coordinates of Model(Lambda).
	Mean, SD  []float64
	Steps     int
	GradEvals int64
	// Starts are the outcomes of every start (Inits order): its final λ and ELBO.
	Starts []VIPStart
}

// VIPStart is one start of LearnLambda.
type VIPStart struct {
	Init   float64
	Lambda []float64 // nil when the start failed
	ELBO   float64
	Err    string // why the start failed ("" when it did not)
}

// String explains the result, one line per group: the learned λ, whether it is near NCP
// (λ < 0.1) or CP (λ > 0.9), the ELBO, and the outcome of every start.
func (r *VIPResult) String() string {
	var b strings.Builder
	for g, l := range r.Lambda {
		near := "between"
		switch {
		case l < 0.1:
			near = "near NCP"
		case l > 0.9:
			near = "near CP"
		}
		fmt.Fprintf(&b, "%s: λ=%.3f (VIP: %s; ELBO %.4g after %d Adam steps", r.Params[g], l, near, r.ELBO, r.Steps)
		for _, st := range r.Starts {
			if st.Err != "" {
				fmt.Fprintf(&b, "; from λ=%.2g: failed (%s)", st.Init, st.Err)
				continue
			}
			fmt.Fprintf(&b, "; from λ=%.2g: λ=%.3f, ELBO %.4g", st.Init, st.Lambda[g], st.ELBO)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// LearnLambda learns the partial centring of every group as VIP does (Gorinova, Moore & Hoffman
// 2020, §3): λ_g = sigmoid(η_g) is an extra variational parameter, optimised with the
// mean-field Gaussian q(z) = N(m, diag(e^{2ω})) over the coordinates of Model(λ) on the ELBO
//
//	L(m, ω, η) = E_ε[log p_λ(m + e^ω ⊙ ε)] + Σ ω + const,   ε ~ N(0, I),
//
// by Adam on reparameterisation gradients (cfg.Samples draws per step). The ELBO is not
// concave in λ (eight schools with informative data has a local optimum near NCP and its
// global one at CP; see TestLearnLambda), so, unlike VIP's single run from λ = ½, LearnLambda starts from every
// cfg.Inits value: q is first fitted at that λ by fit.Run (cfg.Recipe), the joint optimisation
// starts from its moments, and the start with the best final ELBO wins. Because
// log p_λ is the same posterior in different coordinates, λ moves towards the coordinates in
// which the posterior is closest to a product of Gaussians — where mean-field VI, and a
// diagonal-metric sampler, do best. The result's λ feeds Spec.Model; fitting that model with
// fit.Run (or sampling it with mcmc) needs no change to either.
//
// Cost: per start, one fit.Run plus cfg.Steps × cfg.Samples gradient evaluations.
func (s *Spec) LearnLambda(ctx context.Context, cfg VIPConfig) (*VIPResult, error) {
	c, err := s.check("Spec.LearnLambda")
	if err != nil {
		return nil, err
	}
	if cfg.Steps < 0 || cfg.Samples < 0 || cfg.LR < 0 || math.IsNaN(cfg.LR) || math.IsInf(cfg.LR, 0) || cfg.Freeze < 0 {
		return nil, fmt.Errorf("reparam: Spec.LearnLambda: negative or non-finite config value (Steps=%d, Samples=%d, LR=%g, Freeze=%d)", cfg.Steps, cfg.Samples, cfg.LR, cfg.Freeze)
	}
	for k, l := range cfg.Inits {
		if !(l > 0 && l < 1) {
			return nil, fmt.Errorf("reparam: Spec.LearnLambda: Inits[%d] = %g, want in (0, 1)", k, l)
		}
	}
	cfg = cfg.defaults()
	lay, err := c.layout()
	if err != nil {
		return nil, fmt.Errorf("reparam: Spec.LearnLambda: %w", err)
	}
	res := &VIPResult{Steps: cfg.Steps}
	for k, init := range cfg.Inits {
		lam := make([]float64, len(c.idx))
		for g := range lam {
			lam[g] = init
		}
		m0, err := c.model(lam)
		if err != nil {
			return nil, err
		}
		q0, err := fit.Run(ctx, m0, *cfg.Recipe)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("reparam: Spec.LearnLambda: start %d (λ=%g): %w", k, init, err)
			}
			// The model at this λ can be improper in q's reach (the centred end of a funnel
			// has log density → ∞ as the scale → 0): the start is dropped, with its reason.
			res.Starts = append(res.Starts, VIPStart{Init: init, ELBO: math.NaN(), Err: err.Error()})
			continue
		}
		mean, sd := moments(q0.Draws, m0.Dim())
		st, err := c.vipStart(ctx, lay, cfg, init, mean, sd, rng.Derive(cfg.Seed, uint64(k)))
		if err != nil {
			return nil, err
		}
		res.GradEvals += st.gradEvals + int64(q0.GradEvals)
		res.Starts = append(res.Starts, VIPStart{Init: init, Lambda: st.lambda, ELBO: st.elbo})
		if res.Lambda == nil || st.elbo > res.ELBO {
			res.ELBO, res.Lambda, res.Mean, res.SD = st.elbo, st.lambda, st.mean, st.sd
		}
	}
	if res.Lambda == nil {
		return nil, fmt.Errorf("reparam: Spec.LearnLambda: every start failed; the first: %s", res.Starts[0].Err)
	}
	for _, i := range c.idx {
		res.Params = append(res.Params, c.params[i].Name)
	}
	return res, nil
}

type vipOutcome struct {
	lambda, mean, sd []float64
	elbo             float64
	gradEvals        int64
}

// moments returns the mean and standard deviation of every column of the row-major draws
// (the standard deviation floored at 1e-3, so that log sd is finite).
func moments(draws []float64, d int) (mean, sd []float64) {
	n := len(draws) / d
	mean, sd = make([]float64, d), make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += draws[i*d+j] / float64(n)
		}
	}
	for i := range n {
		for j := range d {
			r := draws[i*d+j] - mean[j]
			sd[j] += r * r / float64(max(n-1, 1))
		}
	}
	for j := range sd {
		sd[j] = math.Max(math.Sqrt(sd[j]), 1e-3)
	}
	return mean, sd
}

// vipStart is one start of LearnLambda from λ = init.
func (c *compiled) vipStart(ctx context.Context, lay *model.Layout, cfg VIPConfig, init float64, mean, sd []float64, seed uint64) (*vipOutcome, error) {
	d, ng := lay.Dim(), len(c.idx)
	theta := make([]float64, 2*d+ng)
	copy(theta, mean)
	for i := range d {
		theta[d+i] = math.Log(sd[i])
	}
	for g := range ng {
		theta[2*d+g] = math.Log(init / (1 - init))
	}
	opt := optim.NewAdam(len(theta), optim.AdamConfig{LR: cfg.LR, ClipNorm: 100})
	r := rng.New(seed, 0)
	eps := make([]float64, d)
	grad := make([]float64, len(theta))
	var t ad.Tape
	out := &vipOutcome{}
	var tail float64
	var tailN int
	q := make([]ad.Var, len(c.params))
	p := make([]ad.Var, len(c.params))
	lam := make([]ad.Var, ng)
	for step := range cfg.Steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reparam: Spec.LearnLambda: step %d: %w", step, context.Cause(ctx))
		}
		clear(grad)
		var elbo float64
		for range cfg.Samples {
			for i := range eps {
				eps[i] = r.NormFloat64()
			}
			t.Reset()
			in := t.Input(theta)
			m, w, eta := t.Slice(in, 0, d), t.Slice(in, d, 2*d), t.Slice(in, 2*d, 2*d+ng)
			z := t.Add(m, t.Mul(t.Exp(w), t.Const(eps...)))
			lj := lay.Constrain(&t, z, q)
			for g := range ng {
				lam[g] = t.Sigmoid(t.Index(eta, g))
			}
			obj := t.Add(t.Add(c.eval(&t, q, p, lam, -1), lj), t.Sum(w))
			v := t.Float(obj)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue // a draw outside the support: skipped, as fit's NaN policy does
			}
			t.Backward(obj)
			for i, gi := range t.Grad(in) {
				grad[i] -= gi / float64(cfg.Samples)
			}
			elbo += v / float64(cfg.Samples)
		}
		out.gradEvals += int64(cfg.Samples)
		if step < cfg.Freeze {
			clear(grad[2*d:])
		}
		opt.Step(theta, grad)
		if step >= cfg.Steps-cfg.Steps/10-1 {
			tail += elbo
			tailN++
		}
	}
	// The ELBO with its constant: E log p − E log q = E log p + Σω + (d/2)(1 + log 2π).
	out.elbo = tail/float64(tailN) + 0.5*float64(d)*(1+math.Log(2*math.Pi))
	out.mean = append([]float64(nil), theta[:d]...)
	out.sd = make([]float64, d)
	for i := range d {
		out.sd[i] = math.Exp(theta[d+i])
	}
	for g := range ng {
		out.lambda = append(out.lambda, mathx.Logistic(theta[2*d+g]))
	}
	return out, nil
}
