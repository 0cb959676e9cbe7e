// Package family holds vigo's variational families: the mean-field Gaussian, the full-rank
// Gaussian and the low-rank-plus-diagonal Gaussian.
//
// A family holds structure (dimension, rank, how a scale is kept positive), never values: the
// variational parameters arrive as a caller-owned slice, or as a Var on an ad.Tape (DESIGN.md
// §2). Reparameterisation is explicit: the caller draws standard-normal base noise ε of length
// NoiseDim() and Draw maps it to z = T(ε; φ) on the tape together with log q(z; φ), so the
// caller owns the random stream and a fit is reproducible bit for bit.
//
// Positive scales. Every family keeps its scales (σ, the Cholesky diagonal, D) positive through
// a map of an unconstrained parameter: exp by default (the parameter is ω = log σ, as in Stan's
// ADVI, Kucukelbir et al. 2017 §2.5), or softplus with the Softplus option. Exp is the default
// because it makes the parameterisation scale-free: an optimizer step of size δ in ω changes σ
// by the factor e^δ whatever σ is, so posteriors whose scales differ by orders of magnitude
// (1e-3 next to 1e2, common in the posteriordb models) are reached in a number of steps that is
// logarithmic in the scale, and the closed-form entropy is linear in ω (constant gradient 1).
// Softplus grows only linearly, which tames a too-large learning rate that overshoots σ, but a
// scale of 100 then needs a parameter of 100: with Adam's ~lr-sized steps that takes 100/lr
// steps. Both maps agree for small σ (softplus(x) ≈ eˣ for x ≪ 0).
//
// Vectorised: one Draw records a handful of vector nodes (views, one exp, a matrix-vector
// product, one fused log-density node), never per-coordinate nodes.
package family

import (
	"fmt"
	"math"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Family is a reparameterisable variational family over ℝ^Dim with NumParams unconstrained
// parameters: the methods the VI loop (fit, through objective) calls on every family. All
// methods are safe for concurrent use (a family holds no mutable state); tapes and parameter
// slices belong to the caller.
//
// The contract splits by who needs what:
//
//   - the objective (objective.Family, which Family satisfies): Dim, NumParams, NoiseDim, Draw
//     and LogDensity;
//   - the loop around it (fit): Init to start, Moments for warm starts and Gaussian reports,
//     Sample for the final draws and their log q (the PSIS proposal densities).
//
// What only some families can do, or what only some callers need, is an optional capability,
// a small interface a family implements only where it is true; test for it with a type
// assertion:
//
//   - EntropyFamily: a closed-form entropy (the Gaussians; flows have none);
//   - LogProber: log q(z) in plain float64 code (for external points);
//   - MomentSetter: set q from a mean and a covariance;
//   - DrawScorer: the score ∇_z log q at the family's own draw without inverting it (flows; what
//     a sticking-the-landing gradient needs);
//   - BatchFamily, BatchDensityFamily: the S draws of a step, or S log densities, in one pass.
//
// A wrapper (Affine) offers a capability only when it can do so honestly: see Affine.Entropic,
// Affine.MomentSetter and Affine.Scorer.
type Family interface {
	// Dim is the dimension of z.
	Dim() int
	// NumParams is the length of the parameter vector φ.
	NumParams() int
	// NoiseDim is the length of the standard-normal base noise ε a draw consumes.
	NoiseDim() int

	// Init writes parameters for a Gaussian with mean loc (nil means 0) and independent
	// coordinates of standard deviation scale > 0 (a flow: its initial, near-identity map
	// followed by that Gaussian's affine layer).
	Init(params, loc []float64, scale float64)
	// Moments writes the mean and, when cov is not nil, the Dim×Dim covariance (row-major) of
	// q: in closed form for the Gaussians, by a deterministic Monte Carlo estimate for flows
	// (see Flow.Moments for its cost).
	Moments(params, mean, cov []float64)

	// Draw records z = T(ε; φ) and log q(z; φ) on t. Both are differentiable with respect to
	// params; logq is the total log density, so ∂logq/∂φ includes the path through z.
	Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var)
	// LogDensity records log q(z; φ) for a point z on the tape. With params a constant copy
	// (t.Const) it is the stopped-parameter log density of sticking-the-landing estimators;
	// with live params and a z from another family it is a mixture component (MISELBO).
	LogDensity(t *ad.Tape, params, z ad.Var) ad.Var

	// Sample writes z = T(ε; φ) and returns log q(z; φ), in plain float64 code: the same map
	// and density as Draw, without a caller's tape.
	Sample(params, eps, z []float64) (logq float64)
}

// EntropyFamily is a Family with a closed-form entropy H[q] = −E_q log q (the Gaussian families;
// flows have none). objective.Options.Entropy needs it.
type EntropyFamily interface {
	Family
	// Entropy records H[q] on the tape.
	Entropy(t *ad.Tape, params ad.Var) ad.Var
}

