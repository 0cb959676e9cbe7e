package cnp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// LossFunc records the loss of dataset i of a meta-dataset on t, with p the tape's copy of the
// parameters and r a stream for the dataset's random choices (a context/target split).
type LossFunc func(t *ad.Tape, p ad.Var, i int, r *rng.Stream) (ad.Var, error)

// TrainConfig configures Train. Zero fields take the defaults shown.
type TrainConfig struct {
	LR      float64 // Adam step size (PyTorch defaults otherwise); default 3e-4, the thesis's ConvCNP rate
	MaxIter int     // iteration cap; default 10,000
	Batch   int     // datasets per iteration B; default 5
	Seed    uint64  // shuffling and the loss's random choices
	// Stop, when set, is called after every iteration with the batch losses so far and ends
	// training when it returns true: the thesis's early-stopping rule lives with the APOVI
	// training loop (package apovi) and is passed in here, so that both use one rule.
	Stop func(losses []float64) bool
	// Progress, when set, is called after every iteration.
	Progress func(iter int, loss float64)
}

// TrainResult is what Train did.
type TrainResult struct {
	Iters   int       // iterations run
	Losses  []float64 // the batch loss of every iteration
	Stopped bool      // Stop ended training before MaxIter
}

// Train minimises a meta-dataset loss over params in place with Adam, as the thesis's
// train_metamodel does (apovi.md §3): each iteration draws min(B, n) datasets from a
// shuffled order (reshuffled after each pass), and steps on Σ_b loss_b / B — the divisor is B
// even when n < B. The gradient of each dataset is taken on its own tape pass and summed,
// so memory is that of one dataset. A non-finite loss or gradient stops training with an
// error naming the iteration; cancellation returns the result so far and an error wrapping
// the context's cause. Cost per iteration: min(B, n) forward and backward passes plus one
// Adam step.
func Train(ctx context.Context, params []float64, n int, loss LossFunc, cfg TrainConfig) (TrainResult, error) {
	if cfg.LR == 0 {
		cfg.LR = 3e-4
	}
	if cfg.MaxIter == 0 {
		cfg.MaxIter = 10000
	}
	if cfg.Batch == 0 {
		cfg.Batch = 5
	}
	var res TrainResult
	switch {
	case n < 1:
		return res, fmt.Errorf("cnp: Train: a meta-dataset of %d datasets (n=%d)", n, n)
	case !(cfg.LR > 0) || math.IsInf(cfg.LR, 0):
		return res, fmt.Errorf("cnp: Train: LR must be positive and finite (LR=%v)", cfg.LR)
	case cfg.MaxIter < 0:
		return res, fmt.Errorf("cnp: Train: MaxIter must be ≥ 0 (MaxIter=%d)", cfg.MaxIter)
	case cfg.Batch < 0:
		return res, fmt.Errorf("cnp: Train: Batch must be ≥ 1 (Batch=%d)", cfg.Batch)
	case loss == nil:
		return res, errors.New("cnp: Train: nil loss")
	}
	opt := optim.NewAdam(len(params), optim.AdamConfig{LR: cfg.LR})
	shuf := rng.New(cfg.Seed, 0)
	draws := rng.New(cfg.Seed, 1)
	order := shuf.Perm(n)
	pos := 0
	grad := make([]float64, len(params))
	var t ad.Tape
	nb := min(cfg.Batch, n)
	for it := range cfg.MaxIter {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("cnp: Train: stopped at iteration %d: %w", it, context.Cause(ctx))
		}
		clear(grad)
		total := 0.0
		for range nb {
			if pos == n {
				order, pos = shuf.Perm(n), 0
			}
			i := order[pos]
			pos++
			t.Reset()
			p := t.Input(params)
			l, err := loss(&t, p, i, draws)
			if err != nil {
				return res, fmt.Errorf("cnp: Train: iteration %d, dataset %d: %w", it, i, err)
			}
			t.Backward(l)
			v := t.Float(l)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return res, fmt.Errorf("cnp: Train: iteration %d, dataset %d: loss is %v", it, i, v)
			}
			total += v
			for k, g := range t.Grad(p) {
				grad[k] += g
			}
		}
		inv := 1 / float64(cfg.Batch)
		for k := range grad {
			grad[k] *= inv
			if math.IsNaN(grad[k]) || math.IsInf(grad[k], 0) {
				return res, fmt.Errorf("cnp: Train: iteration %d: gradient component %d is %v", it, k, grad[k])
			}
		}
		opt.Step(params, grad)
		res.Iters = it + 1
		res.Losses = append(res.Losses, total*inv)
		if cfg.Progress != nil {
			cfg.Progress(it, total*inv)
		}
		if cfg.Stop != nil && cfg.Stop(res.Losses) {
			res.Stopped = true
			break
		}
	}
	return res, nil
}
