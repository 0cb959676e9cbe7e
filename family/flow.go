package family

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
)

// Flow is the normalizing-flow family: standard-normal noise pushed through a flow T and an
// elementwise affine output layer A (Rezende & Mohamed 2015, ICML, "Variational inference with
// normalizing flows"):
//
//	ε ~ N(0, I_d),   z = μ + exp(ω) ⊙ T(ε; θ)
//	log q(z) = −½‖ε‖² − d/2·log 2π − log|det ∂T/∂ε| − Σ ω,   ε = T⁻¹((z − μ)⊙exp(−ω))
//
// Parameters: φ = [θ (the flow's NumParams) | μ (d) | ω (d)]. The affine layer makes the
// Gaussian starts exact: with T at its (near-)identity Init, Init(loc, scale) is N(loc,
// scale²I) and SetMoments the mean-field projection, so inside Affine (whitening by the
// Laplace or a full-rank fit) the flow starts at that Gaussian and only has to learn the
// non-Gaussian part — the warm start of BF-VI-style fits.
//
// Cost. Draw and Sample: one Forward of T (for MAF in its default IAF direction one MADE
// pass; RealNVP one MLP per layer). LogDensity and LogProb invert T: sequential for IAF (d
// MADE passes), one pass per layer for RealNVP; LogDensity records the inverse on the tape
// (flow.Flow.InverseTape; mixtures use it, the plain ELBO gradient never inverts).
// Sticking-the-landing gradients need only the score of q at the family's own draws, which
// DrawScore (DrawScorer) gives without inverting: one forward pass, d + 1 reverse passes and a
// triangular solve per autoregressive layer (flow.ForwardPullback).
//
// Entropy: a flow has no closed-form entropy, so Flow is not an EntropyFamily; fit it with the
// plain or STL ELBO (objective.Options.Entropy = false).
//
// Student-t base (FlowBaseDF(ν)): the base is d independent t_ν marginals instead of N(0, I),
// the tail-adaptive flows of Jaini, Kobyzev, Yu & Brubaker (2020, ICML, "Tails of Lipschitz
// triangular flows") with ν fixed. A flow with linear tails (MAF, RealNVP, linear-tail
// Bernstein) keeps the tail class of its base, so with a Gaussian base q has Gaussian tails
// however it is trained; a t base gives polynomial ones, and a q heavier-tailed than p is the
// safe side for importance sampling. The noise stays standard normal (NoiseDim d, the same
// streams): a draw uses ε_t = F_ν⁻¹(Φ(ε)) elementwise, a fixed map without parameters, and
//
//	z = μ + exp(ω) ⊙ T(ε_t; θ)
//	log q(z) = Σ_i log t_ν(ε_t,i) − log|det ∂T/∂ε_t| − Σ ω,   ε_t = T⁻¹((z − μ)⊙exp(−ω)).
//
// The map costs a few incomplete-beta evaluations per coordinate per draw (see
// tBase.fromNormal). Init and SetMoments scale ω so that each base coordinate has unit
// variance (the factor √((ν−2)/ν); for ν ≤ 2 the variance is infinite and the t's own scale is
// used).
type Flow struct {
	f     flow.Flow
	inner *flow.Composed // Compose(f, A)
	aff   *flow.Affine
	d     int
	seed  uint64
	base  tBase
	kind  string
	// fixedOut: FlowFixedOutput (inner is then Compose(f, unusedIdentity)).
	fixedOut bool
}

// FlowOption configures a Flow family.
type FlowOption func(*Flow)

// FlowSeed sets the seed of the random initialisation of the flow's conditioner networks
// (default 0; different seeds give the independent restarts of a multi-start fit).
func FlowSeed(seed uint64) FlowOption { return func(f *Flow) { f.seed = seed } }

// FlowKind records the name of the standard flow kind the family was built as ("maf",
// "realnvp", "bernstein"; fit.NewFlowFamily sets it), for reports and saved fits. It does not
// change the family.
func FlowKind(kind string) FlowOption { return func(f *Flow) { f.kind = kind } }

// FlowBaseDF sets the base to independent Student-t marginals with ν degrees of freedom,
// MinBaseDF ≤ ν ≤ MaxBaseDF; ν = +Inf (the default) is the standard-normal base. It panics
// for other ν.
func FlowBaseDF(nu float64) FlowOption {
	b := newTBase(nu)
	return func(f *Flow) { f.base = b }
}

