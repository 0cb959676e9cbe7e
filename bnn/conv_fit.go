package bnn

import (
	"context"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// ClassifierConfig configures FitClassifier. A zero field takes the default shown.
type ClassifierConfig struct {
	Epochs    int     // passes over the data; default 10
	BatchSize int     // minibatch size B; default 128
	LR        float64 // Adam step size; default 0.001 (VBP paper's image experiments)
	Seed      uint64  // seeds initialisation, shuffling and noise
	// Progress, when not nil, is called after every epoch, from the fitting goroutine
	// (Progress.Beta is 0).
	Progress func(Progress)
}

func (c ClassifierConfig) withDefaults() ClassifierConfig {
	if c.Epochs == 0 {
		c.Epochs = 10
	}
	if c.BatchSize == 0 {
		c.BatchSize = 128
	}
	if c.LR == 0 {
		c.LR = 0.001
	}
	return c
}

// Classifier is a fitted Bayesian ConvNet classifier y ~ Categorical(softmax(f(x))).
type Classifier struct {
	Net    ConvNet
	Params []float64 // variational parameters, layout of Net
	Loss   float64   // mean −ELBO/N over the last epoch's minibatches
}

// FitClassifier fits net to rows images X (rows×net.Inputs(), row-major) with labels y in
// [0, net.Outputs()) by maximising the ELBO Σ_n E_q[log p(y_n|x_n,W)] − KL(q‖p) with Adam on
// shuffled minibatches of B images, each estimating the data term with weight N/B (the loss
// per step is (KL − (N/B)·Σ_batch E log p)/N). VBP and DVI use the Taylor approximation of
// E[logsumexp] (Net.CategoricalLogLik), the sampling methods one draw per image. Cost per
// epoch: one forward and backward pass over the data. It returns an error for bad input (and a
// nil fit), and the partial fit with an error for a non-finite loss or when ctx is done: ctx is
// checked before every minibatch, the error then wraps ctx.Err() (errors.Is(err,
// context.Canceled) holds for a cancelled ctx), Params hold the last Adam step and Loss is that
// of the last completed epoch (0 if none completed).
func FitClassifier(ctx context.Context, net ConvNet, X []float64, y []int, rows int, cfg ClassifierConfig) (*Classifier, error) {
	cfg = cfg.withDefaults()
	in, K := net.Inputs(), net.Outputs()
	if rows <= 0 || len(X) != rows*in || len(y) != rows {
		return nil, fmt.Errorf("bnn: FitClassifier: data shape (rows=%d, len(X)=%d, len(y)=%d, inputs=%d)", rows, len(X), len(y), in)
	}
	for i, c := range y {
		if c < 0 || c >= K {
			return nil, fmt.Errorf("bnn: FitClassifier: label outside [0, %d) (row=%d, label=%d)", K, i, c)
		}
	}
	if err := checkSchedule("FitClassifier", cfg.BatchSize, cfg.Epochs, cfg.LR); err != nil {
		return nil, err
	}
	np := net.NumParams()
	r := rng.New(cfg.Seed, 0)
	m := &Classifier{Net: net, Params: make([]float64, np)}
	net.Init(m.Params, r.Rand)
	B := min(cfg.BatchSize, rows)
	xb := make([]float64, B*in)
	yb := make([]int, B)
	var ws ConvWorkspace
	N := float64(rows)
	mb := minibatch{
		name: "FitClassifier", rows: rows, batch: B, epochs: cfg.Epochs, rand: r.Rand,
		opt: optim.NewAdam(np, optim.AdamConfig{LR: cfg.LR}),
		loss: func(t *ad.Tape, pv ad.Var, idx []int) ad.Var {
			for i, p := range idx {
				copy(xb[i*in:(i+1)*in], X[p*in:(p+1)*in])
				yb[i] = y[p]
			}
			b := len(idx)
			ll := net.CategoricalLogLikNode(t, &ws, pv, xb, yb, b, N/float64(b), r.Rand)
			kl := net.KLNode(t, pv)
			return t.MulC(t.Sub(kl, ll), 1/N)
		},
		epochDone: func(loss float64) float64 { m.Loss = loss; return 0 },
		observe:   cfg.Progress,
	}
	return m, mb.run(ctx, m.Params)
}

// Predict returns predictive class probabilities (rows×Outputs) for the images X, averaging
// softmax over samples draws (at least 1): for the sampling methods each draw is a whole
// forward pass (hidden layers by local reparameterisation, then one draw of the Gaussian
// output); for VBP and DVI the output moments are computed once in closed form and the draws
// are of the logits f ~ N(E[f], diag var[f]) only. Deterministic for a given seed.
func (c *Classifier) Predict(X []float64, rows, samples int, seed uint64) []float64 {
	in, K := c.Net.Inputs(), c.Net.Outputs()
	if len(X) < rows*in {
		panic(fmt.Sprintf("bnn: Classifier.Predict: X has %d values, want %d×%d", len(X), rows, in))
	}
	S := max(samples, 1)
	probs := make([]float64, rows*K)
	var ws ConvWorkspace
	r := rng.New(seed, 1)
	f := make([]float64, K)
	moments := !c.Net.Method.Sampling()
	for lo := 0; lo < rows; lo += chunk {
		b := min(chunk, rows-lo)
		po := probs[lo*K : (lo+b)*K]
		var mu, v []float64
		for s := range S {
			if s == 0 || !moments {
				mu, v = c.Net.Moments(&ws, c.Params, X[lo*in:(lo+b)*in], b, r.Rand)
			}
			for i := range b {
				for j := range K {
					f[j] = mu[i*K+j] + math.Sqrt(v[i*K+j])*r.NormFloat64()
				}
				lse := mathx.LogSumExp(f)
				for j := range K {
					po[i*K+j] += math.Exp(f[j]-lse) / float64(S)
				}
			}
		}
	}
	return probs
}
