// Package fit is vigo's variational-inference loop: it fits a family to a target by stochastic
// optimisation of an objective (ELBO, IWELBO, MISELBO), decides when to stop and says why,
// and checks the result with PSIS k̂ on fresh draws.
//
// A fit is a pure function of (target, family, objective, Config, seed): the S Monte Carlo
// draws of a step are split into at most four fixed blocks (by S alone), spread over
// Config.Workers goroutines with one tape each and summed in block order, so the result is
// bit-identical for any number of workers or GOMAXPROCS; the
// State (parameters, optimiser moments, RNG, stopping-rule memory) saves and resumes bit for
// bit. Fit never prints: progress goes to observer functions.
//
// The stopping rule works on a low-noise estimate: every EvalEvery steps the objective (the
// ELBO, or the IWELBO for K > 1) is estimated with the same EvalSamples base draws (common
// random numbers), so differences between
// estimates reflect parameter changes, not fresh Monte Carlo noise. When the gain over the last
// Window estimates falls below Tol nats (Config.Stop: the difference of the window's half means,
// or a regression trend judged against its standard error and the iterates' jitter, or — the
// flows' default — a trend whose gain is not significantly above Tol)
// the step size is cut (×0.2, Decays times) and, after the last cut, the fit stops with the
// reason in words. The result reports the best tracked iterate — the last one, an earlier one,
// or the moving average of the iterates (Config.Average) — by the same estimate.
package fit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// Status says how a fit ended. Not converging is a status, not an error.
type Status int

const (
	// Converged: the ELBO plateaued at the smallest step size.
	Converged Status = iota
	// MaxIterReached: the iteration cap came first.
	MaxIterReached
	// Cancelled: the context was cancelled; the result is partial.
	Cancelled
	// Diverged: a tracking estimate fell DivergeFactor·(1 + |best|) nats below the best one with
	// no step-size reduction left; the result is the best tracked iterate.
	Diverged
)

// DivergeFactor sets when a fit counts as diverged: a tracking ELBO estimate more than
// DivergeFactor·(1 + |best|) nats below the best one so far, where best is the highest
// tracking estimate. No optimisation that is still converging drops a thousand times the
// ELBO's own magnitude between two estimates; one that diverged (a flow's output overflowing,
// say) drops by hundreds of orders of magnitude. The fit then restarts from the best tracked
// iterate with a fresh optimiser at a fifth of the step size, as one of Config.Decays
// reductions; with none left it stops with status Diverged.
const DivergeFactor = 1e3