// NewFlow returns the family N(0, I) (or the FlowBaseDF base) pushed through f and an
// elementwise affine layer.
func NewFlow(f flow.Flow, opts ...FlowOption) *Flow {
	d := f.Dim()
	if d < 1 {
		panic(fmt.Sprintf("family: NewFlow: flow dimension %d, want ≥ 1", d))
	}
	aff := flow.NewAffine(d)
	q := &Flow{f: f, inner: flow.Compose(f, aff), aff: aff, d: d}
	for _, o := range opts {
		o(q)
	}
	if q.fixedOut {
		q.inner = flow.Compose(f, unusedIdentity{d})
	}
	return q
}

// BaseDF returns the degrees of freedom ν of the Student-t base, or +Inf for the Gaussian base.
func (q *Flow) BaseDF() float64 {
	if q.base.gaussian() {
		return math.Inf(1)
	}
	return q.base.nu
}

// Kind returns the name given by FlowKind, or "flow" when none was given.
func (q *Flow) Kind() string {
	if q.kind == "" {
		return "flow"
	}
	return q.kind
}

// Flow returns the flow T (without the affine output layer).
func (q *Flow) Flow() flow.Flow { return q.f }

// Dim returns d.
func (q *Flow) Dim() int { return q.d }

// NumParams returns the flow's parameter count plus 2d.
func (q *Flow) NumParams() int { return q.inner.NumParams() }

// NoiseDim returns d.
func (q *Flow) NoiseDim() int { return q.d }

// split returns the flow's and the affine layer's parameters.
func (q *Flow) split(params []float64) (theta, aff []float64) {
	n := q.f.NumParams()
	return params[:n], params[n:]
}

// Init sets T to its initial (near-)identity, drawing conditioner weights from the FlowSeed
// stream, and the affine layer to μ = loc (0 when nil), exp(ω) = scale (with a t base,
// scale/√(ν/(ν−2)), so that the standard deviation is scale when T is the identity).
func (q *Flow) Init(params, loc []float64, scale float64) {
	checkLen("Flow.Init", "params", len(params), q.NumParams())
	theta, aff := q.split(params)
	q.f.Init(theta, rand.New(rand.NewPCG(q.seed, 0x666c6f77)))
	if q.fixedOut {
		clear(aff)
		return
	}
	setLoc(aff[:q.d], loc)
	ls := math.Log(scale / q.base.sdFactor())
	for i := range q.d {
		aff[q.d+i] = ls
	}
}

// SetMoments resets T to its initial state and sets μ = mean, exp(ω_i)² = cov_ii (with a t
// base divided by the base variance ν/(ν−2) when ν > 2): the
// mean-field projection (off-diagonal covariance is dropped, as in MeanField; inside Affine
// the whitening carries the correlations). Exact for the mean and the variances when Init
// makes T the identity (MAF, RealNVP, Affine). It fails if a variance is not positive and
// finite.
func (q *Flow) SetMoments(params, mean, cov []float64) error {
	d := q.d
	checkLen("Flow.SetMoments", "params", len(params), q.NumParams())
	checkLen("Flow.SetMoments", "mean", len(mean), d)
	checkLen("Flow.SetMoments", "cov", len(cov), d*d)
	if q.fixedOut {
		return fmt.Errorf("family: Flow.SetMoments: the output layer is fixed at the identity (FlowFixedOutput)")
	}
	for i := range d {
		if v := cov[i*d+i]; !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("family: Flow.SetMoments: variance not positive (i=%d, var=%g)", i, v)
		}
	}
	q.Init(params, mean, 1)
	_, aff := q.split(params)
	for i := range d {
		aff[d+i] = 0.5*math.Log(cov[i*d+i]) - math.Log(q.base.sdFactor())
	}
	return nil
}

// MomentDraws is the number of draws Flow.Moments averages.
const MomentDraws = 1 << 13

