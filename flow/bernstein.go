package flow

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Bernstein is the elementwise Bernstein-polynomial flow of BF-VI (Dürr, Hörling, Dold,
// Kovylov & Sick 2024, "Bernstein flows for flexible posteriors in variational Bayes", AStA
// Adv. Stat. Anal. 108:375–394, §2.1): coordinate j of z is a strictly increasing function of
// coordinate j of u with its own parameters,
//
//	z_j = h_j(σ(α_j·u_j + β_j))          (BoundedTails, the paper's map)
//	z_j = h̃_j(α_j·u_j + β_j)             (LinearTails: no sigmoid, h continued linearly)
//
// where h_j is a Bernstein polynomial of degree M with coefficients ϑ_0 < … < ϑ_M increasing by
// construction (ϑ_0 free, increments softplus), α_j = softplus(a′_j) > 0 and β_j free. See
// bernPoly for the formulas and the stable basis; M ≥ 1, and M up to several hundred is fine.
//
//	log|det ∂z/∂u| = Σ_j [log h_j′(x_j) + log σ′(v_j) + log α_j]   (x_j = σ(v_j); the σ′ term
//	                                                               is absent for LinearTails)
//
// Parameters (d·(M+3)), one block per coordinate j: [r_0 … r_M, a′, β] with ϑ_0 = r_0,
// ϑ_k = ϑ_{k−1} + softplus(r_k). The paper writes the affine map as v = α·z′ + β (its 1-D code
// uses −β, a sign convention only); there is no final affine "a2" in BF-VI (that is part of
// the conditional-density Bernstein flows of Sick, Hothorn & Dürr 2021, whose free ϑ_0 and
// increments make it redundant here). The paper's "M" is the degree in its text and 1-D code
// but the number of coefficients (degree M−1) in its multivariate code.
//
// Tape cost of Forward: one ad.Custom node for z and the log-determinant (bernstein_fused.go)
// and two views, O(d·M) work with about four transcendental functions per coordinate (for
// BoundedTails two of them in one kernel.Softplus pass over all coordinates). The d·M
// softplus increments (the coefficients) do not depend on u: they are computed once per
// parameter value on a tape (ad.Tape.Memo), so the draws of one ELBO step share them.
type Bernstein struct {
	d int
	p bernPoly
}

// BernsteinOption configures a Bernstein or BernsteinAR flow.
type BernsteinOption func(*bernsteinConfig)

type bernsteinConfig struct {
	tails  Tails
	frozen bool
}

// BernsteinTails selects the behaviour beyond the unit interval (default BoundedTails, the
// paper's map).
func BernsteinTails(t Tails) BernsteinOption { return func(c *bernsteinConfig) { c.tails = t } }

// BernsteinFrozenAffine fixes the input affine map of every coordinate at α = softplus(0) =
// log 2, β = 0 and removes it from the parameters, as the BF-VI reference code's
// multivariate runs do (papers.md §1.1: a_z_prime and b_z are created but not optimised).
// Only NewBernsteinAR accepts it. With LinearTails the polynomial then covers
// u ∈ [0, 1/log 2] only (the identity Init still holds exactly).
func BernsteinFrozenAffine() BernsteinOption { return func(c *bernsteinConfig) { c.frozen = true } }

func newBernsteinConfig(opts []BernsteinOption) bernsteinConfig {
	var c bernsteinConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// NewBernstein returns the elementwise Bernstein flow on ℝ^d with polynomials of degree M.
func NewBernstein(d, M int, opts ...BernsteinOption) *Bernstein {
	if d < 1 {
		panic(fmt.Sprintf("flow: NewBernstein: d=%d, want ≥ 1", d))
	}
	c := newBernsteinConfig(opts)
	if c.frozen {
		panic("flow: NewBernstein: BernsteinFrozenAffine is for NewBernsteinAR only")
	}
	return &Bernstein{d: d, p: newBernPoly(M, c.tails)}
}

// Dim returns d.
func (b *Bernstein) Dim() int { return b.d }

// Degree returns M.
func (b *Bernstein) Degree() int { return b.p.m }

// Tails returns the behaviour beyond the unit interval.
func (b *Bernstein) Tails() Tails { return b.p.tails }

// Spec returns the flow's spec (type bernstein).
func (b *Bernstein) Spec() Spec {
	return Spec{Type: SpecBernstein, Dim: b.d, Degree: b.p.m, Tails: b.p.tails.String()}
}

// NumParams returns d·(M+3).
func (b *Bernstein) NumParams() int { return b.d * (b.p.m + 3) }

// Init writes, for every coordinate, the identity (LinearTails) or the near-identity of
// bernPoly.identity (BoundedTails). rnd is not used.
func (b *Bernstein) Init(params []float64, _ *rand.Rand) {
	checkLen("Bernstein.Init", "params", len(params), b.NumParams())
	B := b.p.m + 3
	for j := range b.d {
		b.p.identity(params[j*B : (j+1)*B])
	}
}

// Coefficients writes ϑ_0..ϑ_M of coordinate j (the polynomial's coefficients after the
// softplus-cumsum) into theta (len M+1) and returns α_j and β_j.
func (b *Bernstein) Coefficients(params []float64, j int, theta []float64) (alpha, beta float64) {
	checkLen("Bernstein.Coefficients", "params", len(params), b.NumParams())
	checkLen("Bernstein.Coefficients", "theta", len(theta), b.p.m+1)
	B := b.p.m + 3
	row := params[j*B : (j+1)*B]
	theta[0] = row[0]
	for k := 1; k <= b.p.m; k++ {
		theta[k] = theta[k-1] + mathx.Log1pExp(row[k])
	}
	return mathx.Log1pExp(row[b.p.m+1]), row[b.p.m+2]
}

func (b *Bernstein) layer(params ad.Var) bernLayer {
	B := b.p.m + 3
	return bernLayer{coef: params, coefStride: B, aff: params, affOff: b.p.m + 1, affStride: B}
}

// Forward records z = T(u) and log|det ∂z/∂u|.
func (b *Bernstein) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	checkLen("Bernstein.Forward", "params", t.Size(params), b.NumParams())
	checkLen("Bernstein.Forward", "u", t.Size(u), b.d)
	return b.forwardNode(t, params, u)
}

// Inverse writes u = T⁻¹(z), coordinate by coordinate by safeguarded Newton iteration (about
// 5–10 polynomial evaluations of O(M) each), and returns the forward log-determinant at u. It
// fails with ErrOutsideSupport when a coordinate of z is outside (ϑ_0, ϑ_M) for
// BoundedTails. u may alias z. No allocation in steady state.
func (b *Bernstein) Inverse(params, z, u []float64) (float64, error) {
	checkLen("Bernstein.Inverse", "params", len(params), b.NumParams())
	checkLen("Bernstein.Inverse", "z", len(z), b.d)
	checkLen("Bernstein.Inverse", "u", len(u), b.d)
	t := GetTape()
	defer PutTape(t)
	ws := t.Scratch(b.p.work())
	B := b.p.m + 3
	sum := 0.0
	for j := range b.d {
		row := params[j*B : (j+1)*B]
		uj, ld, err := b.p.invert(ws, row[:b.p.m+1], row[b.p.m+1], row[b.p.m+2], z[j])
		if err != nil {
			return math.NaN(), fmt.Errorf("%w (coordinate %d, z=%g)", err, j, z[j])
		}
		u[j] = uj
		sum += ld
	}
	return sum, nil
}

// InverseTape records u = T⁻¹(z) and the forward log-determinant at u, differentiable in z
// and the parameters: each u_j is one fused node whose partials come from the implicit
// function theorem, ∂u_j/∂z_j = 1/T_j′(u_j) and ∂u_j/∂φ = −(∂T_j/∂φ)/T_j′(u_j). For
// BoundedTails a point outside the support gives NaN values (the density is zero there).
func (b *Bernstein) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	checkLen("Bernstein.InverseTape", "params", t.Size(params), b.NumParams())
	checkLen("Bernstein.InverseTape", "z", t.Size(z), b.d)
	return b.p.recordInverse(t, b.d, b.layer(params), z, true, nil)
}