// LogProber is a Family that evaluates log q(z; φ) at any point z in plain float64 code, the
// value LogDensity records on a tape, for points that did not come from Sample (draws of
// another approximation, a reference posterior, tests). The Gaussians and Flow implement it; its
// cost is the family's LogDensity without the tape (for a flow an inversion of the map, see
// Flow.LogProb).
type LogProber interface {
	Family
	// LogProb returns log q(z; φ); −Inf where z is outside the support of q.
	LogProb(params, z []float64) float64
}

// MomentSetter is a Family that can be set from moments: SetMoments writes parameters whose
// mean is mean and whose covariance is cov (Dim×Dim, row-major), exactly where the family can
// represent cov and as a documented projection where it cannot (mean-field: the diagonal;
// low-rank: probabilistic PCA; flows: the mean-field projection with the flow at its initial
// map). It fails if cov is not positive definite (as far as the family needs). The Gaussians
// and Flow implement it.
type MomentSetter interface {
	Family
	SetMoments(params, mean, cov []float64) error
}

var (
	_ EntropyFamily = (*MeanField)(nil)
	_ EntropyFamily = (*FullRank)(nil)
	_ EntropyFamily = (*LowRank)(nil)
	_ LogProber     = (*MeanField)(nil)
	_ LogProber     = (*FullRank)(nil)
	_ LogProber     = (*LowRank)(nil)
	_ LogProber     = (*Flow)(nil)
	_ LogProber     = (*Affine)(nil)
	_ MomentSetter  = (*MeanField)(nil)
	_ MomentSetter  = (*FullRank)(nil)
	_ MomentSetter  = (*LowRank)(nil)
	_ MomentSetter  = (*Flow)(nil)
)

// Positivity is the map that keeps a scale parameter positive.
type Positivity uint8

const (
	// Exp keeps a scale as σ = exp(ω); the parameter is log σ.
	Exp Positivity = iota
	// Softplus keeps a scale as σ = log(1 + exp(ρ)).
	Softplus
)

func (p Positivity) String() string {
	switch p {
	case Exp:
		return "exp"
	case Softplus:
		return "softplus"
	}
	return fmt.Sprintf("Positivity(%d)", uint8(p))
}

// Option configures a family at construction.
type Option func(*config)

type config struct{ pos Positivity }

// WithPositivity selects the map that keeps scales positive (default Exp).
func WithPositivity(p Positivity) Option { return func(c *config) { c.pos = p } }

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.pos != Exp && c.pos != Softplus {
		panic(fmt.Sprintf("family: unknown positivity %d", c.pos))
	}
	return c
}

// scale returns σ for the raw parameter x.
func (p Positivity) scale(x float64) float64 {
	if p == Exp {
		return math.Exp(x)
	}
	return mathx.Log1pExp(x)
}

// logScale returns log σ for the raw parameter x.
func (p Positivity) logScale(x float64) float64 {
	if p == Exp {
		return x
	}
	return math.Log(mathx.Log1pExp(x))
}

// dScale returns dσ/dx.
func (p Positivity) dScale(x, sigma float64) float64 {
	if p == Exp {
		return sigma
	}
	return mathx.Logistic(x)
}

// inverse returns the raw parameter x with scale(x) = sigma > 0.
func (p Positivity) inverse(sigma float64) float64 {
	if p == Exp {
		return math.Log(sigma)
	}
	if sigma > 30 {
		return sigma + math.Log(-math.Expm1(-sigma)) // log(eˢ − 1) without overflow
	}
	return math.Log(math.Expm1(sigma))
}

// tapeScale records σ = map(raw) on t.
func (p Positivity) tapeScale(t *ad.Tape, raw ad.Var) ad.Var {
	if p == Exp {
		return t.Exp(raw)
	}
	return t.Softplus(raw)
}

// tapeSumLog records Σ log σ_i given raw and σ = tapeScale(raw).
func (p Positivity) tapeSumLog(t *ad.Tape, raw, sigma ad.Var) ad.Var {
	if p == Exp {
		return t.Sum(raw)
	}
	return t.Sum(t.Log(sigma))
}

// logNormConst is d/2·log 2π.
func logNormConst(d int) float64 { return float64(d) * mathx.LogSqrt2Pi }

// entropyConst is d/2·(1 + log 2π), the entropy of N(0, I_d).
func entropyConst(d int) float64 { return 0.5*float64(d) + logNormConst(d) }

// halfSq returns ½‖x‖².
func halfSq(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return 0.5 * s
}

func checkLen(fn, name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("family: %s: len(%s)=%d, want %d", fn, name, got, want))
	}
}

// bufPool hands out float64 scratch of a fixed length for the float64 methods, so they stay
// allocation-free in steady state while the family remains safe for concurrent use.
type bufPool struct {
	n int
	p sync.Pool
}

func newBufPool(n int) *bufPool {
	b := &bufPool{n: n}
	b.p.New = func() any { s := make([]float64, n); return &s }
	return b
}

func (b *bufPool) get() *[]float64  { return b.p.Get().(*[]float64) }
func (b *bufPool) put(s *[]float64) { b.p.Put(s) }