// Moments writes Monte Carlo estimates of the mean and (when cov is not nil) the covariance of
// q: no closed form exists. It uses MomentDraws antithetic draws (ε and −ε) from a fixed
// stream, so it is deterministic; the mean is exact when T is odd (e.g. the identity) and the
// standard error is about sd/√MomentDraws ≈ 0.011 sd otherwise. Cost: MomentDraws Samples.
func (q *Flow) Moments(params, mean, cov []float64) {
	d := q.d
	checkLen("Flow.Moments", "params", len(params), q.NumParams())
	checkLen("Flow.Moments", "mean", len(mean), d)
	if cov != nil {
		checkLen("Flow.Moments", "cov", len(cov), d*d)
	}
	r := rand.New(rand.NewPCG(0x6d6f6d, 0x656e7473))
	eps, z := make([]float64, d), make([]float64, d)
	zs := make([]float64, MomentDraws*d)
	clear(mean)
	for s := 0; s < MomentDraws; s += 2 {
		for i := range eps {
			eps[i] = r.NormFloat64()
		}
		for k := range 2 {
			q.Sample(params, eps, z)
			copy(zs[(s+k)*d:], z)
			for i := range eps {
				mean[i] += z[i]
				eps[i] = -eps[i]
			}
		}
	}
	for i := range mean {
		mean[i] /= MomentDraws
	}
	if cov == nil {
		return
	}
	clear(cov)
	for s := range MomentDraws {
		x := zs[s*d : (s+1)*d]
		for i := range d {
			for j := 0; j <= i; j++ {
				cov[i*d+j] += (x[i] - mean[i]) * (x[j] - mean[j])
			}
		}
	}
	for i := range d {
		for j := 0; j <= i; j++ {
			cov[i*d+j] /= MomentDraws - 1
			cov[j*d+i] = cov[i*d+j]
		}
	}
}

// Draw records z = A(T(ε)) and log q(z) = −½‖ε‖² − d/2·log 2π − log|det| on t (with a t base:
// z = A(T(ε_t)), ε_t = F_ν⁻¹(Φ(ε)) in tape scratch memory, and Σ log t_ν(ε_t) for the first two
// terms).
func (q *Flow) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	checkLen("Flow.Draw", "params", t.Size(params), q.NumParams())
	checkLen("Flow.Draw", "eps", len(eps), q.d)
	u := eps
	if !q.base.gaussian() {
		u = t.Scratch(q.d)
		q.base.transform(eps, u)
	}
	z, ld := q.inner.Forward(t, params, t.ConstRef(u))
	return z, t.AddC(t.Neg(ld), q.base.logDensity(u))
}

// LogDensity records log q(z) for z on the tape by inverting the flow on the tape
// (flow.Flow.InverseTape), differentiable in z and the parameters.
func (q *Flow) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	checkLen("Flow.LogDensity", "params", t.Size(params), q.NumParams())
	checkLen("Flow.LogDensity", "z", t.Size(z), q.d)
	u, ld := q.inner.InverseTape(t, params, z)
	return t.Sub(q.base.tapeLogDensity(t, u), ld)
}

// LogProb returns log q(z) by the flow's float64 inverse, or −Inf when z is outside the range
// of the flow (or the inversion fails). No allocation in steady state.
func (q *Flow) LogProb(params, z []float64) float64 {
	checkLen("Flow.LogProb", "params", len(params), q.NumParams())
	checkLen("Flow.LogProb", "z", len(z), q.d)
	t := flow.GetTape()
	defer flow.PutTape(t)
	u := t.Scratch(q.d)
	ld, err := q.inner.Inverse(params, z, u)
	if err != nil {
		return math.Inf(-1)
	}
	return q.base.logDensity(u) - ld
}

// Sample writes z = A(T(ε)) (with a t base A(T(ε_t))) and returns log q(z) (one Forward on a
// pooled scratch tape).
func (q *Flow) Sample(params, eps, z []float64) float64 {
	checkLen("Flow.Sample", "params", len(params), q.NumParams())
	checkLen("Flow.Sample", "eps", len(eps), q.d)
	checkLen("Flow.Sample", "z", len(z), q.d)
	t := flow.GetTape()
	defer flow.PutTape(t)
	u := eps
	if !q.base.gaussian() {
		u = t.Scratch(q.d)
		q.base.transform(eps, u)
	}
	zv, ld := q.inner.Forward(t, t.ConstRef(params), t.ConstRef(u))
	copy(z, t.Value(zv))
	return q.base.logDensity(u) - t.Float(ld)
}

var _ Family = (*Flow)(nil)
