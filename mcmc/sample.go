package mcmc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// Chain is the output of one chain.
type Chain struct {
	// Draws are the kept draws on the unconstrained scale, row-major: draw i is
	// Draws[i·D:(i+1)·D]. Stats[i] are its sampler diagnostics.
	Draws []float64
	Stats []Stats
	// WarmupDraws and WarmupStats are the warmup iterations when Config.SaveWarmup is set.
	WarmupDraws []float64
	WarmupStats []Stats
	// Init is the chain's initial point (unconstrained).
	Init []float64
	// StepSize and InvMetric are the adapted step size ε and inverse metric M⁻¹ (D values, or
	// D×D row-major for a dense metric) used for the kept draws.
	StepSize  float64
	InvMetric []float64
	// GradEvals counts gradient evaluations of the target, initialisation and step-size
	// searches included.
	GradEvals int64
	// WarmupTime and SampleTime are the wall times of the two phases (WarmupTime summed over
	// re-initialisations).
	WarmupTime, SampleTime time.Duration
	// Restarts says why the chain was re-initialised after each warmup that ended stuck
	// (a collapsed step size, or far from the other chains; see stuck.go); its draws come
	// from the last warmup. Stuck is why the last warmup still ended stuck, "" when it did
	// not. Notes are other warmup events (a metric estimate that was not used).
	Restarts []string
	Stuck    string
	Notes    []string
}

// Len returns the number of kept draws.
func (c *Chain) Len() int { return len(c.Stats) }

// Result is the output of Sample.
type Result struct {
	// Config is the configuration the run used, defaults filled in.
	Config Config
	// Dim is the target's dimension D.
	Dim    int
	Chains []Chain
	// GradEvals is the total number of gradient evaluations over all chains.
	GradEvals int64
	// Wall is the wall time of the whole call.
	Wall time.Duration
}

// Len returns the number of draws per chain that every chain has (the shortest chain's, when
// a cancelled run left chains of different lengths).
func (r *Result) Len() int {
	if len(r.Chains) == 0 {
		return 0
	}
	n := math.MaxInt
	for i := range r.Chains {
		n = min(n, r.Chains[i].Len())
	}
	return n
}

// Draws returns the first Len draws of every chain as diag.Draws. With constrain nil they are
// on the unconstrained scale, named names or, when names is nil, "z[1]" … "z[D]". Otherwise
// constrain maps each draw z to the reported values (len(names) of them), as zoo's
// Model.Constrain does; dst is nil or of length len(names).
func (r *Result) Draws(names []string, constrain func(dst, z []float64) []float64) *diag.Draws {
	d := r.Dim
	if names == nil {
		if constrain != nil {
			panic("mcmc: Result.Draws: names are required with constrain")
		}
		names = make([]string, d)
		for i := range names {
			names[i] = fmt.Sprintf("z[%d]", i+1)
		}
	}
	k := len(names)
	if constrain == nil && k != d {
		panic(fmt.Sprintf("mcmc: Result.Draws: %d names for %d dimensions", k, d))
	}
	n := r.Len()
	out := &diag.Draws{Names: slices.Clone(names), Chains: make([][]float64, len(r.Chains))}
	for c := range r.Chains {
		src := r.Chains[c].Draws
		dst := make([]float64, n*k)
		for i := range n {
			z := src[i*d : (i+1)*d]
			if constrain == nil {
				copy(dst[i*k:(i+1)*k], z)
			} else {
				constrain(dst[i*k:(i+1)*k], z)
			}
		}
		out.Chains[c] = dst
	}
	return out
}

// Stats returns the first Len iterations' sampler diagnostics of every chain.
func (r *Result) Stats() [][]Stats {
	n := r.Len()
	out := make([][]Stats, len(r.Chains))
	for c := range r.Chains {
		out[c] = r.Chains[c].Stats[:n]
	}
	return out
}

// Diagnostics returns the divergence, tree-depth and E-BFMI checks of the kept draws.
func (r *Result) Diagnostics() Diagnostics {
	depth := r.Config.MaxDepth
	if r.Config.Algorithm != NUTS {
		depth = 0
	}
	d := Diagnose(r.Stats(), depth)
	d.Warmup = r.warmupEvents()
	return d
}

