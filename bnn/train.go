package bnn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/optim"
)

// Progress is what a fit's observer sees after every epoch of FitRegression, FitClassifier and
// FitSemiStructured.
type Progress struct {
	Epoch  int     // epochs done, from 1
	Epochs int     // epochs in the run
	Steps  int     // optimiser steps done (minibatches so far)
	Loss   float64 // mean loss −ELBO/N over the epoch's minibatches
	// Beta is the noise precision after the epoch: FitRegression's Type-II β, FitSemiStructured's
	// σ⁻²; 0 for FitClassifier, which has none.
	Beta float64
}

// minibatch is the training loop shared by the three fits: per epoch one shuffle of the row
// indices (Fisher–Yates from rand), then for each run of batch of them one loss recorded on a
// tape, a backward pass and one optimiser step; after the epoch, epochDone and the observer.
// Cost: the loss's forward and backward pass over the data per epoch, plus O(rows) for the
// shuffle; the loop itself allocates only at the start of run.
type minibatch struct {
	name        string // the exported function, for errors
	rows, batch int    // N and the minibatch size B ≤ N
	epochs      int
	rand        *rand.Rand      // shuffles the rows
	opt         optim.Optimizer // steps the parameters on the loss gradient
	// loss records on t the minibatch loss (an estimate of −ELBO/N) for the data rows idx,
	// with p the parameters' input node.
	loss func(t *ad.Tape, p ad.Var, idx []int) ad.Var
	// epochDone, when not nil, runs after every epoch, before the observer, with the epoch's
	// mean loss: it stores it in the model, updates what is fitted between epochs and returns
	// Progress.Beta.
	epochDone func(loss float64) (beta float64)
	observe   func(Progress) // when not nil, called after every epoch
}

// run trains params in place. It returns an error naming mb.name for a non-finite loss, and
// ctx's error wrapped (errors.Is(err, context.Canceled) holds) when ctx is done; it checks ctx
// before every minibatch, so in both cases params hold the last step taken and what epochDone
// stored is that of the last completed epoch.
func (mb *minibatch) run(ctx context.Context, params []float64) error {
	perm := make([]int, mb.rows)
	for i := range perm {
		perm[i] = i
	}
	var t ad.Tape
	steps := 0
	for epoch := 1; epoch <= mb.epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return mb.cancelled(epoch, err)
		}
		mb.rand.Shuffle(mb.rows, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		sum, nb := 0.0, 0
		for lo := 0; lo < mb.rows; lo += mb.batch {
			if err := ctx.Err(); err != nil {
				return mb.cancelled(epoch, err)
			}
			t.Reset()
			p := t.Input(params)
			loss := mb.loss(&t, p, perm[lo:min(lo+mb.batch, mb.rows)])
			lv := t.Float(loss)
			if math.IsNaN(lv) || math.IsInf(lv, 0) {
				return fmt.Errorf("bnn: %s: non-finite loss (epoch=%d, batch start=%d, loss=%g)", mb.name, epoch, lo, lv)
			}
			t.Backward(loss)
			mb.opt.Step(params, t.Grad(p))
			sum += lv
			nb++
			steps++
		}
		pr := Progress{Epoch: epoch, Epochs: mb.epochs, Steps: steps, Loss: sum / float64(nb)}
		if mb.epochDone != nil {
			pr.Beta = mb.epochDone(pr.Loss)
		}
		if mb.observe != nil {
			mb.observe(pr)
		}
	}
	return nil
}

// checkSchedule returns an error naming fn and the bad value unless batch > 0, epochs ≥ 0 and
// lr is finite and ≥ 0 (after the config's defaults are applied).
func checkSchedule(fn string, batch, epochs int, lr float64) error {
	switch {
	case batch <= 0:
		return fmt.Errorf("bnn: %s: batch size must be positive (BatchSize=%d)", fn, batch)
	case epochs < 0:
		return fmt.Errorf("bnn: %s: epochs must be ≥ 0 (Epochs=%d)", fn, epochs)
	case !(lr >= 0) || math.IsInf(lr, 0):
		return fmt.Errorf("bnn: %s: step size must be finite and ≥ 0 (LR=%g)", fn, lr)
	}
	return nil
}

func (mb *minibatch) cancelled(epoch int, err error) error {
	return fmt.Errorf("bnn: %s: cancelled in epoch %d of %d: %w", mb.name, epoch, mb.epochs, err)
}
