package bnn

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// SemiStructured is a semi-structured regression in the shape of BF-VI's melanoma model M3
// (Dürr et al. 2024, §3.4; papers.md §1.2 E8): an uninterpretable neural-network part and
// interpretable linear coefficients,
//
//	y = g(x_nn; θ) + x_lin·γ + ε,   ε ~ N(0, σ²),
//
// with g a one-hidden-layer ReLU network whose weights θ are point-estimated (MAP under the
// prior N(0, α⁻¹)), σ point-estimated, and a variational posterior q(γ) given by a flow on the
// coefficients (flow.NewBernstein for BF-VI's Bernstein flow, flow.NewAffine for a mean-field
// Gaussian) under the prior N(0, PriorSD²). Everything is trained jointly on the ELBO
//
//	(N/B) Σ_batch log N(y | g + x_lin·γ, σ²) + log p(γ) − log q(γ) + log p(θ),
//
// with γ = T(u; φ), u ~ N(0, I) drawn once per step (reparameterisation; log q(γ) = log N(u) −
// log|det ∂T/∂u|). Layers are single fused Dense nodes; the flow records its own nodes.
type SemiStructured struct {
	Hidden    int       // width of g's hidden layer
	Flow      flow.Flow // posterior of γ; Dim() is the number of linear columns
	PriorSD   float64   // prior sd of each γ_j; 0 means 1 (on normalised data)
	PriorPrec float64   // α of g's weight prior; 0 means DefaultPriorPrec
}

// SemiFit is a fitted SemiStructured model.
type SemiFit struct {
	Model  SemiStructured
	NNIn   int       // inputs of g
	Params []float64 // [W1 (NNIn×Hidden), b1 (Hidden), w2 (Hidden), b2, log σ, φ (flow)]
	Loss   float64   // mean −ELBO/N over the last epoch
}

func (s *SemiStructured) numNN(k int) int { return k*s.Hidden + 2*s.Hidden + 1 }

// FitSemiStructured fits the model to rows data points: Xnn (rows×k) feeds g, Xlin
// (rows×Flow.Dim()) the linear part, y the targets. Adam (cfg.LR, default 0.01, annealed by a
// cosine to 1% unless cfg.ConstantLR) on minibatches of cfg.BatchSize for cfg.Epochs epochs;
// q(γ) converges at the rate of the number of steps, not epochs: on small data sets use
// enough epochs for a few thousand steps (compare with ConditionalPosterior). cfg.InitBeta is
// unused (σ is a parameter); Progress.Beta is σ⁻². It returns an error for
// bad input (and a nil fit), and the partial fit with an error for a non-finite loss or when
// ctx is done: ctx is checked before every minibatch, the error then wraps ctx.Err()
// (errors.Is(err, context.Canceled) holds for a cancelled ctx), Params hold the last Adam step
// and Loss is that of the last completed epoch (0 if none completed).
func FitSemiStructured(ctx context.Context, s SemiStructured, Xnn []float64, k int, Xlin, y []float64, rows int, cfg FitConfig) (*SemiFit, error) {
	cfg = cfg.withDefaults()
	d := s.Flow.Dim()
	if rows <= 0 || k <= 0 || s.Hidden <= 0 || len(Xnn) != rows*k || len(Xlin) != rows*d || len(y) != rows {
		return nil, fmt.Errorf("bnn: FitSemiStructured: data shape (rows=%d, k=%d, d=%d, hidden=%d, len(Xnn)=%d, len(Xlin)=%d, len(y)=%d)", rows, k, d, s.Hidden, len(Xnn), len(Xlin), len(y))
	}
	if err := checkSchedule("FitSemiStructured", cfg.BatchSize, cfg.Epochs, cfg.LR); err != nil {
		return nil, err
	}
	psd := s.PriorSD
	if psd == 0 {
		psd = 1
	}
	alpha := s.PriorPrec
	if alpha == 0 {
		alpha = DefaultPriorPrec
	}
	nn := s.numNN(k)
	np := nn + 1 + s.Flow.NumParams()
	r := rng.New(cfg.Seed, 0)
	f := &SemiFit{Model: s, NNIn: k, Params: make([]float64, np)}
	p := f.Params
	for i := range k * s.Hidden {
		p[i] = r.NormFloat64() / math.Sqrt(float64(k))
	}
	for i := range s.Hidden {
		p[k*s.Hidden+s.Hidden+i] = r.NormFloat64() / math.Sqrt(float64(s.Hidden))
	}
	s.Flow.Init(p[nn+1:], r.Rand)
	B := min(cfg.BatchSize, rows)
	var sched optim.Schedule
	if !cfg.ConstantLR {
		sched = optim.Cosine{Steps: cfg.Epochs * ((rows + B - 1) / B), Min: 0.01}
	}
	xb, lb, yb := make([]float64, B*k), make([]float64, B*d), make([]float64, B)
	u := make([]float64, d)
	N := float64(rows)
	mb := minibatch{
		name: "FitSemiStructured", rows: rows, batch: B, epochs: cfg.Epochs, rand: r.Rand,
		opt: optim.NewAdam(np, optim.AdamConfig{LR: cfg.LR, Schedule: sched}),
		loss: func(t *ad.Tape, P ad.Var, idx []int) ad.Var {
			for i, q := range idx {
				copy(xb[i*k:(i+1)*k], Xnn[q*k:(q+1)*k])
				copy(lb[i*d:(i+1)*d], Xlin[q*d:(q+1)*d])
				yb[i] = y[q]
			}
			for j := range u {
				u[j] = r.NormFloat64()
			}
			elbo := s.record(t, P, k, xb, lb, yb, len(idx), u, N, psd, alpha)
			return t.MulC(elbo, -1/N)
		},
		epochDone: func(loss float64) float64 {
			f.Loss = loss
			return math.Exp(-2 * p[nn])
		},
		observe: cfg.Progress,
	}
	return f, mb.run(ctx, p)
}

