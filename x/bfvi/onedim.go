package bfvi

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// This file is the one-dimensional BF-VI of the paper's experiments E1 and E2
// (shared/docs/papers.md §1.1–1.2) in plain float64 code: with one coordinate the
// coefficients are shared by all draws of a step, so a draw costs O(M) and the paper's
// 10,000 draws per step are affordable. It is a re-implementation independent of package
// flow's kernel (whose tape-free internals are not exported); the flows agree on the map.

// Map is the path from the base distribution to the Bernstein polynomial's unit interval
// (the paper's ablation, App. B.2.2, and vigo's linear-tails variant).
type Map int

const (
	// MapF1F2 is the paper's map: u ~ N(0, 1), v = α·u + β (α = softplus(a′), trained),
	// x = σ(v), θ = h(x). The support of q is (ϑ_0, ϑ_M).
	MapF1F2 Map = iota
	// MapSigmoidF2 is x = σ(u): the affine step frozen at α = 1, β = 0.
	MapSigmoidF2
	// MapTruncF2 draws x directly from N(0.5, 0.15²) truncated to [0, 1].
	MapTruncF2
	// MapLinear is vigo's variant: v = α·u + β feeds the polynomial directly on [0, 1] and
	// beyond it the straight lines through its end points with its end slopes,
	// θ = ϑ_0 + M·δ_1·v (v < 0) and ϑ_M + M·δ_M·(v − 1) (v > 1): support ℝ, Gaussian tails.
	MapLinear
)

func (m Map) String() string {
	switch m {
	case MapF1F2:
		return "F1F2"
	case MapSigmoidF2:
		return "SigmoidF2"
	case MapTruncF2:
		return "TruncF2"
	case MapLinear:
		return "linear tails"
	}
	return fmt.Sprintf("Map(%d)", int(m))
}

// Target1D is a log density on ℝ (LogP; normalised for a KL) and its derivative (DLogP).
type Target1D struct {
	LogP, DLogP func(x float64) float64
}

// BernoulliBeta is E1's posterior of w = logit π: data (1, 1), prior Beta(1.1, 1.1), so
// π | D ~ Beta(3.1, 1.1) and p(w) = σ(w)^3.1 σ(−w)^1.1 / B(3.1, 1.1) (normalised; the
// logit's Jacobian σ(w)σ(−w) included).
func BernoulliBeta() Target1D {
	const a, b = 3.1, 1.1
	lB := mathx.LogBeta(a, b)
	return Target1D{
		LogP:  func(w float64) float64 { return -a*mathx.Log1pExp(-w) - b*mathx.Log1pExp(w) - lB },
		DLogP: func(w float64) float64 { return a*mathx.Logistic(-w) - b*mathx.Logistic(w) },
	}
}

// CauchyY is E2's data: six draws of the authors from a 50/50 mixture of Cauchy(±2.5, 0.5).
var CauchyY = []float64{1.2083935, -2.7329216, 4.1769943, 1.9710574, -4.2004027, -2.384988}

// CauchyLocation is E2's bimodal posterior of ξ: y_i ~ Cauchy(ξ, 0.5), ξ ~ N(0, 1), normalised
// as the paper does, by the trapezoid rule on [−10, 10] with 10⁶ intervals (the prior leaves
// e^−50 of the mass outside). Cost of the constructor: 6·10⁶ evaluations (≈0.1 s).
func CauchyLocation() Target1D {
	const g = 0.5
	un := func(x float64) float64 {
		lp := -0.5 * x * x
		for _, y := range CauchyY {
			r := (y - x) / g
			lp -= math.Log1p(r * r)
		}
		return lp
	}
	dlp := func(x float64) float64 {
		d := -x
		for _, y := range CauchyY {
			r := (y - x) / g
			d += 2 * r / g / (1 + r*r)
		}
		return d
	}
	const n, lo, hi = 1000000, -10.0, 10.0
	h := (hi - lo) / n
	// The maximum of the unnormalised density on the grid, then Σ w_i e^(l_i − max).
	mx := math.Inf(-1)
	for i := 0; i <= n; i++ {
		mx = max(mx, un(lo+h*float64(i)))
	}
	s := 0.0
	for i := 0; i <= n; i++ {
		l := un(lo + h*float64(i))
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		s += w * math.Exp(l-mx)
	}
	logZ := mx + math.Log(s*h)
	return Target1D{LogP: func(x float64) float64 { return un(x) - logZ }, DLogP: dlp}
}

