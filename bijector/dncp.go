package bijector

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// DNCP is a differentiable non-centred construction of Kingma & Welling (2014, "Efficient
// gradient-based inference through transformations between Bayes nets and neural nets", ICML,
// §3): a map x = g(u; θ) that turns a variable u with a fixed standard density (the base) into
// x with the distribution D(θ), where θ are the distribution's parameters — in a Bayes net,
// values computed from the latent's parents. Sampling u instead of x is the non-centred
// parameterisation of x. The paper's three constructions are all here:
//
//   - inverse CDF, x = F⁻¹(σ(u); θ) with the standard logistic base (σ its CDF, whose logs
//     log σ(u) = −softplus(−u) and log(1 − σ(u)) = −softplus(u) keep both tails exact in
//     float64): Exponential, Cauchy, Gumbel, Weibull, and Gamma with a constant shape;
//   - location–scale, x = loc + scale·u (LocScale: any location–scale family with its
//     standard member as base; with the logistic base it is also the logistic's inverse CDF);
//   - composition: LogNormal (exp of a location–scale normal), Beta and Dirichlet (ratios of
//     the Gamma construction).
//
// θ is a vector node of NumParams values, so the dependency on the parents is part of the tape
// and gradients reach them: Forward records x and log J = log|det ∂x/∂u| (restricted as for
// the other transforms of the package), both functions of u and θ. The base density does not
// enter: a model over u adds log D(x(u); θ) + log J(u; θ), which equals log base(u) exactly when
// the construction is exact. Given(θ) fixes θ and returns an ordinary Bijector.
//
// Parameters must be in the distribution's domain (positive scales, rates and shapes); outside
// it x and log J are NaN (a rejected point) and Free returns an error.
type DNCP struct {
	kind   dncpKind
	n      int       // elements (Beta: 1 pair; Dirichlet: K components)
	shapes []float64 // constant shapes of the Gamma-based constructions
}

type dncpKind int

const (
	dncpExponential dncpKind = iota
	dncpCauchy
	dncpGumbel
	dncpWeibull
	dncpLocScale
	dncpLogNormal
	dncpGamma
	dncpBeta
	dncpDirichlet
)

var dncpNames = [...]string{"Exponential", "Cauchy", "Gumbel", "Weibull", "LocScale", "LogNormal", "Gamma", "Beta", "Dirichlet"}

func newDNCP(name string, kind dncpKind, n int, shapes ...float64) *DNCP {
	if n < 0 {
		panic(fmt.Sprintf("bijector: %s: n=%d", name, n))
	}
	for i, a := range shapes {
		if !(a > 0) || math.IsInf(a, 1) {
			panic(fmt.Sprintf("bijector: %s: shape[%d]=%g, want positive and finite", name, i, a))
		}
	}
	return &DNCP{kind: kind, n: n, shapes: shapes}
}

// ExponentialDNCP: x = softplus(u)/rate, the Exponential(rate) inverse CDF −log(1 − p)/rate at
// p = σ(u); θ = (rate); log J = Σ log σ(u) − n·log rate. Cost O(n).
func ExponentialDNCP(n int) *DNCP { return newDNCP("ExponentialDNCP", dncpExponential, n) }

// CauchyDNCP: x = loc − scale·cot(π·σ(u)), the Cauchy(loc, scale) inverse CDF
// loc + scale·tan(π(p − ½)); θ = (loc, scale); log J = Σ [log π + log σ(u) + log σ(−u) −
// 2 log sin(π·σ(u))] + n·log scale, with sin(πp) = sin(π(1 − p)) evaluated at the smaller of
// p and 1 − p so that both tails keep their digits. Cost O(n).
func CauchyDNCP(n int) *DNCP { return newDNCP("CauchyDNCP", dncpCauchy, n) }

// GumbelDNCP: x = loc − scale·log(softplus(−u)), the Gumbel(loc, scale) inverse CDF
// loc − scale·log(−log p); θ = (loc, scale); log J = Σ [log σ(−u) − log softplus(−u)] +
// n·log scale. Cost O(n).
func GumbelDNCP(n int) *DNCP { return newDNCP("GumbelDNCP", dncpGumbel, n) }