var _ Flow = (*Bernstein)(nil)

// invert solves z(u) = target for one coordinate with raw coefficients r and affine
// parameters (a′, β), and returns u and the forward log-derivative log ∂z/∂u there.
func (p *bernPoly) invert(ws, r []float64, ar, beta, target float64) (u, ld float64, err error) {
	p.prep(ws, r)
	v, err := p.solve(ws, target)
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	alpha := mathx.Log1pExp(ar)
	_, ldv, _, _ := p.at(ws, v, nil, nil)
	return (v - beta) / alpha, ldv + math.Log(alpha), nil
}

// bernLayer says where the parameters of d coordinates live on a tape: the raw coefficients of
// coordinate j at coef[coefOff + j·coefStride :][:M+1] and (a′_j, β_j) at
// aff[affOff + j·affStride :][:2].
type bernLayer struct {
	coef                ad.Var
	coefOff, coefStride int
	aff                 ad.Var
	affOff, affStride   int
}

// smallVars is the size of the on-stack buffer of Vars recordInverse uses before it
// allocates.
const smallVars = 96

// recordLogDet records Σ_j log T_j′(u_j) for u on the tape as one fused node (partials with
// respect to the whole coefficient and affine Vars and u): the log-determinant of the tape
// inverses, whose u is itself a tape value. (The forward direction records z and the
// log-determinant together in one ad.Custom node, bernstein_fused.go.)
func (p *bernPoly) recordLogDet(t *ad.Tape, d int, L bernLayer, u ad.Var) ad.Var {
	P := p.m + 1
	ws := t.Scratch(p.work())
	uval, aval := t.Value(u), t.Value(L.aff)
	cval := t.Value(L.coef)

	fb := t.Fused()
	gc := fb.Partial(L.coef)
	var ga []float64
	if L.aff == L.coef {
		ga = gc
	} else {
		ga = fb.Partial(L.aff)
	}
	gu := fb.Partial(u)
	sum := 0.0
	for j := range d {
		c := L.coefOff + j*L.coefStride
		a := L.affOff + j*L.affStride
		r := cval[c : c+P]
		ar, beta := aval[a], aval[a+1]
		alpha, sa := softplusSig(ar)
		uj := uval[j]
		v := alpha*uj + beta
		p.prep(ws, r)
		var dl []float64
		if gc != nil {
			dl = gc[c : c+P]
		}
		_, ld, _, dldv := p.at(ws, v, nil, dl)
		sum += ld + math.Log(alpha)
		if ga != nil {
			ga[a] += dldv*uj*sa + sa/alpha
			ga[a+1] += dldv
		}
		if gu != nil {
			gu[j] = dldv * alpha
		}
	}
	return fb.Done(sum)
}