// record builds the minibatch ELBO estimate on t.
func (s *SemiStructured) record(t *ad.Tape, P ad.Var, k int, xb, lb, yb []float64, b int, u []float64, N, psd, alpha float64) ad.Var {
	H, d := s.Hidden, s.Flow.Dim()
	nn := s.numNN(k)
	W1 := t.AsMatrix(t.Slice(P, 0, k*H), k, H)
	b1 := t.Slice(P, k*H, k*H+H)
	w2 := t.AsMatrix(t.Slice(P, k*H+H, k*H+2*H), H, 1)
	b2 := t.Slice(P, k*H+2*H, nn)
	logSigma := t.Slice(P, nn, nn+1)
	phi := t.Slice(P, nn+1, t.Size(P))
	h := t.DenseC(ad.Mat{Rows: b, Cols: k, Data: xb[:b*k]}, W1, b1, ad.ReLU)
	g := t.Dense(h, w2, b2, ad.Linear)
	gamma, logdet := s.Flow.Forward(t, phi, t.Const(u...))
	mean := t.Add(g, t.MatVecC(ad.Mat{Rows: b, Cols: d, Data: lb[:b*d]}, gamma))
	ll := density.Normal(t, t.ConstRef(yb[:b]), mean, t.Exp(logSigma))
	prior := density.Normal(t, gamma, t.Const(0), t.Const(psd))
	theta := t.Slice(P, 0, nn)
	wd := t.MulC(t.Dot(theta, theta), -alpha/2) // log p(θ) up to a constant
	// −log q(γ) = −log N(u) + log|det|; the u term is constant in the parameters.
	return t.Add(t.Add(t.MulC(ll, N/float64(b)), prior), t.Add(logdet, wd))
}

// Coefficients draws n samples of γ from q (row-major n×d) with the given seed.
func (f *SemiFit) Coefficients(n int, seed uint64) []float64 {
	d := f.Model.Flow.Dim()
	nn := f.Model.numNN(f.NNIn)
	out := make([]float64, n*d)
	r := rng.New(seed, 2)
	u := make([]float64, d)
	var t ad.Tape
	for i := range n {
		for j := range u {
			u[j] = r.NormFloat64()
		}
		t.Reset()
		phi := t.ConstRef(f.Params[nn+1:])
		z, _ := f.Model.Flow.Forward(&t, phi, t.Const(u...))
		copy(out[i*d:(i+1)*d], t.Value(z))
	}
	return out
}

// Sigma returns the fitted noise standard deviation.
func (f *SemiFit) Sigma() float64 { return math.Exp(f.Params[f.Model.numNN(f.NNIn)]) }