// warmupEvents says in words, one line per event, which chains were re-initialised or are
// still stuck, and the chains' warmup notes.
func (r *Result) warmupEvents() []string {
	var w []string
	for c := range r.Chains {
		ch := &r.Chains[c]
		for k, why := range ch.Restarts {
			w = append(w, fmt.Sprintf("chain %d ended warmup %d stuck (%s) and was re-initialised from a new random point.", c+1, k+1, why))
		}
		if ch.Stuck != "" {
			w = append(w, fmt.Sprintf("chain %d is stuck after %d re-initialisations (%s): its draws likely do not represent the posterior. Try other initial values (--init), a longer warmup, or reparameterise.", c+1, len(ch.Restarts), ch.Stuck))
		}
		for _, n := range ch.Notes {
			w = append(w, fmt.Sprintf("chain %d: %s.", c+1, n))
		}
	}
	return w
}

// Sample runs cfg.Chains chains of HMC on target in parallel, chain c with the random stream
// rng.New(cfg.Seed, c) and its own ad.Tape, and returns their draws. The draws do not depend
// on GOMAXPROCS.
//
// Each chain starts from Config.Inits or a uniform draw in (−InitRadius, InitRadius)^D (up to
// 100 tries for a finite log density and gradient), then runs Warmup adaptation iterations and
// Draws kept iterations. When ctx is cancelled the chains stop after their current iteration
// (or step-size search try) and Sample returns the draws made so far with ctx.Err(). A chain
// that cannot start (no finite initial point, no workable step size) stops the run with an
// error; the partial result is returned with it.
//
// The chains wait for each other at the end of warmup. A chain whose step size collapsed or
// that ended far from the others (stuck, in stuck.go) is re-initialised from a uniform draw
// with a stream derived from Seed, chain and attempt, at most maxRestarts times; a chain still
// stuck then samples anyway. Chain.Restarts, Chain.Stuck and Diagnostics.Warmup say what
// happened. The verdicts depend only on the chains' warmups, so a seed still fixes the draws.
func Sample(ctx context.Context, target model.Target, cfg Config) (*Result, error) {
	cfg = cfg.Defaults()
	d := target.Dim()
	if err := cfg.validate(d); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Dim: d, Chains: make([]Chain, cfg.Chains)}
	g := newGate(cfg)
	return res, runChains(ctx, res, func(ctx context.Context, c int) error {
		return runChain(ctx, target, cfg, c, &res.Chains[c], g)
	})
}

