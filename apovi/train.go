package apovi

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// Task is one element of a meta-dataset Ξ. For the ELBO its loss uses every point,
// Context ∪ Target (Target may be empty). For NPML and NPVI a task with an empty Target is
// split at random each time it is drawn (SplitContextTarget); a task with both parts is a
// fixed split, as the image experiment's masks are fixed per image for the whole of training
// (apovi.md §2).
type Task struct {
	Context, Target Dataset
}

// TrainConfig configures Train. A zero field takes the default shown.
type TrainConfig struct {
	Objective Objective
	// LR is Adam's step size (default 1e-3). Adam otherwise has PyTorch's defaults:
	// β = (0.9, 0.999), ε = 1e-8, no weight decay, no schedule.
	LR float64
	// MaxIter caps the iterations (Adam steps; the report's "epochs", apovi.md D4); default 10,000.
	MaxIter int
	// Batch is B: each iteration draws min(B, |Ξ|) tasks from a loader that visits Ξ in a fresh
	// random order per pass, and the loss is Σ_b loss_b / B — divided by B even when |Ξ| < B,
	// as the thesis's code does (apovi.md §3). Default 1.
	Batch int
	// Samples is S, the Monte Carlo samples per loss (default 1: all thesis meta-training;
	// single-dataset training uses 5, apovi.md §2).
	Samples int
	// EarlyStop is the thesis's rule, on the training losses; the zero value trains to MaxIter.
	EarlyStop EarlyStop
	// Validation is held-out early stopping, an alternative to (or a companion of) the
	// thesis's rule; the zero value (Loss nil) is off.
	Validation Validation
	// MinContext and MaxContext bound the random context size of NPML/NPVI tasks without a
	// fixed split: n_c ~ U{MinContext, …, min(MaxContext, N−1) − 1} (defaults 3 and 20).
	MinContext, MaxContext int
	// Seed seeds the loader, the splits and the Monte Carlo draws (stream rng.New(Seed, 1)).
	Seed uint64
	// Progress, when not nil, is called after every iteration from the training goroutine.
	Progress func(TrainProgress)
}

// Validation is early stopping on a held-out loss (not in the thesis, whose rule watches the
// training loss; a meta-dataset of 10 images overfits while that loss keeps falling). Every
// Every iterations Train calls Loss, which evaluates the model at its current parameters on
// data it is not trained on (a held-out loss or metric, smaller is better); when Patience
// calls in a row have not improved on the best value, training stops and the parameters are
// reset to those of the best call. Loss is also called after the last iteration when training
// ends at MaxIter, so the result always holds the best evaluated parameters. A non-finite value
// is an error. Defaults: Every 25, Patience 8.
//
// Cost: one Loss call per Every iterations and a copy of the parameters per improvement.
type Validation struct {
	Every, Patience int
	Loss            func() (float64, error)
}

// Enabled reports whether held-out early stopping is on (Loss set).
func (v Validation) Enabled() bool { return v.Loss != nil }

// TrainProgress is what a training observer sees after every iteration.
type TrainProgress struct {
	Iter, MaxIter int     // iterations done (from 1) and the cap
	Loss          float64 // this iteration's batch loss Σ_b loss_b / B
}

// TrainResult is a training run's outcome. The model's parameters hold the last step taken.
type TrainResult struct {
	Iters        int       // iterations run
	Losses       []float64 // batch loss per iteration
	EarlyStopped bool      // the early-stopping rule fired before MaxIter
	Wall         time.Duration
	// With Validation: the held-out values (ValIters[k] is the iteration count at value
	// ValLosses[k]) and the iteration count whose parameters the model holds (BestIter).
	ValIters  []int
	ValLosses []float64
	BestIter  int
}