// Predict returns the predictive mean and variance of y at rows points: g(x_nn) + x_lin·γ
// averaged over samples draws of γ from q, variance over the draws plus σ².
func (f *SemiFit) Predict(Xnn, Xlin []float64, rows, samples int, seed uint64) (mean, variance []float64) {
	k, d := f.NNIn, f.Model.Flow.Dim()
	if len(Xnn) != rows*k || len(Xlin) != rows*d {
		panic(fmt.Sprintf("bnn: SemiFit.Predict: len(Xnn)=%d, len(Xlin)=%d for rows=%d", len(Xnn), len(Xlin), rows))
	}
	g := f.Coefficients(samples, seed)
	mean, variance = make([]float64, rows), make([]float64, rows)
	s2 := f.Sigma() * f.Sigma()
	for i := range rows {
		nn := f.nnOut(Xnn[i*k : (i+1)*k])
		s, ss := 0.0, 0.0
		for n := range samples {
			v := nn
			for c := range d {
				v += Xlin[i*d+c] * g[n*d+c]
			}
			s += v
			ss += v * v
		}
		m := s / float64(samples)
		mean[i] = m
		variance[i] = max(ss/float64(samples)-m*m, 0) + s2
	}
	return mean, variance
}

// nnOut is the fitted network's output g(x) at one input row x.
func (f *SemiFit) nnOut(x []float64) float64 {
	k, H, p := f.NNIn, f.Model.Hidden, f.Params
	out := p[k*H+2*H]
	for j := range H {
		a := p[k*H+j]
		for c := range k {
			a += x[c] * p[c*H+j]
		}
		out += max(a, 0) * p[k*H+H+j]
	}
	return out
}

// ConditionalPosterior returns the exact posterior of γ given the fitted network g and noise
// σ on the data (Xnn, Xlin, y): with g and σ fixed the model is linear-Gaussian in γ, so
//
//	γ | y, g, σ ~ N(μ, Σ),  Σ = (ZᵀZ/σ² + I/s²)⁻¹,  μ = Σ Zᵀ(y − g(X))/σ²,
//
// with Z = Xlin and s = PriorSD. It is the optimum of the ELBO over q(γ) for that g and σ, and
// so the reference a fitted q should match: compare q's moments (Coefficients) with it. It
// returns μ (d) and Σ (d×d row-major). Cost O(rows·(d² + k·Hidden) + d³).
func (f *SemiFit) ConditionalPosterior(Xnn, Xlin, y []float64, rows int) (mu, cov []float64, err error) {
	k, d := f.NNIn, f.Model.Flow.Dim()
	if len(Xnn) != rows*k || len(Xlin) != rows*d || len(y) != rows || rows < 1 {
		return nil, nil, fmt.Errorf("bnn: SemiFit.ConditionalPosterior: data shape (rows=%d, len(Xnn)=%d, len(Xlin)=%d, len(y)=%d; want k=%d, d=%d)", rows, len(Xnn), len(Xlin), len(y), k, d)
	}
	psd := f.Model.PriorSD
	if psd == 0 {
		psd = 1
	}
	s2 := f.Sigma() * f.Sigma()
	prec := mat.NewSymDense(d, nil)
	rhs := mat.NewVecDense(d, nil)
	for i := range rows {
		z := Xlin[i*d : (i+1)*d]
		r := (y[i] - f.nnOut(Xnn[i*k:(i+1)*k])) / s2
		for a := range d {
			rhs.SetVec(a, rhs.AtVec(a)+z[a]*r)
			for b := a; b < d; b++ {
				prec.SetSym(a, b, prec.At(a, b)+z[a]*z[b]/s2)
			}
		}
	}
	for a := range d {
		prec.SetSym(a, a, prec.At(a, a)+1/(psd*psd))
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, nil, errors.New("bnn: SemiFit.ConditionalPosterior: posterior precision is not positive definite")
	}
	var sigma mat.SymDense
	if err := ch.InverseTo(&sigma); err != nil {
		return nil, nil, fmt.Errorf("bnn: SemiFit.ConditionalPosterior: %w", err)
	}
	var m mat.VecDense
	m.MulVec(&sigma, rhs)
	mu, cov = make([]float64, d), make([]float64, d*d)
	for a := range d {
		mu[a] = m.AtVec(a)
		for b := range d {
			cov[a*d+b] = sigma.At(a, b)
		}
	}
	return mu, cov, nil
}
