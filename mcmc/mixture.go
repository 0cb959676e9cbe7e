package mcmc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// Reparam is a second parameterisation of a target π over q ∈ ℝ^D: coordinates u = To(q)
// with inverse q = From(u), and Target, the density of u, the pushforward
// π(From(u))·|det ∂From/∂u| (up to a constant). Kingma & Welling's (2014) centred (CP) and
// differentiable non-centred (DNCP) forms of a Bayes net are such a pair: q are the latents
// z, u the noise ε with z = g(pa, ε).
type Reparam struct {
	Target model.Target
	// To writes u = To(q) into dst, From writes q = From(u); both len D.
	To, From func(dst, src []float64)
}

// Mixture is Kingma & Welling's (2014, §4) mixed proposal
// Q(q′|q) = ρ·Q_A(q′|q) + (1 − ρ)·Q_B(q′|q): at every iteration, with probability Prob an
// HMC transition in the target's own coordinates (A), otherwise one in Alt's coordinates (B)
// mapped back. Each kernel leaves π invariant, so their mixture does.
type Mixture struct {
	Alt Reparam
	// Prob is ρ, the probability of a transition in the target's own coordinates (default 0.5).
	Prob float64
}

// MixtureResult is the output of SampleMixture: draws in the target's own coordinates (the
// embedded Result, with Chain.StepSize the step size of A's kernel) and, per chain, Alt's step
// size and the fraction of kept transitions made in Alt's coordinates.
type MixtureResult struct {
	*Result
	AltStepSize []float64
	AltFraction []float64
}

// SampleMixture runs cfg.Chains chains of the mixture kernel mix on target in parallel, chain
// c with the random stream rng.New(cfg.Seed, c); the kernel choice, momenta and accept
// decisions all come from that stream, so the draws do not depend on GOMAXPROCS.
//
// Each parameterisation has its own transition (cfg.Algorithm: NUTS or static HMC with
// cfg.Steps leapfrog steps) and its own step size, found by Stan's heuristic and then tuned
// during warmup by dual averaging to cfg.TargetAccept on the transitions made in its
// coordinates. The metric is the identity in both coordinate systems: cfg.Metric must be
// Unit and cfg.InvMetric nil. Stats.LogDensity and Stats.Energy of an iteration are in the
// coordinates of the kernel that made it (they differ by the log-Jacobian).
//
// Cost: the transitions' gradients plus one gradient at every switch of coordinates (the
// state is carried over lazily: q = From(u) with no gradient when only the draw is needed).
// Cancellation and errors behave as in Sample.
func SampleMixture(ctx context.Context, target model.Target, mix Mixture, cfg Config) (*MixtureResult, error) {
	cfg = cfg.Defaults()
	d := target.Dim()
	if err := cfg.validate(d); err != nil {
		return nil, err
	}
	switch {
	case cfg.Metric != Unit || cfg.InvMetric != nil:
		return nil, fmt.Errorf("mcmc: SampleMixture: only the unit metric is supported (metric=%v)", cfg.Metric)
	case mix.Alt.Target == nil || mix.Alt.To == nil || mix.Alt.From == nil:
		return nil, errors.New("mcmc: SampleMixture: Alt needs a Target, To and From")
	case mix.Alt.Target.Dim() != d:
		return nil, fmt.Errorf("mcmc: SampleMixture: Alt target has dimension %d, want %d", mix.Alt.Target.Dim(), d)
	}
	if mix.Prob == 0 {
		mix.Prob = 0.5
	}
	if !(mix.Prob > 0 && mix.Prob < 1) {
		return nil, fmt.Errorf("mcmc: SampleMixture: Prob must be in (0, 1) (prob=%v)", mix.Prob)
	}
	res := &MixtureResult{Result: &Result{Config: cfg, Dim: d, Chains: make([]Chain, cfg.Chains)},
		AltStepSize: make([]float64, cfg.Chains), AltFraction: make([]float64, cfg.Chains)}
	return res, runChains(ctx, res.Result, func(ctx context.Context, c int) error {
		return runMixtureChain(ctx, target, mix, cfg, c, res, &res.Chains[c])
	})
}

// mixtureChain is one chain of SampleMixture: a chainRun per coordinate system sharing the
// random stream, and which of the two current points is out of date.
type mixtureChain struct {
	a, b           *chainRun
	alt            Reparam
	staleA, staleB bool
}

// useA brings A's point up to date (one gradient) after transitions in B.
func (m *mixtureChain) useA() {
	if m.staleA {
		m.alt.From(m.a.cur.q, m.b.cur.q)
		m.a.sys.eval(&m.a.cur)
		m.staleA = false
	}
}

// useB brings B's point up to date (one gradient) after transitions in A.
func (m *mixtureChain) useB() {
	if m.staleB {
		m.alt.To(m.b.cur.q, m.a.cur.q)
		m.b.sys.eval(&m.b.cur)
		m.staleB = false
	}
}

// step makes one transition, in A with probability prob, and returns its stats and whether
// it was made in B.
func (m *mixtureChain) step(prob, epsA, epsB float64) (Stats, bool) {
	if m.a.r.Float64() < prob {
		m.useA()
		st := m.a.k.transition(&m.a.cur, epsA)
		m.staleB = true
		return st, false
	}
	m.useB()
	st := m.b.k.transition(&m.b.cur, epsB)
	m.staleA = true
	return st, true
}

