package bnn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// FitConfig configures FitRegression. A zero field takes the default shown.
type FitConfig struct {
	Epochs    int     // passes over the data; default 40 (PBP's protocol)
	BatchSize int     // minibatch size B; default 32
	LR        float64 // Adam step size; default 0.01 (VBP paper)
	InitBeta  float64 // initial noise precision β; default 1
	Seed      uint64  // seeds initialisation, shuffling and noise
	// ConstantLR, for FitSemiStructured only, keeps the step size at LR; by default it
	// anneals by a cosine to LR/100 over the run (optim.Cosine), which removes the SGD jitter
	// that otherwise moves q(γ) by about a posterior sd. Regression fits always use a
	// constant LR (the PBP protocol).
	ConstantLR bool
	// Progress, when not nil, is called after every epoch, from the fitting goroutine.
	Progress func(Progress)
}

func (c FitConfig) withDefaults() FitConfig {
	if c.Epochs == 0 {
		c.Epochs = 40
	}
	if c.BatchSize == 0 {
		c.BatchSize = 32
	}
	if c.LR == 0 {
		c.LR = 0.01
	}
	if c.InitBeta == 0 {
		c.InitBeta = 1
	}
	return c
}

// Regression is a fitted Bayesian neural network regression y ~ N(f(x), β⁻¹).
type Regression struct {
	Net    Net
	Params []float64 // variational parameters, layout of Net
	Beta   float64   // noise precision (Type-II maximum likelihood)
	Loss   float64   // mean −ELBO/N over the last epoch's minibatches
}

// FitRegression fits net to rows data points (X rows×inputs and y rows×outputs, row-major) by
// maximising the ELBO Σ_n E_q[log p(y_n|x_n,W)] − KL(q‖p) with Adam on minibatches of B points,
// each estimating the data term with weight N/B. After every epoch β is set by Type-II maximum
// likelihood, β = N·outputs / Σ_n [(y_n − E[f_n])² + var[f_n]] (the sampling methods evaluate the
// moments given one draw of the hidden layers). Cost per epoch: about 4/3 of one training pass.
// It returns an error for bad input (and a nil fit), and the partial fit with an error for a
// non-finite loss or when ctx is done: ctx is checked before every minibatch, the error then
// wraps ctx.Err() (errors.Is(err, context.Canceled) holds for a cancelled ctx), Params hold the
// last Adam step and Loss and Beta are those of the last completed epoch (Loss 0 and Beta
// InitBeta if none completed).
func FitRegression(ctx context.Context, net Net, X, y []float64, rows int, cfg FitConfig) (*Regression, error) {
	cfg = cfg.withDefaults()
	in, out := net.Sizes[0], net.Sizes[len(net.Sizes)-1]
	if rows <= 0 || len(X) != rows*in || len(y) != rows*out {
		return nil, fmt.Errorf("bnn: FitRegression: data shape (rows=%d, len(X)=%d, len(y)=%d, sizes=%v)", rows, len(X), len(y), net.Sizes)
	}
	if err := checkSchedule("FitRegression", cfg.BatchSize, cfg.Epochs, cfg.LR); err != nil {
		return nil, err
	}
	np := net.NumParams()
	r := rng.New(cfg.Seed, 0)
	m := &Regression{Net: net, Params: make([]float64, np), Beta: cfg.InitBeta}
	net.Init(m.Params, r.Rand)
	B := min(cfg.BatchSize, rows)
	xb := make([]float64, B*in)
	yb := make([]float64, B*out)
	var ws Workspace
	N := float64(rows)
	mb := minibatch{
		name: "FitRegression", rows: rows, batch: B, epochs: cfg.Epochs, rand: r.Rand,
		opt: optim.NewAdam(np, optim.AdamConfig{LR: cfg.LR}),
		loss: func(t *ad.Tape, pv ad.Var, idx []int) ad.Var {
			for i, p := range idx {
				copy(xb[i*in:(i+1)*in], X[p*in:(p+1)*in])
				copy(yb[i*out:(i+1)*out], y[p*out:(p+1)*out])
			}
			b := len(idx)
			ll := net.GaussLogLikNode(t, &ws, pv, xb, yb, b, m.Beta, N/float64(b), r.Rand)
			kl := net.KLNode(t, pv)
			return t.MulC(t.Sub(kl, ll), 1/N)
		},
		epochDone: func(loss float64) float64 {
			m.Loss = loss
			m.Beta = m.typeIIBeta(&ws, X, y, rows, r.Rand)
			return m.Beta
		},
		observe: cfg.Progress,
	}
	return m, mb.run(ctx, m.Params)
}