func (c TrainConfig) withDefaults() TrainConfig {
	if c.LR == 0 {
		c.LR = 1e-3
	}
	if c.MaxIter == 0 {
		c.MaxIter = 10000
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Samples == 0 {
		c.Samples = 1
	}
	if c.MinContext == 0 {
		c.MinContext = 3
	}
	if c.MaxContext == 0 {
		c.MaxContext = 20
	}
	if c.Validation.Every == 0 {
		c.Validation.Every = 25
	}
	if c.Validation.Patience == 0 {
		c.Validation.Patience = 8
	}
	return c
}

func (c TrainConfig) validate() error {
	switch {
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("apovi: Train: TrainConfig.LR must be finite and > 0 (LR=%v)", c.LR)
	case c.MaxIter < 1:
		return fmt.Errorf("apovi: Train: TrainConfig.MaxIter must be ≥ 1 (MaxIter=%d)", c.MaxIter)
	case c.Batch < 1:
		return fmt.Errorf("apovi: Train: TrainConfig.Batch must be ≥ 1 (Batch=%d)", c.Batch)
	case c.Samples < 1:
		return fmt.Errorf("apovi: Train: TrainConfig.Samples must be ≥ 1 (Samples=%d)", c.Samples)
	case c.MinContext < 1:
		return fmt.Errorf("apovi: Train: TrainConfig.MinContext must be ≥ 1 (MinContext=%d)", c.MinContext)
	case c.MaxContext <= c.MinContext:
		return fmt.Errorf("apovi: Train: TrainConfig.MaxContext must exceed MinContext (MinContext=%d, MaxContext=%d)", c.MinContext, c.MaxContext)
	case c.Validation.Every < 1 || c.Validation.Patience < 1:
		return fmt.Errorf("apovi: Train: TrainConfig.Validation.Every and Patience must be ≥ 1 (Every=%d, Patience=%d)", c.Validation.Every, c.Validation.Patience)
	case c.Objective != ELBO && c.Objective != NPML && c.Objective != NPVI:
		return fmt.Errorf("apovi: Train: unknown TrainConfig.Objective (Objective=%d)", int(c.Objective))
	}
	if err := c.EarlyStop.Validate(); err != nil {
		return fmt.Errorf("apovi: Train: TrainConfig.%w", err)
	}
	return nil
}

// Train fits m's parameters in place to the meta-dataset tasks with Adam (apovi.md §3): each
// iteration draws min(B, |Ξ|) tasks, records Σ_b loss_b/B on one tape (each loss_b the model's
// per-dataset loss of cfg.Objective with S samples, normalised per point as in apovi.md §2),
// takes one Adam step on its gradient and checks the early-stopping rule on the history of
// batch losses. Training on one dataset (the thesis's train_model: POVI, or APOVI at |Ξ| = 0)
// is Train with one task, B = 1.
//
// It fails before the first step on a bad config field, an empty meta-dataset, or a task whose
// data are invalid, of the wrong dimensions or too small to split; during training on a
// non-finite loss (naming the iteration). When ctx is done it returns the partial result with
// an error wrapping context.Cause(ctx); the parameters then hold the last step taken.
//
// Cost per iteration: min(B, |Ξ|) losses and their gradients, plus an O(P) Adam step.
func Train(ctx context.Context, m Model, tasks []Task, cfg TrainConfig) (*TrainResult, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("apovi: Train: the meta-dataset has no tasks (len(tasks)=0)")
	}
	dx, dy := m.Dims()
	np := cfg.Objective != ELBO
	for i, tk := range tasks {
		if err := checkTask(tk, dx, dy, np, cfg.MinContext); err != nil {
			return nil, fmt.Errorf("apovi: Train: tasks[%d]: %w", i, err)
		}
	}
	start := time.Now()
	r := rng.New(cfg.Seed, 1)
	params := m.Params()
	opt := optim.NewAdam(len(params), optim.AdamConfig{LR: cfg.LR})
	ld := loader{n: len(tasks), r: r}
	res := &TrainResult{Losses: make([]float64, 0, min(cfg.MaxIter, 1<<16))}
	nb := min(cfg.Batch, len(tasks))
	val := cfg.Validation
	var best []float64
	bestVal, since := math.Inf(1), 0
	// validate evaluates the held-out loss after res.Iters iterations and reports whether the
	// patience is used up.
	validate := func() (bool, error) {
		v, err := val.Loss()
		if err != nil {
			return false, fmt.Errorf("apovi: Train: validation after %d iterations: %w", res.Iters, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false, fmt.Errorf("apovi: Train: non-finite validation loss (iterations=%d, loss=%v)", res.Iters, v)
		}
		res.ValIters, res.ValLosses = append(res.ValIters, res.Iters), append(res.ValLosses, v)
		if v < bestVal {
			bestVal, since, res.BestIter = v, 0, res.Iters
			best = append(best[:0], params...)
			return false, nil
		}
		since++
		return since >= val.Patience, nil
	}
	restore := func() error {
		if best == nil {
			return nil
		}
		copy(params, best)
		return m.SetParams(params)
	}
	var t ad.Tape
	for it := 0; it < cfg.MaxIter; it++ {
		if ctx.Err() != nil {
			res.Wall = time.Since(start)
			return res, fmt.Errorf("apovi: Train: stopped after %d iterations: %w", res.Iters, context.Cause(ctx))
		}
		t.Reset()
		p := t.Input(params)
		var acc ad.Var
		for b := range nb {
			ti := ld.next()
			tk := tasks[ti]
			c, tg := tk.Context, tk.Target
			if np && tg.N == 0 {
				var err error
				if c, tg, err = SplitContextTarget(c, cfg.MinContext, cfg.MaxContext, r); err != nil {
					return res, fmt.Errorf("apovi: Train: %w", err)
				}
			}
			l, err := m.Loss(&t, p, cfg.Objective, c, tg, cfg.Samples, r.Rand)
			if err != nil {
				return res, fmt.Errorf("apovi: Train: iteration %d: %w", it, err)
			}
			if v := t.Float(l); math.IsNaN(v) || math.IsInf(v, 0) {
				res.Wall = time.Since(start)
				return res, fmt.Errorf("apovi: Train: non-finite loss (iteration=%d, task=%d, N=%d, loss=%v)", it, ti, c.N+tg.N, v)
			}
			if b == 0 {
				acc = l
			} else {
				acc = t.Add(acc, l)
			}
		}
		loss := t.MulC(acc, 1/float64(cfg.Batch))
		lv := t.Float(loss)
		if math.IsNaN(lv) || math.IsInf(lv, 0) {
			res.Wall = time.Since(start)
			return res, fmt.Errorf("apovi: Train: non-finite loss (iteration=%d, loss=%v)", it, lv)
		}
		t.Backward(loss)
		opt.Step(params, t.Grad(p))
		res.Losses = append(res.Losses, lv)
		res.Iters = it + 1
		if cfg.Progress != nil {
			cfg.Progress(TrainProgress{Iter: it + 1, MaxIter: cfg.MaxIter, Loss: lv})
		}
		if val.Enabled() && (res.Iters%val.Every == 0 || res.Iters == cfg.MaxIter) {
			stop, err := validate()
			if err != nil {
				res.Wall = time.Since(start)
				return res, err
			}
			if stop || res.Iters == cfg.MaxIter {
				res.EarlyStopped = stop && res.Iters < cfg.MaxIter
				if err := restore(); err != nil {
					return res, fmt.Errorf("apovi: Train: restoring the best parameters: %w", err)
				}
				break
			}
		}
		if cfg.EarlyStop.Stop(res.Losses) {
			res.EarlyStopped = it+1 < cfg.MaxIter
			if val.Enabled() {
				if err := restore(); err != nil {
					return res, fmt.Errorf("apovi: Train: restoring the best parameters: %w", err)
				}
			}
			break
		}
	}
	res.Wall = time.Since(start)
	return res, nil
}

// checkTask validates one task against the model's dimensions and the objective's needs.
func checkTask(tk Task, dx, dy int, np bool, minContext int) error {
	if err := checkDims("Context", tk.Context, dx, dy); err != nil {
		return err
	}
	if tk.Target.N == 0 && len(tk.Target.X) == 0 && len(tk.Target.Y) == 0 {
		if np && tk.Context.N < minContext+2 {
			return fmt.Errorf("a random context/target split needs N ≥ MinContext+2 = %d (Context.N=%d)", minContext+2, tk.Context.N)
		}
		return nil
	}
	return checkDims("Target", tk.Target, dx, dy)
}

func checkDims(name string, d Dataset, dx, dy int) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if d.DX != dx || d.DY != dy {
		return fmt.Errorf("%s has DX=%d, DY=%d; the model's are DX=%d, DY=%d", name, d.DX, d.DY, dx, dy)
	}
	return nil
}