// WeibullDNCP: x = scale·softplus(u)^{1/shape}, the Weibull(shape k, scale λ) inverse CDF
// λ(−log(1 − p))^{1/k}; θ = (k, λ); log J = Σ [log x + log σ(u) − log softplus(u)] − n·log k.
// Cost O(n).
func WeibullDNCP(n int) *DNCP { return newDNCP("WeibullDNCP", dncpWeibull, n) }

// LocScale: x = loc + scale·u; θ = (loc, scale); log J = n·log scale. With a standard normal
// (Student-t, Laplace, Cauchy, logistic) base, x has the normal (…) distribution with that
// location and scale: the location–scale DNCP of every family reparam.Group declares. Cost O(n).
func LocScale(n int) *DNCP { return newDNCP("LocScale", dncpLocScale, n) }

// LogNormalDNCP: x = exp(μ + σ·u) with the standard normal base; θ = (μ, σ);
// log J = Σ (μ + σu) + n·log σ. Cost O(n).
func LogNormalDNCP(n int) *DNCP { return newDNCP("LogNormalDNCP", dncpLogNormal, n) }

// GammaDNCP: x = P⁻¹(shape, σ(u))/rate, the Gamma(shape, rate) inverse CDF with the logistic
// base, so that x ~ Gamma(shape, rate) exactly when u is standard logistic; θ = (rate), the
// shape a constant of the transform (the derivative in a parameter shape would need
// ∂P/∂a through the implicit function; not provided). P⁻¹ is solved by safeguarded Newton
// steps on logit P(a, eʷ) = u in w = log x (mathx.LogRegIncGamma's logs, so both tails are
// resolved), to a relative 1e-14 in x. dx/du = σ(u)σ(−u)/(f_a(x)) with f_a the Gamma(a, 1)
// density, so log J = Σ [log σ(u) + log σ(−u) − log f_a(x₁)] − n·log rate, x₁ = P⁻¹(a, σ(u)).
// For |u| > 10⁸ (x beyond ≈ 10⁸ or below e^{−10⁸/a}) x is NaN: the inverse is not resolved
// there. Cost: O(n) Newton solves of a few incomplete-gamma evaluations each.
//
// This is the shape-dependent exact transform: Marsaglia & Tsang's x = d(1 + cu)³ is exact only
// with its rejection step, which a bijection cannot have.
func GammaDNCP(n int, shape float64) *DNCP {
	return newDNCP("GammaDNCP", dncpGamma, n, shape)
}

// BetaDNCP is the composition x₁ = g₁/(g₁ + g₂), x₂ = g₁ + g₂ of g₁ ~ Gamma(a, 1) and
// g₂ ~ Gamma(b, 1) by GammaDNCP from u = (u₁, u₂): x₁ ~ Beta(a, b), and the total x₂ ~
// Gamma(a + b, 1) independent of it is kept as a second output so that the map is a
// bijection ℝ² → (0, 1) × (0, ∞). θ is empty (a and b are constants). log J = log J₁ + log J₂ −
// log x₂ (the map (g₁, g₂) ↦ (x₁, x₂) has Jacobian determinant 1/x₂). Cost: two Gamma solves.
func BetaDNCP(a, b float64) *DNCP { return newDNCP("BetaDNCP", dncpBeta, 1, a, b) }

// DirichletDNCP is the composition x_k = g_k/S, x_{K+1} = S = Σ g_k of g_k ~ Gamma(α_k, 1):
// (x₁, …, x_K) ~ Dirichlet(α), and S ~ Gamma(Σα, 1), independent of it, is the last output so
// that the map ℝᴷ → simplex × (0, ∞) is a bijection. Size is K + 1; log J is over
// (x₁, …, x_{K−1}, S), log J = Σ log J_k − (K − 1)·log S. θ is empty. It panics unless K ≥ 2
// and every α_k is positive and finite. Cost: K Gamma solves.
func DirichletDNCP(alpha []float64) *DNCP {
	if len(alpha) < 2 {
		panic(fmt.Sprintf("bijector: DirichletDNCP: K=%d, want ≥ 2", len(alpha)))
	}
	return newDNCP("DirichletDNCP", dncpDirichlet, len(alpha), append([]float64(nil), alpha...)...)
}

func (d *DNCP) String() string {
	return fmt.Sprintf("%s[%d]%v", dncpNames[d.kind], d.n, d.shapes)
}

// FreeSize is the length of u: n (Beta: 2).
func (d *DNCP) FreeSize() int {
	if d.kind == dncpBeta {
		return 2
	}
	return d.n
}