// chunk is the number of rows evaluated at once outside training (keeps BLAS serial).
const chunk = 64

func (m *Regression) typeIIBeta(ws *Workspace, X, y []float64, rows int, r *rand.Rand) float64 {
	in, out := m.Net.Sizes[0], m.Net.Sizes[len(m.Net.Sizes)-1]
	ss := 0.0
	for lo := 0; lo < rows; lo += chunk {
		b := min(chunk, rows-lo)
		mu, v := m.Net.Moments(ws, m.Params, X[lo*in:(lo+b)*in], b, r)
		for i, yi := range y[lo*out : (lo+b)*out] {
			d := yi - mu[i]
			ss += d*d + v[i]
		}
	}
	return float64(rows*out) / ss
}

// Predict returns the predictive mean and variance of y (rows×outputs) at X: E[f] and
// var[f] + 1/β in closed form for VBP and DVI; for the sampling methods the moments of the
// mixture over samples draws of the hidden layers (each draw's output moments are exact given
// the draw). Deterministic for a given seed.
func (m *Regression) Predict(X []float64, rows, samples int, seed uint64) (mean, variance []float64) {
	in, out := m.Net.Sizes[0], m.Net.Sizes[len(m.Net.Sizes)-1]
	mean = make([]float64, rows*out)
	variance = make([]float64, rows*out)
	var ws Workspace
	r := rng.New(seed, 1)
	S := 1
	if m.Net.Method.Sampling() {
		S = max(samples, 1)
	}
	for lo := 0; lo < rows; lo += chunk {
		b := min(chunk, rows-lo)
		mo, vo := mean[lo*out:(lo+b)*out], variance[lo*out:(lo+b)*out]
		for range S {
			mu, v := m.Net.Moments(&ws, m.Params, X[lo*in:(lo+b)*in], b, r.Rand)
			for i := range mo {
				mo[i] += mu[i]
				vo[i] += v[i] + mu[i]*mu[i] // E[f²] accumulates
			}
		}
		for i := range mo {
			mo[i] /= float64(S)
			vo[i] = vo[i]/float64(S) - mo[i]*mo[i] + 1/m.Beta
		}
	}
	return mean, variance
}

// LogPredictive returns log p(y_n | x_n) for every row (summed over outputs): for VBP and DVI the
// Gaussian log N(y; E[f], var[f] + 1/β); for the sampling methods the log of the average over
// samples draws of the hidden layers of N(y; E[f|draw], var[f|draw] + 1/β).
func (m *Regression) LogPredictive(X, y []float64, rows, samples int, seed uint64) []float64 {
	in, out := m.Net.Sizes[0], m.Net.Sizes[len(m.Net.Sizes)-1]
	lp := make([]float64, rows)
	var ws Workspace
	r := rng.New(seed, 1)
	S := 1
	if m.Net.Method.Sampling() {
		S = max(samples, 1)
	}
	acc := make([]float64, chunk*S)
	for lo := 0; lo < rows; lo += chunk {
		b := min(chunk, rows-lo)
		yy := y[lo*out : (lo+b)*out]
		for s := range S {
			mu, v := m.Net.Moments(&ws, m.Params, X[lo*in:(lo+b)*in], b, r.Rand)
			for i := range b {
				l := 0.0
				for o := range out {
					j := i*out + o
					vv := v[j] + 1/m.Beta
					d := yy[j] - mu[j]
					l += -0.5 * (log2Pi + math.Log(vv) + d*d/vv)
				}
				acc[i*S+s] = l
			}
		}
		for i := range b {
			lp[lo+i] = mathx.LogSumExp(acc[i*S:(i+1)*S]) - math.Log(float64(S))
		}
	}
	return lp
}