func (s Status) String() string {
	switch s {
	case Converged:
		return "converged"
	case MaxIterReached:
		return "iteration cap reached"
	case Cancelled:
		return "cancelled"
	case Diverged:
		return "diverged"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// TracePoint is one tracking estimate of the objective (the ELBO; the IWELBO for K > 1).
type TracePoint struct {
	Iter int     `json:"iter"`
	ELBO float64 `json:"elbo"`
	LR   float64 `json:"lr"`
	// AvgELBO is the same estimate at the averaged parameters (Config.Average > 0; else 0).
	AvgELBO float64 `json:"avg_elbo,omitempty"`
}

// Progress is what a progress observer (WithProgress) sees at every tracking estimate. It is
// the shape every long-running part of vigo reports in — mcmc.Progress, bnn.Progress: one
// struct value per event, passed to a func from the working goroutine.
type Progress struct {
	Iter, MaxIter int
	ELBO          float64 // tracking estimate (common random numbers)
	Gain          float64 // gain over the plateau window so far (NaN until it is full)
	LR            float64
	Skipped       int
	// Stage is the family kind of the recipe running (Run sets it; "" for Fit).
	Stage string
	// Line is set on the one event Auto sends when a stage ends: the stage in one line
	// (AutoStage.Line); the other fields are then zero.
	Line string
}

// Option adjusts a fit beyond its Config.
type Option func(*options)

type options struct {
	observers []func(Progress)
	resume    *State
	warm      *warmStart  // WithWarmStart or WithPreconditioner; see warm.go
	workers   int         // WithWorkers (Run)
	search    *modeSearch // withSearch (Auto): a mode search to reuse
}

// WithProgress calls f at every tracking estimate (and, in Auto, once at the end of each
// stage), from the fitting goroutine.
func WithProgress(f func(Progress)) Option {
	return func(o *options) { o.observers = append(o.observers, f) }
}

// WithResume continues the fit saved in s; the rest of the run equals the uninterrupted one.
func WithResume(s *State) Option { return func(o *options) { o.resume = s } }

// Result is a fitted approximation with its diagnostics.
type Result struct {
	// Family is the approximation in the target's coordinates (the base family composed with
	// the preconditioning map); Params are its parameters.
	Family *family.Affine
	Params []float64

	Status     Status
	Reason     string // why the fit stopped, in words
	Reported   string // which iterate Params are (last, best tracked or averaged), in words
	Iterations int
	GradEvals  int // target gradient evaluations, including initialisation
	Skipped    int // steps dropped because of a non-finite gradient
	InitNote   string
	Trace      []TracePoint
	Elapsed    time.Duration

	// Diagnostics on DiagDraws fresh draws z ~ q (unconstrained).
	ELBO, ELBOSE  float64 // mean of log p − log q and its Monte Carlo standard error
	KHat          float64 // PSIS Pareto k̂ of the log weights
	KHatThreshold float64 // min(1 − 1/log₁₀ S, 0.7)
	// KHatSD is the bootstrap standard deviation of KHat (diag.KhatBootVar, khatBoot
	// resamples of the diagnostic log weights): how far k̂ would move with another set of as
	// many draws (eight schools at 1,000 draws: 0.19 for the Bernstein flow, 0.13 for mean
	// field). A verdict whose k̂ is within one KHatSD of the threshold says it is borderline.
	KHatSD  float64
	PSISESS float64
	// KHatVerdict is the judgement of k̂ alone (diag.Verdict, with the family's advice);
	// Verdict adds what the multi-start search saw (Assess): the verdict vigo fit prints.
	KHatVerdict string
	Verdict     string

	// Starts is the number of mode searches of the multi-start initialisation (0 when there
	// was none: InitZero, a warm start), StartsFailed those that failed, and Modes the
	// distinct modes found, best (highest Laplace evidence) first: q started at Modes[0].
	// A warm-started fit reports its warm stage's search.
	Starts       int
	StartsFailed int
	// StartsFailedWhy is why the first failed mode search failed (with the model's own
	// run-time error when it can tell, model.Explainer); "" when none failed.
	StartsFailedWhy string
	Modes           []Mode

	Draws []float64 // DiagDraws × Dim, row-major
	LogP  []float64 // log p(z) of each draw (Jacobian included)
	LogQ  []float64 // log q(z)

	State *State

	// Recipe is the recipe Run ran (nil for a fit made by Fit with a family of the caller's).
	Recipe *Recipe
	// WarmStart is the full-rank fit a Recipe with WarmStart WarmFullRank started from
	// (nil otherwise).
	WarmStart *Result

	search *modeSearch // the mode search the fit started from (Auto reuses it)
	// Ensemble is the ensemble a Recipe with an Ensemble fitted (its members and bounds; the
	// Result is their mixture), nil otherwise.
	Ensemble *EnsembleResult
}

// plateauSchedule is the step-size multiplier the stopping rule cuts.
type plateauSchedule struct{ scale *float64 }

func (p plateauSchedule) Scale(int) float64 { return *p.scale }

// Fit fits fam to target by maximising the objective obj and reports the result with its
// diagnostics: the loop under Run, for a family of the caller's. Errors are for bad
// configuration and data-dependent failure (a non-finite gradient under NaNFail, or MaxSkips
// in a row); non-convergence is a Status.
//
// Cancellation (the contract of fit, mcmc and bnn alike): a cancelled ctx ends the fit at its
// next step and Fit returns the partial result (Status Cancelled, diagnostics computed)
// together with an error wrapping context.Cause(ctx), so errors.Is(err, context.Canceled)
// (or DeadlineExceeded) holds and a caller that checks only err never takes a partial fit
// for a finished one. Every other error comes with a nil result.
func Fit(ctx context.Context, target model.Target, fam family.Family, obj objective.Options, cfg Config, opts ...Option) (*Result, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var o options
	for _, f := range opts {
		f(&o)
	}
	d := target.Dim()
	if err := CheckDim("fit: Fit", d); err != nil {
		return nil, err
	}
	if fam.Dim() != d {
		return nil, fmt.Errorf("fit: Fit: family dimension %d, target dimension %d", fam.Dim(), d)
	}
	if _, ok := fam.(family.EntropyFamily); obj.Entropy && !ok {
		return nil, fmt.Errorf("fit: Fit: objective.Options.Entropy needs a closed-form entropy, which family %T does not have", fam)
	}
	st, aff, err := initialState(target, fam, cfg, o.resume, o.warm, o.search)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, target: target, fam: aff, obj: obj, st: st}
	if err := r.setup(); err != nil {
		return nil, err
	}
	defer r.stop()
	status, reason, err := r.loop(ctx, o.observers)
	if err != nil {
		return nil, err
	}
	if err := r.sync(); err != nil {
		return nil, err
	}
	// Report the best tracked iterate when it beats the last one: with a constant step size the
	// iterates jitter around the optimum (and may drift below a good start), and common random
	// numbers make the tracking estimates comparable. The best of many estimates on the same
	// draws is biased upwards (it is partly the iterate that suits those draws), so with
	// Config.ConfirmBest it is reported only when it also beats the last iterate on fresh draws.
	params, reported := st.Params, fmt.Sprintf("the last iterate (step %d)", st.Step)
	if status == Diverged {
		reported = fmt.Sprintf("the %s: the fit diverged after it", st.BestFrom)
	} else if n := len(st.Trace); n > 0 && st.BestELBO != nil && *st.BestELBO > st.Trace[n-1].ELBO {
		gain, se, m := math.Inf(1), 0.0, 0
		if cfg.ConfirmBest {
			gain, se, m = r.confirmBest()
		}
		if !cfg.ConfirmBest {
			params = st.Best
			reported = fmt.Sprintf("the %s: its tracking ELBO %.4g beats the last iterate's %.4g", st.BestFrom, *st.BestELBO, st.Trace[n-1].ELBO)
		} else if gain > 2*se || gain > 0 && (math.IsInf(se, 0) || math.IsNaN(se)) {
			// (An infinite or undefined s.e. with a positive gain: the last iterate's fresh
			// values overflow or are not finite — it diverged — and the best one is reported.)
			params = st.Best
			reported = fmt.Sprintf("the %s: its tracking ELBO %.4g beats the last iterate's %.4g, and by %.3g ± %.2g nats on %d fresh draws", st.BestFrom, *st.BestELBO, st.Trace[n-1].ELBO, gain, se, m)
		} else {
			reported = fmt.Sprintf("the last iterate (step %d): the %s had a higher tracking ELBO (%.4g against %.4g), but on %d fresh draws it gains only %.3g ± %.2g nats (not 2 s.e.)", st.Step, st.BestFrom, *st.BestELBO, st.Trace[n-1].ELBO, m, gain, se)
		}
	}
	res := &Result{
		Family: aff, Params: append([]float64(nil), params...),
		Status: status, Reason: reason, Reported: reported, Iterations: st.Step, Skipped: st.Skipped,
		InitNote: st.InitNote, Trace: append([]TracePoint(nil), st.Trace...),
	}
	res.Starts, res.StartsFailed, res.Modes = st.Starts, st.StartsFailed, cloneModes(st.Modes)
	res.StartsFailedWhy = st.StartsFailedWhy
	res.search = st.search
	r.diagnose(res)
	res.GradEvals = st.GradEvals
	res.State = st.clone() // diagnostics do not touch the RNG or optimiser: resuming is exact
	res.Elapsed = time.Since(start)
	if status == Cancelled {
		return res, fmt.Errorf("fit: %w after %d iterations (partial result)", context.Cause(ctx), res.Iterations)
	}
	return res, nil
}

// initialState builds the preconditioned family and the starting state (or restores one).
func initialState(target model.Target, fam family.Family, cfg Config, resume *State, warm *warmStart, reuse *modeSearch) (*State, *family.Affine, error) {
	d := target.Dim()
	if resume != nil {
		aff, err := family.NewAffine(fam, resume.Shift, resume.Scale, resume.Diag)
		if err != nil {
			return nil, nil, err
		}
		if len(resume.Params) != fam.NumParams() {
			return nil, nil, fmt.Errorf("fit: resume: state has %d parameters, family needs %d", len(resume.Params), fam.NumParams())
		}
		return resume.clone(), aff, nil
	}
	st := &State{LRScale: 1, Params: make([]float64, fam.NumParams()), lastGain: math.NaN()}
	if warm != nil {
		st.Starts, st.StartsFailed, st.Modes = warm.starts, warm.failed, cloneModes(warm.modes)
		st.StartsFailedWhy = warm.why
		return warm.state(st, target, fam, cfg)
	}
	_, diagOnly := fam.(*family.MeanField)
	shift := make([]float64, d)
	if cfg.InitPoint != nil {
		if len(cfg.InitPoint) != d {
			return nil, nil, fmt.Errorf("fit: Fit: Config.InitPoint has %d values, the target's dimension is %d", len(cfg.InitPoint), d)
		}
		copy(shift, cfg.InitPoint)
	}
	var scale []float64
	baseScale := 1.0
	if cfg.Init == InitLaplace {
		ms := reuse
		if ms == nil || !ms.sameConfig(cfg) {
			ms = searchModes(target, cfg)
			st.GradEvals += ms.evals
		}
		st.search = ms
		st.Starts, st.StartsFailed, st.Modes = ms.starts, ms.failed, cloneModes(ms.modes)
		st.StartsFailedWhy = errText(ms.why)
		lap, err := ms.best, ms.err0
		if lap == nil && err == nil {
			err = fmt.Errorf("every one of %d mode searches failed", ms.starts)
		}
		if lap != nil {
			copy(shift, lap.Mode)
			st.InitNote = lap.Note + ms.startNote()
			if diagOnly {
				scale = make([]float64, d)
				for i := range scale {
					scale[i] = math.Sqrt(lap.Cov[i*d+i])
				}
			} else {
				scale = clone(lap.Chol)
			}
		} else {
			st.InitNote = "Laplace start failed (" + err.Error() + "); started at N(0, InitScale²·I) instead"
		}
	}
	if scale == nil {
		diagOnly = true
		scale = make([]float64, d)
		for i := range scale {
			scale[i] = 1
		}
		baseScale = cfg.InitScale
		if st.InitNote == "" {
			st.InitNote = fmt.Sprintf("start at N(0, %g²·I) in unconstrained space", cfg.InitScale)
		}
	}
	return startAt(st, fam, shift, scale, diagOnly, baseScale, cfg)
}

// startAt finishes a fresh state: the family pushed through z = shift + scale·u, initialised at
// N(0, baseScale²·I) in u, and the RNG of cfg.Seed.
func startAt(st *State, fam family.Family, shift, scale []float64, diagOnly bool, baseScale float64, cfg Config) (*State, *family.Affine, error) {
	aff, err := family.NewAffine(fam, shift, scale, diagOnly)
	if err != nil {
		return nil, nil, err
	}
	aff.Init(st.Params, nil, baseScale)
	st.Shift, st.Scale, st.Diag = shift, scale, diagOnly
	s := rng.New(cfg.Seed, 0)
	b, _ := s.MarshalBinary()
	st.RNG = b
	return st, aff, nil
}

// runner holds the buffers of one fit.
type runner struct {
	cfg    Config
	target model.Target
	fam    *family.Affine
	obj    objective.Options
	st     *State

	n, noise int
	ests     []*objective.Estimator // per worker: the objective
	trk      []*objective.Estimator // per worker: the plain ELBO for tracking
	opt      optim.Optimizer
	rnd      *rng.Stream
	eps      []float64 // S × noise of the current step
	evalEps  []float64 // EvalSamples × noise, fixed for the whole fit
	vals     []float64 // per-draw objective values
	grads    []float64 // per-draw gradients, S × n
	grad     []float64
	trackAt  []float64 // the parameters a tracking estimate evaluates

	// worker pool
	jobs []chan job
	wg   sync.WaitGroup
}

type job struct {
	track bool // tracking estimate (no gradient) instead of a gradient step
	count int
}

func (r *runner) setup() error {
	cfg := r.cfg
	r.n = r.fam.NumParams()
	W := max(1, min(cfg.Workers, numBlocks(max(cfg.Samples, cfg.EvalSamples))))
	var q family.Family = r.fam
	if r.obj.Entropy {
		e, ok := r.fam.Entropic()
		if !ok {
			return fmt.Errorf("fit: objective.Options.Entropy needs a closed-form entropy, which family %T does not have", r.fam.Base)
		}
		q = e
	}
	if r.obj.STL {
		// Sticking the landing needs log q's score at the draws: a flow base gives it without
		// inverting (family.DrawScorer).
		if s, ok := r.fam.Scorer(); ok {
			q = s
		}
	}
	for range W {
		e, err := objective.New(r.target, q, r.obj)
		if err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		tr, err := objective.New(r.target, r.fam, objective.Options{K: r.obj.K})
		if err != nil {
			return fmt.Errorf("fit: %w", err)
		}
		r.ests = append(r.ests, e)
		r.trk = append(r.trk, tr)
	}
	r.noise = r.ests[0].NoiseLen(1)
	r.opt = r.newOptimizer()
	if r.st.Opt != nil {
		if err := r.opt.UnmarshalBinary(r.st.Opt); err != nil {
			return fmt.Errorf("fit: resume: optimiser state: %w", err)
		}
	}
	r.rnd = new(rng.Stream)
	if err := r.rnd.UnmarshalBinary(r.st.RNG); err != nil {
		return fmt.Errorf("fit: resume: %w", err)
	}
	r.eps = make([]float64, cfg.Samples*r.noise)
	r.evalEps = make([]float64, max(cfg.EvalSamples/r.trackK(), 1)*r.trackK()*r.fam.NoiseDim())
	ev := rng.New(cfg.Seed, 1)
	for i := range r.evalEps {
		r.evalEps[i] = ev.NormFloat64()
	}
	r.vals = make([]float64, max(cfg.Samples, cfg.EvalSamples))
	r.grads = make([]float64, numBlocks(cfg.Samples)*r.n)
	r.grad = make([]float64, r.n)
	if W > 1 {
		r.jobs = make([]chan job, W)
		for w := range W {
			r.jobs[w] = make(chan job)
			go r.worker(w, W)
		}
	}
	return nil
}

func (r *runner) stop() {
	for _, c := range r.jobs {
		close(c)
	}
}

// sync writes the optimiser and RNG states into the State.
func (r *runner) sync() error {
	var err error
	if r.st.Opt, err = r.opt.MarshalBinary(); err != nil {
		return fmt.Errorf("fit: saving optimiser state: %w", err)
	}
	if r.st.RNG, err = r.rnd.MarshalBinary(); err != nil {
		return fmt.Errorf("fit: saving RNG state: %w", err)
	}
	return nil
}

// maxBlocks is the number of blocks the draws of one step are split into (fewer when there
// are fewer draws): each block is one objective.Estimator.Evaluate call, whose per-call cost
// is O(number of parameters) — the parameter vector copied onto the tape and its adjoint
// cleared, a flow's per-parameter-value preparations (the packed MADE output layer), the
// gradient scaled and summed into the step's. Evaluated draw by draw, that was ≈ 45% of a
// Bernstein flow's fit on eight schools (≈ 4,600 parameters, S = 32). The split depends on the
// number of draws only, never on Config.Workers, so the result stays bit-identical for any
// number of workers; up to maxBlocks workers share a step.
const maxBlocks = 4

// numBlocks returns the number of blocks of count draws.
func numBlocks(count int) int {
	if count <= 0 {
		return 0
	}
	per := (count + maxBlocks - 1) / maxBlocks
	return (count + per - 1) / per
}

// block returns the draws [lo, hi) of block b of count draws.
func block(b, count int) (lo, hi int) {
	per := (count + maxBlocks - 1) / maxBlocks
	return b * per, min((b+1)*per, count)
}

// worker w evaluates blocks w, w+W, w+2W, … of each job.
func (r *runner) worker(w, W int) {
	for j := range r.jobs[w] {
		for b := w; b < numBlocks(j.count); b += W {
			r.evalBlock(w, b, j.count, j.track)
		}
		r.wg.Done()
	}
}

// evalBlock evaluates block b of count draws on worker w's estimator: their values into
// r.vals and, for a gradient step, the block's mean gradient into r.grads[b·n:].
func (r *runner) evalBlock(w, b, count int, track bool) {
	lo, hi := block(b, count)
	if track {
		per := r.fam.NoiseDim() * r.trackK()
		r.trk[w].Evaluate(r.trackAt, r.evalEps[lo*per:hi*per], nil)
		copy(r.vals[lo:hi], r.trk[w].GroupValues())
		return
	}
	r.ests[w].Evaluate(r.st.Params, r.eps[lo*r.noise:hi*r.noise], r.grads[b*r.n:(b+1)*r.n])
	copy(r.vals[lo:hi], r.ests[w].GroupValues())
}

// run evaluates count draws over the pool and waits.
func (r *runner) run(count int, track bool) {
	if r.jobs == nil {
		for b := range numBlocks(count) {
			r.evalBlock(0, b, count, track)
		}
		return
	}
	r.wg.Add(len(r.jobs))
	for _, c := range r.jobs {
		c <- job{track: track, count: count}
	}
	r.wg.Wait()
}

func (r *runner) loop(ctx context.Context, observers []func(Progress)) (Status, string, error) {
	cfg, st := r.cfg, r.st
	S := cfg.Samples
	for {
		if err := ctx.Err(); err != nil {
			return Cancelled, fmt.Sprintf("cancelled at step %d", st.Step), nil
		}
		if st.Step >= cfg.MaxIter {
			return MaxIterReached, fmt.Sprintf("iteration cap %d reached before the ELBO plateaued (last window gain %s)", cfg.MaxIter, fmtGain(st.lastGain)), nil
		}
		if st.Step%cfg.EvalEvery == 0 {
			stop, status, reason := r.track(observers)
			if stop {
				return status, reason, nil
			}
		}
		r.drawNoise()
		r.run(S, false)
		st.GradEvals += S * max(r.obj.K, 1)
		clear(r.grad)
		bad := math.IsNaN(r.vals[0])
		for s := range S {
			if math.IsNaN(r.vals[s]) || math.IsInf(r.vals[s], 0) {
				bad = true
			}
		}
		for b := range numBlocks(S) {
			lo, hi := block(b, S)
			g, nb := r.grads[b*r.n:(b+1)*r.n], float64(hi-lo) // g: the block's mean
			for i, gi := range g {
				r.grad[i] -= nb * gi // loss = −objective
			}
		}
		badParam := -1
		invS := 1 / float64(S)
		for i := range r.grad {
			r.grad[i] *= invS
			if math.IsNaN(r.grad[i]) || math.IsInf(r.grad[i], 0) {
				badParam = i
				bad = true
				break
			}
		}
		if bad {
			if cfg.NaN == NaNFail {
				return 0, "", fmt.Errorf("fit: non-finite objective or gradient at step %d (%s)", st.Step, r.paramName(badParam))
			}
			st.Skipped++
			st.skipRun++
			if st.skipRun >= cfg.MaxSkips {
				return 0, "", fmt.Errorf("fit: %d steps in a row had a non-finite objective or gradient, last at step %d (%s): the target is not finite where q puts its mass%s", st.skipRun, st.Step, r.paramName(badParam), explainAt(r.target, r.fam.Shift))
			}
			st.Step++
			continue
		}
		st.skipRun = 0
		r.opt.Step(st.Params, r.grad)
		if cfg.Average > 0 {
			if len(st.Avg) != len(st.Params) {
				st.Avg = append(st.Avg[:0], st.Params...)
			}
			a := 1 / float64(cfg.Average)
			for i, p := range st.Params {
				st.Avg[i] += a * (p - st.Avg[i])
			}
		}
		st.Step++
	}
}

// drawNoise fills the base draws of one step: S·noise standard normals, or with
// Config.Antithetic ⌈S/2⌉ draws and their negatives (draw S−1−s is −draw s; the middle draw of
// an odd S stays plain).
func (r *runner) drawNoise() {
	if !r.cfg.Antithetic {
		for i := range r.eps {
			r.eps[i] = r.rnd.NormFloat64()
		}
		return
	}
	S, n := r.cfg.Samples, r.noise
	for s := range (S + 1) / 2 {
		a, b := r.eps[s*n:(s+1)*n], r.eps[(S-1-s)*n:(S-s)*n]
		for i := range a {
			a[i] = r.rnd.NormFloat64()
		}
		if s != S-1-s {
			for i := range b {
				b[i] = -a[i]
			}
		}
	}
}

// paramName describes variational parameter i for an error message.
func (r *runner) paramName(i int) string {
	if i < 0 {
		return "objective value"
	}
	return fmt.Sprintf("variational parameter %d of %d", i, r.n)
}

// trackK is the group size of the tracking estimate: the objective's K (1: the ELBO).
func (r *runner) trackK() int { return max(r.obj.K, 1) }

// trackELBO is the common-random-number estimate at params of the objective being maximised:
// the ELBO, or for K > 1 the IWELBO with the same K over ⌊EvalSamples/K⌋ groups.
func (r *runner) trackELBO(params []float64) float64 {
	r.trackAt = params
	groups := max(r.cfg.EvalSamples/r.trackK(), 1)
	r.run(groups, true)
	r.st.GradEvals += groups * r.trackK()
	return mean(r.vals[:groups])
}

// confirmBestStream is the RNG stream (of Config.Seed) of confirmBest's fresh draws.
const confirmBestStream = 4

// confirmBest compares the best tracked iterate with the last one on m fresh base draws
// (EvalSamples of them, stream confirmBestStream, the same draws for both): the mean and the
// standard error of the paired differences of the objective's per-draw terms. Cost 2·m
// target evaluations.
func (r *runner) confirmBest() (gain, se float64, m int) {
	fresh := make([]float64, len(r.evalEps))
	s := rng.New(r.cfg.Seed, confirmBestStream)
	for i := range fresh {
		fresh[i] = s.NormFloat64()
	}
	saved := r.evalEps
	r.evalEps = fresh
	defer func() { r.evalEps = saved }()
	m = max(r.cfg.EvalSamples/r.trackK(), 1)
	r.trackELBO(r.st.Best)
	d := append([]float64(nil), r.vals[:m]...)
	r.trackELBO(r.st.Params)
	for i := range d {
		d[i] -= r.vals[i]
	}
	gain, se = meanSE(d)
	return gain, se, m
}

// track computes the common-random-number ELBO estimate (and that of the averaged parameters)
// and applies the plateau rule, or the divergence rule (DivergeFactor).
func (r *runner) track(observers []func(Progress)) (stop bool, status Status, reason string) {
	cfg, st := r.cfg, r.st
	elbo := r.trackELBO(st.Params)
	lr := cfg.LR * st.LRScale
	report := func(gain float64) {
		for _, f := range observers {
			f(Progress{Iter: st.Step, MaxIter: cfg.MaxIter, ELBO: elbo, Gain: gain, LR: lr, Skipped: st.Skipped})
		}
	}
	if isFinite(elbo) && st.BestELBO != nil && elbo < *st.BestELBO-DivergeFactor*(1+math.Abs(*st.BestELBO)) {
		report(math.NaN())
		stop, reason := r.diverged(elbo)
		if stop {
			return true, Diverged, reason
		}
		return false, Converged, ""
	}
	avg := math.NaN()
	if cfg.Average > 0 && len(st.Avg) == len(st.Params) {
		avg = r.trackELBO(st.Avg)
	}
	if isFinite(elbo) {
		tp := TracePoint{Iter: st.Step, ELBO: elbo, LR: lr}
		if isFinite(avg) {
			tp.AvgELBO = avg
		}
		st.Trace = append(st.Trace, tp)
		st.Window = append(st.Window, elbo)
		if st.BestELBO == nil || elbo > *st.BestELBO {
			v := elbo
			st.BestELBO = &v
			st.Best = append(st.Best[:0], st.Params...)
			st.BestFrom = fmt.Sprintf("best tracked iterate (step %d)", st.Step)
		}
	}
	if isFinite(avg) && (st.BestELBO == nil || avg > *st.BestELBO) {
		st.BestELBO = &avg
		st.Best = append(st.Best[:0], st.Avg...)
		st.BestFrom = fmt.Sprintf("averaged iterate (moving average over ≈%d steps, at step %d)", cfg.Average, st.Step)
	}
	gain, hit, why := math.NaN(), false, ""
	if len(st.Window) >= cfg.Window {
		gain, hit, why = cfg.plateau(st.Window[len(st.Window)-cfg.Window:])
		st.lastGain = gain
	}
	report(gain)
	if !hit {
		return false, Converged, ""
	}
	if st.DecaysUsed < cfg.Decays {
		st.DecaysUsed++
		st.LRScale *= 0.2
		st.Window = append(st.Window[:0], elbo)
		return false, Converged, ""
	}
	return true, Converged, fmt.Sprintf("%s, after %d step-size reductions (step size %.3g)%s", why, st.DecaysUsed, lr, restartsNote(st.Restarts))
}

// diverged handles a tracking estimate elbo that fell below the best by more than
// DivergeFactor·(1 + |best|): with a step-size reduction left, the fit restarts from the best
// tracked iterate (parameters, iterate average) with a fresh optimiser at a fifth of the step
// size and the window restarted at the best estimate; else it stops (status Diverged) with the
// best iterate as its parameters.
func (r *runner) diverged(elbo float64) (stop bool, reason string) {
	cfg, st := r.cfg, r.st
	what := fmt.Sprintf("diverged at step %d (tracking ELBO %.3g against the best %.4g)", st.Step, elbo, *st.BestELBO)
	copy(st.Params, st.Best)
	if len(st.Avg) == len(st.Params) {
		copy(st.Avg, st.Best)
	}
	if st.DecaysUsed >= cfg.Decays {
		return true, fmt.Sprintf("%s after %d step-size reductions (step size %.3g): stopped at the %s%s",
			what, st.DecaysUsed, cfg.LR*st.LRScale, st.BestFrom, restartsNote(st.Restarts))
	}
	st.DecaysUsed++
	st.LRScale *= 0.2
	r.opt = r.newOptimizer()
	st.Window = append(st.Window[:0], *st.BestELBO)
	st.Restarts = append(st.Restarts, fmt.Sprintf("%s: restarted from the %s at step size %.3g", what, st.BestFrom, cfg.LR*st.LRScale))
	return false, ""
}

// restartsNote is the divergence restarts of a fit in words, to append to its reason ("" when
// there were none).
func restartsNote(restarts []string) string {
	if len(restarts) == 0 {
		return ""
	}
	return "; " + strings.Join(restarts, "; ")
}

// newOptimizer returns a fresh optimiser of cfg.Optimizer at cfg.LR, scaled by the state's
// LRScale.
func (r *runner) newOptimizer() optim.Optimizer {
	if r.cfg.Optimizer == OptRMSprop {
		return optim.NewRMSprop(r.n, optim.RMSpropConfig{LR: r.cfg.LR, Schedule: plateauSchedule{&r.st.LRScale}})
	}
	return optim.NewAdam(r.n, optim.AdamConfig{LR: r.cfg.LR, Schedule: plateauSchedule{&r.st.LRScale}})
}

// plateau applies the stopping rule cfg.Stop to the window w of the last Window tracking
// estimates: the window's gain, whether it counts as a plateau, and why in words.
func (cfg Config) plateau(w []float64) (gain float64, hit bool, why string) {
	span := (len(w) - 1) * cfg.EvalEvery
	if cfg.Stop == StopNoise {
		gain, se, _ := trend(w)
		if gain-cfg.TrendZ*se > cfg.Tol {
			return gain, false, ""
		}
		return gain, true, fmt.Sprintf("ELBO gain below its noise: the trend over the last %d steps gained %s ± %.2g (s.e.), not above tol %g with one-sided z = %g",
			span, fmtGain(gain), se, cfg.Tol, cfg.TrendZ)
	}
	if cfg.Stop == StopTrend {
		gain, se, jitter := trend(w)
		if gain+cfg.TrendZ*se >= max(cfg.Tol, jitter/2) {
			return gain, false, ""
		}
		return gain, true, fmt.Sprintf("ELBO plateaued: the trend over the last %d steps gained %s ± %.2g (s.e.), below max(tol %g, half the jitter %.2g of one estimate) with one-sided z = %g",
			span, fmtGain(gain), se, cfg.Tol, jitter, cfg.TrendZ)
	}
	h := len(w) / 2
	gain = mean(w[len(w)-h:]) - mean(w[:h])
	if gain >= cfg.Tol {
		return gain, false, ""
	}
	return gain, true, fmt.Sprintf("ELBO plateaued: gain %s over the last %d steps < tol %g nats", fmtGain(gain), span, cfg.Tol)
}

// trend fits y_i = a + b·i (i = 0..n−1, n ≥ 3) by least squares and returns the gain over the
// window b·(n−1), its standard error and the residual standard deviation (n − 2 degrees of
// freedom). Cost O(n).
func trend(y []float64) (gain, se, sd float64) {
	n := float64(len(y))
	ti := (n - 1) / 2
	my := mean(y)
	var sxy, sxx float64
	for i, v := range y {
		dx := float64(i) - ti
		sxy += dx * (v - my)
		sxx += dx * dx
	}
	b := sxy / sxx
	var rss float64
	for i, v := range y {
		e := v - my - b*(float64(i)-ti)
		rss += e * e
	}
	sd = math.Sqrt(rss / (n - 2))
	return b * (n - 1), sd / math.Sqrt(sxx) * (n - 1), sd
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func fmtGain(g float64) string {
	if math.IsNaN(g) {
		return "not yet measured"
	}
	return fmt.Sprintf("%.3g nats", g)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// diagnose draws DiagDraws fresh points from q and computes the ELBO, its standard error and
// PSIS k̂ of the log weights log p − log q.
func (r *runner) diagnose(res *Result) {
	cfg := r.cfg
	n, d := cfg.DiagDraws, r.target.Dim()
	nd := r.fam.NoiseDim()
	stream := rng.New(cfg.Seed, 2)
	eps := make([]float64, nd)
	res.Draws = make([]float64, n*d)
	res.LogP = make([]float64, n)
	res.LogQ = make([]float64, n)
	logw := make([]float64, n)
	for i := range res.Modes {
		res.Modes[i].LogQ = r.fam.LogProb(res.Params, res.Modes[i].Z)
	}
	var t ad.Tape
	finite := true
	for i := range n {
		for k := range eps {
			eps[k] = stream.NormFloat64()
		}
		z := res.Draws[i*d : (i+1)*d]
		res.LogQ[i] = r.fam.Sample(res.Params, eps, z)
		t.Reset()
		res.LogP[i] = t.Float(r.target.LogDensity(&t, t.Input(z)))
		logw[i] = res.LogP[i] - res.LogQ[i]
		if math.IsNaN(logw[i]) || math.IsInf(logw[i], 0) {
			finite = false
		}
	}
	r.st.GradEvals += n
	res.ELBO, res.ELBOSE = meanSE(logw)
	res.KHatThreshold = diag.KhatThreshold(n)
	advice := "try a full-rank Gaussian or a flow family"
	switch r.fam.Base.(type) {
	case *family.MeanField:
	case *family.Flow:
		advice = "try a more flexible flow (more layers, a higher degree, or another kind)"
	default:
		advice = "try a flow family"
	}
	if !finite {
		res.KHat = math.Inf(1)
		res.KHatVerdict = "log p − log q is not finite on some draws: do not trust this approximation — " + advice
		res.Verdict = Assess(res).Text
		return
	}
	ps, err := diag.PSIS(logw)
	if err != nil {
		res.KHat = math.Inf(1)
		res.KHatVerdict = "PSIS failed (" + err.Error() + "): do not trust this approximation — " + advice
		res.Verdict = Assess(res).Text
		return
	}
	res.KHat, res.PSISESS = ps.K, ps.ESS
	res.KHatSD = math.Sqrt(diag.KhatBootVar(logw, khatBoot, rng.New(cfg.Seed, 3).Rand))
	res.KHatVerdict = diag.Verdict(ps.K, n, advice) + borderline(ps.K, res.KHatThreshold, res.KHatSD)
	res.Verdict = Assess(res).Text
}

// borderline is the verdict's note when k̂ is within one bootstrap sd of its threshold (the
// classification could flip with another set of draws), else "".
func borderline(k, thr, sd float64) string {
	if !(math.Abs(k-thr) < sd) {
		return ""
	}
	return fmt.Sprintf(" (borderline: k̂ is within one bootstrap sd, %.2f, of the threshold %.2f; k̂ on more draws gives a firmer answer)", sd, thr)
}

// khatBoot is the number of bootstrap resamples behind Result.KHatSD: ≈ 22 ms for 1,000
// diagnostic draws (diag's BenchmarkKhatBootVar), and an sd estimated to ≈ 7% (1/√(2·99)).
const khatBoot = 100

func meanSE(x []float64) (m, se float64) {
	m = mean(x)
	if len(x) < 2 || math.IsInf(m, 0) || math.IsNaN(m) {
		return m, math.NaN()
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// explainAt is ", at z: why" when target can say why its log density is not finite at z
// (model.Explainer), else "".
func explainAt(target model.Target, z []float64) string {
	e, ok := target.(model.Explainer)
	if !ok || len(z) != target.Dim() {
		return ""
	}
	if why := e.ExplainAt(z); why != nil {
		return "; at q's starting location: " + why.Error()
	}
	return ""
}