// recordInverse records u = T⁻¹(z) coordinatewise (fused nodes with implicit-function
// partials) and, when wantLD, the forward log-determinant at u (recordLogDet, u on the
// tape). guess, when not nil, holds u to rounding (the caller solved already): each
// coordinate then costs one polynomial evaluation and a Newton polish instead of a root
// search.
func (p *bernPoly) recordInverse(t *ad.Tape, d int, L bernLayer, z ad.Var, wantLD bool, guess []float64) (u, logdet ad.Var) {
	P := p.m + 1
	zConst := t.IsConst(z)
	var buf [smallVars]ad.Var
	views := buf[:]
	if 3*d > len(buf) {
		views = make([]ad.Var, 3*d)
	}
	cv, av, zv := views[:d], views[d:2*d], views[2*d:3*d]
	for j := range d {
		c := L.coefOff + j*L.coefStride
		cv[j] = t.Slice(L.coef, c, c+P)
		a := L.affOff + j*L.affStride
		av[j] = t.Slice(L.aff, a, a+2)
		if !zConst {
			zv[j] = t.Index(z, j)
		}
	}
	ws := t.Scratch(p.work())
	dz := t.Scratch(P)
	zval, aval, cval := t.Value(z), t.Value(L.aff), t.Value(L.coef)
	for j := range d {
		c := L.coefOff + j*L.coefStride
		a := L.affOff + j*L.affStride
		r := cval[c : c+P]
		ar, beta := aval[a], aval[a+1]
		alpha, sa := softplusSig(ar)
		p.prep(ws, r)
		v := math.NaN()
		if guess != nil {
			v0 := alpha*guess[j] + beta
			z0, _, s0, _ := p.at(ws, v0, nil, nil)
			if g := z0 - zval[j]; math.Abs(g) <= 1e-10*(1+math.Abs(zval[j])) && s0 > 0 {
				v = v0 - g/s0
			}
		}
		if math.IsNaN(v) {
			var err error
			if v, err = p.solve(ws, zval[j]); err != nil {
				v = math.NaN()
			}
		}
		uj := (v - beta) / alpha
		_, _, dzdv, _ := p.at(ws, v, dz, nil)
		// T_j′(u) = dzdv·α; ∂u/∂φ = −(∂z/∂φ)/T_j′(u).
		tp := dzdv * alpha
		fu := t.Fused()
		if g := fu.Partial(cv[j]); g != nil {
			for k := range g {
				g[k] = -dz[k] / tp
			}
		}
		if g := fu.Partial(av[j]); g != nil {
			g[0], g[1] = -dzdv*uj*sa/tp, -dzdv/tp
		}
		if !zConst {
			if g := fu.Partial(zv[j]); g != nil {
				g[0] = 1 / tp
			}
		}
		cv[j] = fu.Done(uj)
	}
	if d == 1 {
		u = cv[0]
	} else {
		u = t.Concat(cv...)
	}
	if wantLD {
		logdet = p.recordLogDet(t, d, L, u)
	}
	return u, logdet
}