// bern1 is a degree-M Bernstein polynomial and its derivatives on [0, 1]:
//
//	h(x) = Σ_{i=0..M} ϑ_i b_{i,M}(x) = ϑ_0 + Σ_{k=1..M} δ_k T_k(x),  T_k = Σ_{i≥k} b_{i,M}
//	h′(x) = M Σ_{k=1..M} δ_k b_{k−1,M−1}(x),  h″(x) = M(M−1) Σ_{i=0..M−2} (δ_{i+2} − δ_{i+1}) b_{i,M−2}(x)
//
// with ϑ_k = ϑ_{k−1} + δ_k, δ_k = softplus(r_k) > 0 (Farouki 2012, CAGD 29(6), §3, for the
// derivative identities). The basis b_{i,n}(x) = C(n,i) xⁱ(1−x)ⁿ⁻ⁱ of degree n0 = max(M − 2, 0)
// is evaluated from its largest term, at i = ⌊(n0+1)x⌋, by one exponential of
// log C(n0,i) + i log x + (n0−i) log(1−x) and the term ratios b_{i+1}/b_i = (n0−i)/(i+1)·x/(1−x)
// outwards: all factors are nonnegative and the terms shrink away from the mode, so there is no
// cancellation and underflow is harmless. Degrees M − 1 and M follow by degree elevation,
// b_{i,n+1} = (1−x)·b_{i,n} + x·b_{i−1,n} (convex combinations). log x and log(1 − x) are passed
// separately so that x near 0 or 1 keeps its precision.
type bern1 struct {
	m, n0    int
	logC     []float64    // log C(n0, i)
	up, down []float64    // (n0−i)/(i+1), i/(n0−i+1)
	b        [3][]float64 // basis of degree M, M−1, M−2 (b[2] aliases b[1] when M = 1)
}

func newBern1(m int) *bern1 {
	n0 := max(m-2, 0)
	p := &bern1{m: m, n0: n0, logC: make([]float64, n0+1), up: make([]float64, n0+1), down: make([]float64, n0+1)}
	for i := range n0 + 1 {
		p.logC[i] = mathx.Lgamma(float64(n0+1)) - mathx.Lgamma(float64(i+1)) - mathx.Lgamma(float64(n0-i+1))
		p.up[i] = float64(n0-i) / float64(i+1)
		p.down[i] = float64(i) / float64(n0-i+1)
	}
	p.b[0] = make([]float64, m+1)
	p.b[1] = make([]float64, m)
	p.b[2] = p.b[1]
	if m >= 2 {
		p.b[2] = make([]float64, m-1)
	}
	return p
}

// basis fills p.b with the bases of degree M, M − 1 and M − 2 at x (y = 1 − x, lx = log x,
// ly = log y). Cost O(M), one exponential.
func (p *bern1) basis(x, y, lx, ly float64) {
	n := p.n0
	b := p.b[2]
	if p.m == 1 {
		b = p.b[1]
	}
	clear(b)
	switch {
	case n == 0:
		b[0] = 1
	case x <= 0:
		b[0] = 1
	case y <= 0:
		b[n] = 1
	default:
		k := min(int(float64(n+1)*x), n)
		b[k] = math.Exp(p.logC[k] + float64(k)*lx + float64(n-k)*ly)
		r, ri := x/y, y/x
		for i := k; i < n && b[i] > 0; i++ {
			b[i+1] = b[i] * p.up[i] * r
		}
		for i := k; i > 0 && b[i] > 0; i-- {
			b[i-1] = b[i] * p.down[i] * ri
		}
	}
	for j := 1; j >= 0; j-- {
		lo, hi := p.b[j+1], p.b[j]
		if p.m == 1 && j == 1 {
			continue
		}
		m := len(lo) - 1
		hi[0] = y * lo[0]
		for i := 1; i <= m; i++ {
			hi[i] = y*lo[i] + x*lo[i-1]
		}
		hi[m+1] = x * lo[m]
	}
}

// eval evaluates h, h′ and h″ from the bases left by basis, for coefficients theta (ϑ_0..ϑ_M)
// and increments delta (δ_0 unused, δ_1..δ_M). Cost O(M).
func (p *bern1) eval(theta, delta []float64) (h, h1, h2 float64) {
	M := p.m
	for i, v := range p.b[0] {
		h += theta[i] * v
	}
	for k, v := range p.b[1] {
		h1 += delta[k+1] * v
	}
	h1 *= float64(M)
	if M >= 2 {
		for i, v := range p.b[2] {
			h2 += (delta[i+2] - delta[i+1]) * v
		}
		h2 *= float64(M * (M - 1))
	}
	return h, h1, h2
}