// Size is the length of x: n (Beta: 2, Dirichlet: K + 1).
func (d *DNCP) Size() int {
	switch d.kind {
	case dncpBeta:
		return 2
	case dncpDirichlet:
		return d.n + 1
	}
	return d.n
}

// NumParams is the length of θ.
func (d *DNCP) NumParams() int {
	switch d.kind {
	case dncpExponential, dncpGamma:
		return 1
	case dncpBeta, dncpDirichlet:
		return 0
	}
	return 2
}

func (d *DNCP) checkTheta(method string, theta []float64) {
	if len(theta) != d.NumParams() {
		panic(fmt.Sprintf("bijector: %s.%s: len(theta)=%d, want %d", dncpNames[d.kind], method, len(theta), d.NumParams()))
	}
}

// Forward records x(u; θ) and log J(u; θ) on t; theta is a node of NumParams values (any node
// when NumParams is 0).
func (d *DNCP) Forward(t *ad.Tape, u, theta ad.Var) (x, logJ ad.Var) {
	name := dncpNames[d.kind]
	checkVar(name, "Forward", t, u, d.FreeSize())
	if np := d.NumParams(); np > 0 && t.Size(theta) != np {
		panic(fmt.Sprintf("bijector: %s.Forward: theta has size %d, want %d", name, t.Size(theta), np))
	}
	n := float64(d.n)
	p := func(i int) ad.Var { return t.Index(theta, i) }
	switch d.kind {
	case dncpExponential:
		rate := p(0)
		x = t.Div(t.Softplus(u), rate)
		return x, t.Sub(t.Sum(t.LogSigmoid(u)), t.MulC(t.Log(rate), n))
	case dncpCauchy:
		loc, scale := p(0), p(1)
		c, cv, cd := t.Map(u)
		l, lv, ld := t.Map(u)
		for i, ui := range t.Value(u) {
			cv[i], cd[i], lv[i], ld[i] = cauchyStd(ui)
		}
		return t.Add(loc, t.Mul(scale, c)), t.Add(t.Sum(l), t.MulC(t.Log(scale), n))
	case dncpGumbel:
		loc, scale := p(0), p(1)
		lsn := logSoftplusMap(t, u, -1)
		x = t.Sub(loc, t.Mul(scale, lsn))
		return x, t.Add(t.Sub(t.Sum(t.LogSigmoid(t.Neg(u))), t.Sum(lsn)), t.MulC(t.Log(scale), n))
	case dncpWeibull:
		k, lam := p(0), p(1)
		lsp := logSoftplusMap(t, u, 1)
		logx := t.Add(t.Log(lam), t.Div(lsp, k))
		x = t.Exp(logx)
		lj := t.Add(t.Sum(logx), t.Sub(t.Sum(t.LogSigmoid(u)), t.Sum(lsp)))
		return x, t.Sub(lj, t.MulC(t.Log(k), n))
	case dncpLocScale:
		loc, scale := p(0), p(1)
		return t.Add(loc, t.Mul(scale, u)), t.MulC(t.Log(scale), n)
	case dncpLogNormal:
		mu, sigma := p(0), p(1)
		e := t.Add(mu, t.Mul(sigma, u))
		return t.Exp(e), t.Add(t.Sum(e), t.MulC(t.Log(sigma), n))
	case dncpGamma:
		rate := p(0)
		g, lj := gammaMap(t, u, d.shapes[0])
		return t.Div(g, rate), t.Sub(lj, t.MulC(t.Log(rate), n))
	case dncpBeta:
		g, lj := gammaMap(t, u, 0, d.shapes...)
		g1, s := t.Index(g, 0), t.Sum(g)
		return t.Concat(t.Div(g1, s), s), t.Sub(lj, t.Log(s))
	default: // Dirichlet
		g, lj := gammaMap(t, u, 0, d.shapes...)
		s := t.Sum(g)
		return t.Concat(t.Div(g, s), s), t.Sub(lj, t.MulC(t.Log(s), n-1))
	}
}

// Constrain computes x and log J in float64 (through Forward on a private tape: these
// transforms are the DNCP's, not the layout's hot path).
func (d *DNCP) Constrain(u, theta, x []float64) float64 {
	checkLens(dncpNames[d.kind], "Constrain", u, x, d.FreeSize(), d.Size())
	d.checkTheta("Constrain", theta)
	var t ad.Tape
	th := t.Const(0)
	if len(theta) > 0 {
		th = t.Const(theta...)
	}
	xv, lj := d.Forward(&t, t.Const(u...), th)
	copy(x, t.Value(xv))
	return t.Float(lj)
}