// loader visits 0…n−1 one at a time in a random order that is redrawn after each pass, as
// torch.utils.data.DataLoader(shuffle=True) with batch size 1; the pass continues across
// iterations.
type loader struct {
	n    int
	r    *rng.Stream
	perm []int
	pos  int
}

func (l *loader) next() int {
	if l.pos == len(l.perm) {
		if l.perm == nil {
			l.perm = make([]int, l.n)
		}
		for i := range l.perm {
			l.perm[i] = i
		}
		l.r.Shuffle(l.n, func(i, j int) { l.perm[i], l.perm[j] = l.perm[j], l.perm[i] })
		l.pos = 0
	}
	l.pos++
	return l.perm[l.pos-1]
}

// SplitContextTarget splits d at random as the thesis's context_target_split (apovi.md §2):
// n_c ~ U{minContext, …, min(maxContext, N−1) − 1} (exclusive upper bound, as torch.randint),
// then a random permutation gives the first n_c points as the context and all the rest as
// the targets. It fails unless minContext ≥ 1 and min(maxContext, N−1) > minContext.
func SplitContextTarget(d Dataset, minContext, maxContext int, r *rng.Stream) (ctx, tgt Dataset, err error) {
	hi := min(maxContext, d.N-1)
	if minContext < 1 || hi <= minContext {
		return Dataset{}, Dataset{}, fmt.Errorf("SplitContextTarget: no context size in {%d, …, min(%d, N−1)−1} (N=%d)", minContext, maxContext, d.N)
	}
	nc := minContext + r.IntN(hi-minContext)
	perm := r.Perm(d.N)
	return subset(d, perm[:nc]), subset(d, perm[nc:]), nil
}

// subset returns the rows idx of d, in that order.
func subset(d Dataset, idx []int) Dataset {
	out := Dataset{N: len(idx), DX: d.DX, DY: d.DY, X: make([]float64, 0, len(idx)*d.DX), Y: make([]float64, 0, len(idx)*d.DY)}
	for _, i := range idx {
		out.X = append(out.X, d.X[i*d.DX:(i+1)*d.DX]...)
		out.Y = append(out.Y, d.Y[i*d.DY:(i+1)*d.DY]...)
	}
	return out
}