// Flow1D is a one-dimensional Bernstein flow of degree M with input map Map. Its parameters
// are Raw = (r_0..r_M, a′, β): ϑ_0 = r_0, δ_k = softplus(r_k), α = softplus(a′).
type Flow1D struct {
	M   int
	Map Map
	Raw []float64

	p            *bern1
	theta, delta []float64
	sig          []float64 // σ(r_k) = ∂δ_k/∂r_k
	// per-step gradient accumulators: G_i = Σ c·b_{i,M} (c = −d log p/dθ), H_k = Σ −M·b_{k,M−1}/h′,
	// E_k direct terms of the linear tails, and the affine pair
	accG, accH, accE []float64
	accA, accB       float64
	// α, ∂α/∂a′ and β, set by prep
	alpha, dalpha, beta float64
}

// NewFlow1D returns a flow of degree M ≥ 1 with zero parameters.
func NewFlow1D(M int, mp Map) *Flow1D {
	if M < 1 {
		panic(fmt.Sprintf("bfvi: NewFlow1D: degree %d, want ≥ 1", M))
	}
	return &Flow1D{M: M, Map: mp, Raw: make([]float64, M+3), p: newBern1(M),
		theta: make([]float64, M+1), delta: make([]float64, M+1), sig: make([]float64, M+1),
		accG: make([]float64, M+1), accH: make([]float64, M), accE: make([]float64, M+1)}
}

// prep computes the coefficients from Raw: O(M), once per step.
func (f *Flow1D) prep() {
	M := f.M
	f.theta[0] = f.Raw[0]
	for k := 1; k <= M; k++ {
		f.delta[k] = mathx.Log1pExp(f.Raw[k])
		f.sig[k] = mathx.Logistic(f.Raw[k])
		f.theta[k] = f.theta[k-1] + f.delta[k]
	}
	f.alpha, f.dalpha, f.beta = 1, 0, 0
	if f.Map != MapSigmoidF2 {
		f.alpha, f.dalpha, f.beta = mathx.Log1pExp(f.Raw[f.M+1]), mathx.Logistic(f.Raw[f.M+1]), f.Raw[f.M+2]
	}
}

// truncated normal N(0.5, 0.15²) on [0, 1] (MapTruncF2's base).
const tnMean, tnSD = 0.5, 0.15

var tnLo, tnHi = 0.5 * math.Erfc(tnMean/tnSD/math.Sqrt2), 0.5 * math.Erfc(-(1-tnMean)/tnSD/math.Sqrt2)

func tnLogDens(x float64) float64 {
	r := (x - tnMean) / tnSD
	return -0.5*r*r - math.Log(tnHi-tnLo) - math.Log(tnSD) - 0.5*math.Log(2*math.Pi)
}

// sample maps the base draw b (u ~ N(0, 1), or a uniform for MapTruncF2) to θ and returns θ and
// log q(θ) (not computed, 0, with grad set); with grad set it adds the draw's gradient of the loss log q(θ) − log p(θ) to the
// per-step accumulators (see grad). prep must have run. Cost O(M).
func (f *Flow1D) sample(b float64, tg Target1D, grad bool) (z, lq float64) {
	M := f.M
	alpha, beta := f.alpha, f.beta
	var lbase, v, x, y, lx, ly, dxdv, dldxdv float64
	switch f.Map {
	case MapTruncF2:
		x = tnMean - tnSD*math.Sqrt2*math.Erfcinv(2*(tnLo+b*(tnHi-tnLo)))
		x = min(max(x, 0), 1)
		y, dxdv, lbase = 1-x, 1, tnLogDens(x)
		lx, ly = math.Log(x), math.Log(y)
	default:
		lbase = -0.5*b*b - 0.5*math.Log(2*math.Pi)
		v = alpha*b + beta
		if f.Map == MapLinear {
			x, y, dxdv = v, 1-v, 1
			if v > 0 && v < 1 {
				lx, ly = math.Log(x), math.Log1p(-v)
			}
		} else {
			// x = σ(v), y = σ(−v) and their logs from one exponential and one log1p.
			e := math.Exp(-math.Abs(v))
			l1 := math.Log1p(e)
			if v >= 0 {
				x, y, lx, ly = 1/(1+e), e/(1+e), -l1, -v-l1
			} else {
				x, y, lx, ly = e/(1+e), 1/(1+e), v-l1, -l1
			}
			dxdv, dldxdv = x*y, y-x // d log(x(1−x))/dv = 1 − 2x
		}
	}
	ldA := 0.0
	if f.Map != MapTruncF2 {
		ldA = math.Log(alpha)
	}
	if f.Map == MapLinear && (v < 0 || v > 1) {
		// Linear tails: θ = ϑ_0 + M δ_1 v, or ϑ_M + M δ_M (v − 1).
		k, off, base := 1, v, f.theta[0]
		if v > 1 {
			k, off, base = M, v-1, f.theta[M]
		}
		slope := float64(M) * f.delta[k]
		z = base + slope*off
		if !grad {
			return z, lbase - math.Log(slope) - ldA
		}
		dlp := tg.DLogP(z)
		if v > 1 {
			f.accG[M] -= dlp // ∂ϑ_M/∂δ_j = 1 for every j: the suffix sums carry it
		} else {
			f.accG[0] -= dlp // ∂ϑ_0 only
		}
		f.accE[k] += -dlp*float64(M)*off - 1/f.delta[k]
		f.affineAcc(-dlp*slope, b)
		return z, 0
	}
	f.p.basis(x, y, lx, ly)
	h, h1, h2 := f.p.eval(f.theta, f.delta)
	z = h
	if !grad {
		return z, lbase - math.Log(h1) - math.Log(dxdv) - ldA
	}
	dlp := tg.DLogP(z)
	// loss = log base − log h′(x) − log(dx/dv) − log α − log p(h(x)).
	for i, bi := range f.p.b[0] {
		f.accG[i] -= dlp * bi
	}
	c := -float64(M) / h1
	for k, bk := range f.p.b[1] {
		f.accH[k] += c * bk
	}
	if f.Map != MapTruncF2 && f.Map != MapSigmoidF2 {
		f.affineAcc(-dlp*h1*dxdv-h2/h1*dxdv-dldxdv, b)
	}
	return z, 0
}