// runChains runs chain(ctx, c) for every chain of res at once, then fills res.Wall and
// res.GradEvals. The first chain to fail with an error other than a cancellation cancels the
// others and is returned; otherwise the cause of ctx's cancellation, if any.
func runChains(ctx context.Context, res *Result, chain func(ctx context.Context, c int) error) error {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cancelled := func(err error) bool {
		return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	errs := make([]error, len(res.Chains))
	var wg sync.WaitGroup
	for c := range res.Chains {
		wg.Go(func() {
			errs[c] = chain(ctx, c)
			if errs[c] != nil && !cancelled(errs[c]) {
				cancel(errs[c])
			}
		})
	}
	wg.Wait()
	res.Wall = time.Since(start)
	for c := range res.Chains {
		res.GradEvals += res.Chains[c].GradEvals
	}
	for _, err := range errs {
		if err != nil && !cancelled(err) {
			return err
		}
	}
	return context.Cause(ctx)
}

// chainRun is the state of one chain during Sample.
type chainRun struct {
	cfg  Config
	id   int
	sys  *system
	r    *rng.Stream
	k    kernel
	cur  point
	tmp  point
	out  *Chain
	done <-chan struct{}
	// uniform makes initialise draw the start uniformly even when Config.Inits is set (a
	// re-initialisation).
	uniform bool
}

// newKernel sets ch.k to the configured transition on ch.sys with ch.r.
func (ch *chainRun) newKernel() {
	if ch.cfg.Algorithm == NUTS {
		ch.k = newNUTS(ch.sys, ch.r, ch.cfg.MaxDepth, ch.cfg.MaxDeltaH)
	} else {
		ch.k = newStaticHMC(ch.sys, ch.r, ch.cfg.Steps, ch.cfg.MaxDeltaH)
	}
}

// start initialises the chain and runs its warmup; it sets out.Init, out.WarmupTime,
// out.StepSize and out.InvMetric.
func (ch *chainRun) start(total int) (warmEnd, error) {
	out := ch.out
	if err := ch.initialise(); err != nil {
		return warmEnd{}, fmt.Errorf("mcmc: Sample: chain %d: %w", ch.id+1, err)
	}
	out.Init = slices.Clone(ch.cur.q)
	t0 := time.Now()
	end, err := ch.warmup(total)
	out.WarmupTime += time.Since(t0)
	out.StepSize = end.eps
	out.InvMetric = slices.Clone(ch.sys.met.inv)
	return end, err
}

// restart re-initialises the chain for its k-th re-initialisation: a fresh random stream
// rng.New(rng.Derive(Seed, restartPath, c, k), 0), the initial metric and a uniform initial
// point. The gradient count and the tape are kept.
func (ch *chainRun) restart(k int) error {
	met, err := newMetric(ch.sys.met.d, ch.cfg.Metric, ch.cfg.InvMetric)
	if err != nil {
		return err
	}
	ch.sys.met = met
	ch.r = rng.New(rng.Derive(ch.cfg.Seed, restartPath, uint64(ch.id), uint64(k)), 0)
	ch.newKernel()
	ch.uniform = true
	ch.out.WarmupDraws, ch.out.WarmupStats = nil, nil
	return nil
}

func runChain(ctx context.Context, target model.Target, cfg Config, c int, out *Chain, g *gate) error {
	d := target.Dim()
	met, err := newMetric(d, cfg.Metric, cfg.InvMetric)
	if err != nil {
		g.arrive(c, nil)
		return fmt.Errorf("mcmc: Sample: chain %d: %w", c+1, err)
	}
	sys := &system{tg: target, tape: new(ad.Tape), met: met, tmp: make([]float64, d)}
	ch := &chainRun{cfg: cfg, id: c, sys: sys, r: rng.New(cfg.Seed, uint64(c)), cur: newPoint(d), tmp: newPoint(d), out: out, done: ctx.Done()}
	ch.newKernel()
	defer func() { out.GradEvals = sys.grads }()
	total := cfg.Warmup + cfg.Draws

	end, err := ch.start(total)
	if err != nil {
		g.arrive(c, nil)
		return err
	}
	g.arrive(c, &end)
	if !g.wait(ch.done) {
		return ctx.Err()
	}
	reason, refs := g.verdict(c)
	for k := 1; reason != "" && k <= maxRestarts; k++ {
		out.Restarts = append(out.Restarts, reason)
		if err := ch.restart(k); err != nil {
			return fmt.Errorf("mcmc: Sample: chain %d: re-initialisation %d: %w", c+1, k, err)
		}
		if end, err = ch.start(total); err != nil {
			return err
		}
		reason = stuck(end, refs, cfg)
	}
	out.Stuck = reason
	eps := end.eps
	if !(eps > 0) || math.IsInf(eps, 1) {
		return fmt.Errorf("mcmc: Sample: chain %d: adapted step size %v is not positive and finite", c+1, eps)
	}

	t1 := time.Now()
	kept := (cfg.Draws + cfg.Thin - 1) / cfg.Thin
	// Preallocate (no growth in steady state) up to a bound; longer runs grow by appending.
	capped := min(kept, max(1<<20/d, 1))
	out.Draws = make([]float64, 0, capped*d)
	out.Stats = make([]Stats, 0, capped)
	for i := range cfg.Draws {
		if ch.cancelled() {
			out.SampleTime = time.Since(t1)
			return ctx.Err()
		}
		st := ch.k.transition(&ch.cur, eps)
		if i%cfg.Thin == 0 {
			out.Draws = append(out.Draws, ch.cur.q...)
			out.Stats = append(out.Stats, st)
		}
		ch.progress(cfg.Warmup+i+1, total, false)
	}
	out.SampleTime = time.Since(t1)
	if cfg.Progress != nil {
		cfg.Progress(Progress{Chain: c, Iteration: total, Total: total, Done: true})
	}
	return nil
}

func (ch *chainRun) cancelled() bool {
	select {
	case <-ch.done:
		return true
	default:
		return false
	}
}

func (ch *chainRun) progress(it, total int, warm bool) {
	if ch.cfg.Progress != nil && it%ch.cfg.ProgressEvery == 0 && it < total {
		ch.cfg.Progress(Progress{Chain: ch.id, Iteration: it, Total: total, Warmup: warm})
	}
}

// finite reports whether z's log density and gradient are finite.
func finite(z *point) bool {
	if math.IsInf(z.lp, 0) || math.IsNaN(z.lp) {
		return false
	}
	for _, g := range z.g {
		if math.IsInf(g, 0) || math.IsNaN(g) {
			return false
		}
	}
	return true
}

// initialise sets the chain's starting point.
func (ch *chainRun) initialise() error {
	cfg := ch.cfg
	if cfg.Inits != nil && !ch.uniform {
		copy(ch.cur.q, cfg.Inits[min(ch.id, len(cfg.Inits)-1)])
		ch.sys.eval(&ch.cur)
		if !finite(&ch.cur) {
			why := ""
			if e, ok := ch.sys.tg.(model.Explainer); ok {
				if err := e.ExplainAt(ch.cur.q); err != nil {
					why = ": " + err.Error()
				}
			}
			return fmt.Errorf("log density or gradient not finite at the given initial point (lp=%v)%s", ch.cur.lp, why)
		}
		return nil
	}
	const tries = 100
	for range tries {
		for i := range ch.cur.q {
			ch.cur.q[i] = cfg.InitRadius * (2*ch.r.Float64() - 1)
		}
		ch.sys.eval(&ch.cur)
		if finite(&ch.cur) {
			return nil
		}
	}
	why := ""
	if e, ok := ch.sys.tg.(model.Explainer); ok {
		if err := e.ExplainAt(ch.cur.q); err != nil {
			why = "; at the last: " + err.Error()
		}
	}
	return fmt.Errorf("no initial point with a finite log density and gradient in %d uniform draws from (-%g, %g)^%d%s", tries, cfg.InitRadius, cfg.InitRadius, len(ch.cur.q), why)
}

// initStepSize is Stan's heuristic for a first step size from the current point: one
// leapfrog step from a fresh momentum, then ε doubled (or halved) until the acceptance
// probability e^{H₀−H} of a single step crosses 0.8. Each try draws a new momentum.
//
// The search stops with an error when ε passes 10⁷ or reaches 0, and returns context.Canceled
// when the run is cancelled; it needs a positive, finite ε to start from (a NaN would double
// forever). Cost: one gradient per try, at most ≈ 1100 tries (the doublings to 10⁷ or the
// halvings to the smallest subnormal).
func (ch *chainRun) initStepSize(eps float64) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return eps, fmt.Errorf("step size search cannot start from %v (want positive and finite; lp=%v)", eps, ch.cur.lp)
	}
	sys := ch.sys
	z := &ch.tmp
	oneStep := func() float64 {
		copy(z.q, ch.cur.q)
		copy(z.g, ch.cur.g)
		z.lp = ch.cur.lp
		sys.met.sampleP(ch.r, z.p)
		h0 := sys.energy(z)
		sys.leapfrog(z, eps)
		return h0 - sys.energy(z)
	}
	logAccept := math.Log(0.8)
	direction := -1.0
	if oneStep() > logAccept {
		direction = 1
	}
	for {
		if ch.cancelled() {
			return eps, context.Canceled
		}
		dH := oneStep()
		if direction == 1 && !(dH > logAccept) || direction == -1 && !(dH < logAccept) {
			return eps, nil
		}
		if direction == 1 {
			eps *= 2
		} else {
			eps /= 2
		}
		if eps > 1e7 {
			return eps, fmt.Errorf("step size search passed 1e7: the posterior may be improper (lp=%v)", ch.cur.lp)
		}
		if eps == 0 {
			return eps, fmt.Errorf("step size search reached 0: no acceptably small step size; the log density may be discontinuous (lp=%v)", ch.cur.lp)
		}
	}
}