// Free writes u = g⁻¹(x; θ). It returns an error naming the element when x is outside the
// support or its preimage is not finite, or when θ is outside the parameters' domain.
func (d *DNCP) Free(x, theta, u []float64) error {
	name := dncpNames[d.kind]
	checkLens(name, "Free", u, x, d.FreeSize(), d.Size())
	d.checkTheta("Free", theta)
	for i, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) || (d.kind != dncpCauchy && d.kind != dncpGumbel && d.kind != dncpLocScale && d.kind != dncpLogNormal && !(v > 0)) ||
			(i == 1 && !(v > 0)) {
			return domainErr(name, "theta[%d] = %g, outside the parameters' domain", i, v)
		}
	}
	fin := func(i int, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return domainErr(name, "x[%d] = %g has no finite preimage", i, x[i])
		}
		u[i] = v
		return nil
	}
	switch d.kind {
	case dncpExponential:
		for i, v := range x {
			if !(v > 0) || math.IsInf(v, 1) {
				return domainErr(name, "x[%d] = %g, want finite and > 0", i, v)
			}
			if err := fin(i, softplusInv(v*theta[0])); err != nil {
				return err
			}
		}
	case dncpCauchy:
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return domainErr(name, "x[%d] = %g, want finite", i, v)
			}
			z := (v - theta[0]) / theta[1]
			if math.Abs(z) > 1e300 {
				// The tail probability atan(1/|z|)/π would be subnormal: u not resolved.
				return domainErr(name, "x[%d] = %g is %g scales from loc, beyond 1e300", i, v, math.Abs(z))
			}
			if err := fin(i, cauchyInv(z)); err != nil {
				return err
			}
		}
	case dncpGumbel:
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return domainErr(name, "x[%d] = %g, want finite", i, v)
			}
			// softplus(−u) = e^w with w = −(x − loc)/scale, so u = −softplus⁻¹(e^w).
			if err := fin(i, -softplusInvExp(-(v-theta[0])/theta[1])); err != nil {
				return err
			}
		}
	case dncpWeibull:
		for i, v := range x {
			if !(v > 0) || math.IsInf(v, 1) {
				return domainErr(name, "x[%d] = %g, want finite and > 0", i, v)
			}
			if err := fin(i, softplusInvExp(theta[0]*(math.Log(v)-math.Log(theta[1])))); err != nil {
				return err
			}
		}
	case dncpLocScale:
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return domainErr(name, "x[%d] = %g, want finite", i, v)
			}
			if err := fin(i, (v-theta[0])/theta[1]); err != nil {
				return err
			}
		}
	case dncpLogNormal:
		for i, v := range x {
			if !(v > 0) || math.IsInf(v, 1) {
				return domainErr(name, "x[%d] = %g, want finite and > 0", i, v)
			}
			if err := fin(i, (math.Log(v)-theta[0])/theta[1]); err != nil {
				return err
			}
		}
	case dncpGamma:
		for i, v := range x {
			if !(v > 0) || math.IsInf(v, 1) {
				return domainErr(name, "x[%d] = %g, want finite and > 0", i, v)
			}
			if err := fin(i, gammaLogit(d.shapes[0], v*theta[0])); err != nil {
				return err
			}
		}
	case dncpBeta:
		b, s := x[0], x[1]
		if !(b > 0 && b < 1) {
			return domainErr(name, "x[0] = %g, want in (0, 1)", b)
		}
		if !(s > 0) || math.IsInf(s, 1) {
			return domainErr(name, "x[1] = %g, want finite and > 0", s)
		}
		if err := fin(0, gammaLogit(d.shapes[0], b*s)); err != nil {
			return err
		}
		if err := fin(1, gammaLogit(d.shapes[1], (1-b)*s)); err != nil {
			return err
		}
	default: // Dirichlet
		k := d.n
		s := x[k]
		if !(s > 0) || math.IsInf(s, 1) {
			return domainErr(name, "x[%d] = %g (the total), want finite and > 0", k, s)
		}
		sum := 0.0
		for i, v := range x[:k] {
			if !(v > 0) {
				return domainErr(name, "x[%d] = %g, want > 0", i, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-8 {
			return domainErr(name, "x[0..%d] sums to %.17g, want 1", k-1, sum)
		}
		for i, v := range x[:k] {
			if err := fin(i, gammaLogit(d.shapes[i], v/sum*s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Given returns the transform with θ fixed: an ordinary Bijector (which then passes every
// check of the package). It panics if len(theta) ≠ NumParams.
func (d *DNCP) Given(theta []float64) Bijector {
	d.checkTheta("Given", theta)
	return given{d, append([]float64(nil), theta...)}
}

type given struct {
	d     *DNCP
	theta []float64
}

func (g given) FreeSize() int  { return g.d.FreeSize() }
func (g given) Size() int      { return g.d.Size() }
func (g given) String() string { return fmt.Sprintf("%v%v", g.d, g.theta) }
func (g given) Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var) {
	th := t.Const(0)
	if len(g.theta) > 0 {
		th = t.Const(g.theta...)
	}
	return g.d.Forward(t, u, th)
}
func (g given) Constrain(u, x []float64) float64 { return g.d.Constrain(u, g.theta, x) }
func (g given) Free(x, u []float64) error        { return g.d.Free(x, g.theta, u) }

// cauchyStd returns c = −cot(πσ(u)), dc/du, ℓ = log dc/du and dℓ/du, evaluated through
// q = min(σ(u), σ(−u)) so that both tails keep their digits:
// c = sign(u)·cot(πq)… precisely c = cot(πσ(−u)) for u ≥ 0 and −cot(πσ(u)) for u < 0;
// dc/du = π·σ(u)σ(−u)/sin²(πq); dℓ/du = σ(−u) − σ(u) − 2π·σ(u)σ(−u)·cot(πσ(u)).
func cauchyStd(u float64) (c, dc, l, dl float64) {
	p, q := mathx.Logistic(u), mathx.Logistic(-u)
	m := math.Min(p, q)
	s, co := math.Sincos(math.Pi * m)
	cot := co / s
	if u >= 0 {
		c = cot
	} else {
		c = -cot
	}
	l = math.Log(math.Pi) + mathx.LogLogistic(u) + mathx.LogLogistic(-u) - 2*math.Log(s)
	dc = math.Exp(l)
	// cot(πσ(u)) = −c.
	dl = q - p - 2*math.Pi*p*q*(-c)
	return c, dc, l, dl
}

// cauchyInv is u with cauchyStd(u).c = z: σ(u) = ½ + atan(z)/π, written through the smaller
// tail probability atan(1/|z|)/π so that large |z| keep their digits.
func cauchyInv(z float64) float64 {
	if z == 0 {
		return 0
	}
	m := math.Atan(1/math.Abs(z)) / math.Pi // the smaller of σ(u) and σ(−u)
	v := math.Log1p(-m) - math.Log(m)       // logit(1 − m)
	if z < 0 {
		return -v
	}
	return v
}

// logSoftplusMap records y = log softplus(s·u) elementwise (s = ±1) with dy/du =
// s·σ(s·u)/softplus(s·u), accurate in both tails (softplus(v) ≈ eᵛ for v ≪ 0, where
// log softplus(v) = v + log1p(−eᵛ/2 + …) is taken from log1p(eᵛ) directly while it is normal).
func logSoftplusMap(t *ad.Tape, u ad.Var, s float64) ad.Var {
	y, val, der := t.Map(u)
	for i, ui := range t.Value(u) {
		v := s * ui
		var ls, ratio float64
		if v < -30 {
			e := math.Exp(v)
			ls = v + math.Log1p(-0.5*e)
			ratio = mathx.Logistic(v) / math.Exp(ls) // ≈ 1 − e/2…, finite
			if math.IsInf(ratio, 0) || math.IsNaN(ratio) {
				ratio = 1
			}
		} else {
			sp := mathx.Log1pExp(v)
			ls = math.Log(sp)
			ratio = mathx.Logistic(v) / sp
		}
		val[i], der[i] = ls, s*ratio
	}
	return y
}

// softplusInv returns u with softplus(u) = y > 0: log(expm1(y)), as y + log1p(−e^{−y}) for large y.
func softplusInv(y float64) float64 {
	if y > 30 {
		return y + math.Log1p(-math.Exp(-y))
	}
	return math.Log(math.Expm1(y))
}

// softplusInvExp returns softplusInv(eʷ) without overflowing or losing the small-eʷ digits.
func softplusInvExp(w float64) float64 {
	switch {
	case w > 3.4: // eʷ > 30
		e := math.Exp(w)
		return e + math.Log1p(-math.Exp(-e))
	case w < -30: // expm1(eʷ) = eʷ(1 + eʷ/2 + …)
		return w + math.Log1p(0.5*math.Exp(w))
	}
	return math.Log(math.Expm1(math.Exp(w)))
}

// gammaLogit returns logit P(a, x) = log P − log Q, the u of GammaDNCP's standard Gamma(a, 1)
// value x.
// Subnormal x (below the smallest normal float64, where x carries fewer than 53 bits) is
// refused with NaN: its u would not bring x back to 1e-9.
func gammaLogit(a, x float64) float64 {
	if x < 0x1p-1022 {
		return math.NaN()
	}
	lp, lq, _, _ := mathx.LogRegIncGamma(a, x)
	if u := lp - lq; math.Abs(u) <= gammaMaxU {
		return u
	}
	return math.NaN()
}

// gammaMaxU bounds |u| for the Gamma constructions: beyond it the Newton slope
// x·f_a(x)/(P·Q) cancels terms of the size of x (for u ≫ 0, x ≈ u) and the inverse is no longer
// resolved to 1e-9, so Forward gives NaN there and Free refuses the x that would map there.
const gammaMaxU = 1e8

// gammaInv returns w = log x with logit P(a, x) = u by Newton steps in w, kept inside a bracket
// that halves when a step leaves it. logit P is increasing in w with slope
// x·f_a(x)/(P·Q) = exp(w + log f_a(x) − log P − log Q).
func gammaInv(a, u float64) float64 {
	lg := mathx.Lgamma(a)
	// Start: Wilson–Hilferty with z ≈ u/1.7 (logistic → normal scale), or the lower-tail
	// asymptote P ≈ xᵃ/Γ(a+1) when the cube is not positive.
	z := u / 1.7
	c := 1 - 1/(9*a) + z/(3*math.Sqrt(a))
	var w float64
	if c > 0 {
		w = math.Log(a) + 3*math.Log(c)
	} else {
		w = (mathx.LogLogistic(u) + mathx.Lgamma(a+1)) / a
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	for range 200 {
		x := math.Exp(w)
		lp, lq, _, _ := mathx.LogRegIncGamma(a, x)
		h := lp - lq - u
		if h > 0 {
			hi = w
		} else {
			lo = w
		}
		slope := math.Exp(w + (a-1)*w - x - lg - lp - lq)
		step := h / slope
		nw := w - step
		if math.IsNaN(nw) || nw <= lo || nw >= hi {
			switch {
			case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
				nw = 0.5 * (lo + hi)
			case math.IsInf(hi, 1):
				nw = w + math.Max(1, math.Abs(w))
			default:
				nw = w - math.Max(1, math.Abs(w))
			}
		}
		if math.Abs(nw-w) <= 1e-15*math.Max(1, math.Abs(w)) || hi-lo <= 1e-15*math.Max(1, math.Abs(w)) {
			return nw
		}
		w = nw
	}
	return w
}

// gammaMap records g_i = P⁻¹(a_i, σ(u_i)) (a_i = shape, or shapes[i] when given) and the sum
// of log dg_i/du_i, with their derivatives in u: dg/du = σ(u)σ(−u)/f_a(g) and
// d/du log dg/du = σ(−u) − σ(u) − ((a − 1)/g − 1)·dg/du.
func gammaMap(t *ad.Tape, u ad.Var, shape float64, shapes ...float64) (g, logJ ad.Var) {
	g, gv, gd := t.Map(u)
	l, lv, ld := t.Map(u)
	for i, ui := range t.Value(u) {
		a := shape
		if len(shapes) > 0 {
			a = shapes[i]
		}
		w := math.NaN()
		if math.Abs(ui) <= gammaMaxU {
			w = gammaInv(a, ui)
		}
		x := math.Exp(w)
		logf := (a-1)*w - x - mathx.Lgamma(a)
		lj := mathx.LogLogistic(ui) + mathx.LogLogistic(-ui) - logf
		d := math.Exp(lj)
		gv[i], gd[i] = x, d
		lv[i], ld[i] = lj, mathx.Logistic(-ui)-mathx.Logistic(ui)-((a-1)/x-1)*d
	}
	return g, t.Sum(l)
}