// draw writes the current position in A's coordinates into dst (no gradient).
func (m *mixtureChain) draw(dst []float64) {
	if m.staleA {
		m.alt.From(dst, m.b.cur.q)
		return
	}
	copy(dst, m.a.cur.q)
}

func runMixtureChain(ctx context.Context, target model.Target, mix Mixture, cfg Config, c int, res *MixtureResult, out *Chain) error {
	d := target.Dim()
	wrap := func(err error) error { return fmt.Errorf("mcmc: SampleMixture: chain %d: %w", c+1, err) }
	r := rng.New(cfg.Seed, uint64(c))
	newRun := func(tg model.Target, o *Chain) (*chainRun, error) {
		met, err := newMetric(d, Unit, nil)
		if err != nil {
			return nil, err
		}
		sys := &system{tg: tg, tape: new(ad.Tape), met: met, tmp: make([]float64, d)}
		ch := &chainRun{cfg: cfg, id: c, sys: sys, r: r, cur: newPoint(d), tmp: newPoint(d), out: o, done: ctx.Done()}
		if cfg.Algorithm == NUTS {
			ch.k = newNUTS(sys, r, cfg.MaxDepth, cfg.MaxDeltaH)
		} else {
			ch.k = newStaticHMC(sys, r, cfg.Steps, cfg.MaxDeltaH)
		}
		return ch, nil
	}
	a, err := newRun(target, out)
	if err != nil {
		return wrap(err)
	}
	b, err := newRun(mix.Alt.Target, new(Chain))
	if err != nil {
		return wrap(err)
	}
	m := &mixtureChain{a: a, b: b, alt: mix.Alt}
	defer func() { out.GradEvals = a.sys.grads + b.sys.grads }()
	if err := a.initialise(); err != nil {
		return wrap(err)
	}
	out.Init = slices.Clone(a.cur.q)
	m.staleB = true
	m.useB()
	if !finite(&b.cur) {
		return wrap(fmt.Errorf("log density or gradient of the alternative parameterisation not finite at the initial point (lp=%v)", b.cur.lp))
	}
	total := cfg.Warmup + cfg.Draws

	t0 := time.Now()
	epsA, epsB := cfg.StepSize, cfg.StepSize
	if cfg.Warmup > 0 {
		if epsA, err = a.initStepSize(epsA); err != nil {
			return wrap(err)
		}
		if epsB, err = b.initStepSize(epsB); err != nil {
			return wrap(err)
		}
		newDA := func() *dualAveraging {
			return &dualAveraging{delta: cfg.TargetAccept, gamma: cfg.Gamma, t0: cfg.T0, kappa: cfg.Kappa, mu: math.Log(10 * cfg.StepSize)}
		}
		daA, daB := newDA(), newDA()
		if cfg.SaveWarmup {
			out.WarmupDraws = make([]float64, 0, cfg.Warmup*d)
			out.WarmupStats = make([]Stats, 0, cfg.Warmup)
		}
		for i := range cfg.Warmup {
			if a.cancelled() {
				out.WarmupTime = time.Since(t0)
				return context.Canceled
			}
			st, inB := m.step(mix.Prob, epsA, epsB)
			if inB {
				epsB = daB.learn(st.AcceptStat)
			} else {
				epsA = daA.learn(st.AcceptStat)
			}
			if cfg.SaveWarmup {
				out.WarmupDraws = slices.Grow(out.WarmupDraws, d)[:len(out.WarmupDraws)+d]
				m.draw(out.WarmupDraws[len(out.WarmupDraws)-d:])
				out.WarmupStats = append(out.WarmupStats, st)
			}
			a.progress(i+1, total, true)
		}
		// A kernel never chosen during warmup keeps its heuristic step size.
		if daA.counter > 0 {
			epsA = daA.final()
		}
		if daB.counter > 0 {
			epsB = daB.final()
		}
		for _, e := range []float64{epsA, epsB} {
			if !(e > 0) || math.IsInf(e, 1) {
				return wrap(fmt.Errorf("adapted step size %v is not positive and finite", e))
			}
		}
	}
	out.WarmupTime = time.Since(t0)
	out.StepSize = epsA
	out.InvMetric = slices.Clone(a.sys.met.inv)
	res.AltStepSize[c] = epsB

	t1 := time.Now()
	kept := (cfg.Draws + cfg.Thin - 1) / cfg.Thin
	capped := min(kept, max(1<<20/d, 1))
	out.Draws = make([]float64, 0, capped*d)
	out.Stats = make([]Stats, 0, capped)
	inAlt := 0
	for i := range cfg.Draws {
		if a.cancelled() {
			out.SampleTime = time.Since(t1)
			return ctx.Err()
		}
		st, inB := m.step(mix.Prob, epsA, epsB)
		if i%cfg.Thin == 0 {
			out.Draws = slices.Grow(out.Draws, d)[:len(out.Draws)+d]
			m.draw(out.Draws[len(out.Draws)-d:])
			out.Stats = append(out.Stats, st)
			if inB {
				inAlt++
			}
		}
		a.progress(cfg.Warmup+i+1, total, false)
	}
	out.SampleTime = time.Since(t1)
	if len(out.Stats) > 0 {
		res.AltFraction[c] = float64(inAlt) / float64(len(out.Stats))
	}
	if cfg.Progress != nil {
		cfg.Progress(Progress{Chain: c, Iteration: total, Total: total, Done: true})
	}
	return nil
}