// adaptMetric sets the metric from the window's estimator est at the end of a slow window;
// buf has est's size.
func (ch *chainRun) adaptMetric(est *covEstimator, buf []float64) error {
	met := ch.sys.met
	switch ch.cfg.Metric {
	case Dense:
		est.regularised(buf)
		return met.setDense(buf)
	case Auto:
		if est.denseHelps() && est.scaled(buf, true) {
			return met.setDense(buf)
		}
		if !est.scaled(buf, false) {
			// A coordinate that did not move in the window: Stan's regularisation.
			est.regularisedDiag(buf)
		}
	case FisherDiag:
		est.fisherDiag(buf)
	default:
		est.regularised(buf)
	}
	return met.setDiag(buf[:met.d])
}

// warmup runs the adaptation iterations and returns the step size for sampling with the
// chain's state over the last iterations (for stuck). A metric estimate that is not positive
// definite and finite (a window whose draws overflowed, or a chain that did not move under
// the dense estimator) keeps the previous metric and is noted in Chain.Notes.
func (ch *chainRun) warmup(total int) (warmEnd, error) {
	cfg := ch.cfg
	eps := cfg.StepSize
	if cfg.Warmup == 0 {
		return warmEnd{eps: eps}, nil
	}
	wrap := func(err error) error { return fmt.Errorf("mcmc: Sample: chain %d: %w", ch.id+1, err) }
	eps, err := ch.initStepSize(eps)
	if err != nil {
		return warmEnd{eps: eps}, wrap(err)
	}
	da := &dualAveraging{delta: cfg.TargetAccept, gamma: cfg.Gamma, t0: cfg.T0, kappa: cfg.Kappa, mu: math.Log(10 * cfg.StepSize)}
	adaptMetric := cfg.Metric != Unit
	win := newWindows(cfg.Warmup, cfg.InitBuffer, cfg.TermBuffer, cfg.Window)
	d := ch.sys.met.d
	est := newCovEstimator(d, cfg.Metric == Dense || cfg.Metric == Auto && d <= autoMaxDim, cfg.Metric == FisherDiag || cfg.Metric == Auto && d <= autoMaxDim)
	buf := make([]float64, len(est.m2))
	if cfg.SaveWarmup {
		ch.out.WarmupDraws = make([]float64, 0, cfg.Warmup*d)
		ch.out.WarmupStats = make([]Stats, 0, cfg.Warmup)
	}
	tail := newTail(cfg, win)
	frozen := 0 // consecutive iterations with a collapsed step size
	for i := range cfg.Warmup {
		if ch.cancelled() {
			return warmEnd{eps: da.final()}, context.Canceled
		}
		st := ch.k.transition(&ch.cur, eps)
		if cfg.SaveWarmup {
			ch.out.WarmupDraws = append(ch.out.WarmupDraws, ch.cur.q...)
			ch.out.WarmupStats = append(ch.out.WarmupStats, st)
		}
		tail.add(i, st)
		if frozen = frozen + 1; !(st.StepSize < collapsedStep) || cfg.Algorithm == NUTS && st.TreeDepth < cfg.MaxDepth {
			frozen = 0
		}
		if frozen == tail.size {
			// As many iterations as the terminal window in a row with a collapsed step size:
			// the rest of this warmup would be as frozen, at up to 2^MaxDepth gradients each.
			ch.out.Notes = append(ch.out.Notes, fmt.Sprintf("warmup stopped at iteration %d of %d: %d transitions in a row with a step size below 1.5e-8 and the maximum tree depth", i+1, cfg.Warmup, frozen))
			return warmEnd{eps: st.StepSize, step: st.StepSize * ch.sys.met.stepScale(), lpMean: st.LogDensity, n: frozen, depthHits: frozen}, nil
		}
		eps = da.learn(st.AcceptStat)
		if adaptMetric {
			if win.inWindow() {
				est.add(ch.cur.q, ch.cur.g)
			}
			if win.endOfWindow() {
				win.advance()
				if err := ch.adaptMetric(est, buf); err != nil {
					ch.out.Notes = append(ch.out.Notes, fmt.Sprintf("metric adaptation at warmup iteration %d: %v; kept the previous metric", i+1, err))
				}
				est.restart()
				if eps, err = ch.initStepSize(eps); err != nil {
					return warmEnd{eps: eps}, wrap(err)
				}
				da.mu = math.Log(10 * eps)
				da.restart()
			}
			win.counter++
		}
		ch.progress(i+1, total, true)
	}
	end := tail.end(da.final(), ch.sys.met.stepScale())
	if !(end.eps > 0) || math.IsInf(end.eps, 1) {
		return end, wrap(fmt.Errorf("adapted step size %v is not positive and finite", end.eps))
	}
	return end, nil
}