// affineAcc accumulates the gradient through v = α·u + β: ∂/∂α and ∂/∂β.
func (f *Flow1D) affineAcc(gv, u float64) {
	f.accA += gv * u
	f.accB += gv
}

// grad turns the accumulators of n draws into the mean gradient g with respect to Raw and
// clears them: ∂/∂r_0 = Σ_i G_i, ∂/∂r_k = (Σ_{i≥k} G_i + H_{k−1} + E_k)·σ(r_k), ∂/∂a′ =
// (A − n/α)·σ(a′), ∂/∂β = B.
func (f *Flow1D) grad(g []float64, n int) {
	M := f.M
	s := 0.0
	for k := M; k >= 1; k-- {
		s += f.accG[k]
		g[k] = (s + f.accH[k-1] + f.accE[k]) * f.sig[k] / float64(n)
	}
	g[0] = (s + f.accG[0]) / float64(n)
	g[M+1], g[M+2] = 0, 0
	if f.Map != MapTruncF2 && f.Map != MapSigmoidF2 {
		g[M+1] = (f.accA - float64(n)/f.alpha) * f.dalpha / float64(n)
		g[M+2] = f.accB / float64(n)
	}
	clear(f.accG)
	clear(f.accH)
	clear(f.accE)
	f.accA, f.accB = 0, 0
}

// Fit1D trains f on tg by the reparameterised ELBO gradient with S draws per step and
// `steps` RMSprop steps (Keras defaults except the step size lr), the draws from the stream
// (seed, 1). Cost steps·S·O(M).
func (f *Flow1D) Fit1D(tg Target1D, S, steps int, lr float64, seed uint64) {
	s := rng.New(seed, 1)
	opt := optim.NewRMSprop(len(f.Raw), optim.RMSpropConfig{LR: lr})
	g := make([]float64, len(f.Raw))
	for range steps {
		f.prep()
		for range S {
			b := s.NormFloat64()
			if f.Map == MapTruncF2 {
				b = s.Float64()
			}
			f.sample(b, tg, true)
		}
		f.grad(g, S)
		opt.Step(f.Raw, g)
	}
	f.prep()
}

// KL returns KL(q‖p) for a normalised tg by the trapezoid rule over the base variable (u on
// [−12, 12], or the uniform of MapTruncF2 on (0, 1)) with 24,000 intervals: the integrand is
// smooth there and the N(0, 1) mass beyond ±12 is below 1e−32. Cost 24,000·O(M).
func (f *Flow1D) KL(tg Target1D) float64 {
	f.prep()
	const n = 24000
	lo, hi := -12.0, 12.0
	if f.Map == MapTruncF2 {
		lo, hi = 0, 1
	}
	h := (hi - lo) / n
	s := 0.0
	for i := 0; i <= n; i++ {
		b := lo + h*float64(i)
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		dens := math.Exp(-0.5*b*b) / math.Sqrt(2*math.Pi)
		if f.Map == MapTruncF2 {
			if i == 0 || i == n {
				continue // x = 0 or 1: the base density is finite but log h′ may not be
			}
			dens = 1
		}
		z, lq := f.sample(b, tg, false)
		lp := tg.LogP(z)
		s += w * dens * (lq - lp)
	}
	return s * h
}

// KHat returns the PSIS k̂ of log p − log q on n fresh draws from q (base draws from the
// stream (seed, 3)). Cost n·O(M) + O(n log n).
func (f *Flow1D) KHat(tg Target1D, n int, seed uint64) (float64, error) {
	f.prep()
	s := rng.New(seed, 3)
	lw := make([]float64, n)
	for i := range lw {
		b := s.NormFloat64()
		if f.Map == MapTruncF2 {
			b = s.Float64()
		}
		z, lq := f.sample(b, tg, false)
		lw[i] = tg.LogP(z) - lq
	}
	r, err := diag.PSIS(lw)
	if err != nil {
		return 0, fmt.Errorf("bfvi: Flow1D.KHat: %w", err)
	}
	return r.K, nil
}

// GaussKL fits Gauss-VI q = N(μ, softplus(ρ)²) to tg (the paper's start μ = 0, ρ = 0.2; S draws,
// `steps` RMSprop steps of size lr) and returns KL(q‖p) by the trapezoid rule of KL.
func GaussKL(tg Target1D, S, steps int, lr float64, seed uint64) float64 {
	s := rng.New(seed, 2)
	th := []float64{0, 0.2}
	g := make([]float64, 2)
	opt := optim.NewRMSprop(2, optim.RMSpropConfig{LR: lr})
	for range steps {
		sg, ds := mathx.Log1pExp(th[1]), mathx.Logistic(th[1])
		clear(g)
		for range S {
			u := s.NormFloat64()
			dlp := tg.DLogP(th[0] + sg*u)
			g[0] -= dlp
			g[1] -= (dlp*u + 1/sg) * ds
		}
		g[0] /= float64(S)
		g[1] /= float64(S)
		opt.Step(th, g)
	}
	sg := mathx.Log1pExp(th[1])
	const n = 24000
	h := 24.0 / n
	kl := 0.0
	for i := 0; i <= n; i++ {
		u := -12 + h*float64(i)
		lq0 := -0.5*u*u - 0.5*math.Log(2*math.Pi)
		lp := tg.LogP(th[0] + sg*u)
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		kl += w * math.Exp(lq0) * (lq0 - math.Log(sg) - lp)
	}
	return kl * h
}

// softplusInv is log(eʸ − 1) for y > 0.
func softplusInv(y float64) float64 {
	if y > 30 {
		return y
	}
	return math.Log(math.Expm1(y))
}

// InitE1 is E1's random start (Keras RandomNormal (mean, sd)): α′ (1, 0.05), β (0, 0.05),
// ϑ′_0 (−1.5, 0.3), ϑ′_i (softplus⁻¹(3.5/M), 0.5), drawn from the stream (seed, 0).
func (f *Flow1D) InitE1(seed uint64) {
	s := rng.New(seed, 0)
	M := f.M
	f.Raw[0] = -1.5 + 0.3*s.NormFloat64()
	for k := 1; k <= M; k++ {
		f.Raw[k] = softplusInv(3.5/float64(M)) + 0.5*s.NormFloat64()
	}
	f.Raw[M+1] = 1 + 0.05*s.NormFloat64()
	f.Raw[M+2] = 0.05 * s.NormFloat64()
}

// InitE2 is E2's start: α′ = 1, β = 0, ϑ′_0 = −5, ϑ′_i = softplus⁻¹(10/M) (coefficients
// evenly spaced on [−5, 5]).
func (f *Flow1D) InitE2() {
	M := f.M
	f.Raw[0] = -5
	for k := 1; k <= M; k++ {
		f.Raw[k] = softplusInv(10 / float64(M))
	}
	f.Raw[M+1], f.Raw[M+2] = 1, 0
}

// InitIdentity starts a MapLinear flow at q = N(0, 1): evenly spaced coefficients make h
// linear, h(x) = −3 + 6x, and α = 1/6, β = 1/2 map u ∈ [−3, 3] onto [0, 1], so θ = u.
func (f *Flow1D) InitIdentity() {
	M := f.M
	f.Raw[0] = -3
	for k := 1; k <= M; k++ {
		f.Raw[k] = softplusInv(6 / float64(M))
	}
	f.Raw[M+1], f.Raw[M+2] = softplusInv(1.0/6), 0.5
}
