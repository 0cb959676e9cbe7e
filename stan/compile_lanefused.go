package stan

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// One node per lane function: normal_lpdf and log_mix computed lane by lane inside an
// expression (compile_lane.go's laneScalarFns) are each one custom vector node with analytic
// partials, instead of a chain of seven or eight element-wise nodes each read and written once
// forward and once backward. Arguments are lane vectors (one element per lane) or shared
// scalars (size 1, their partials summed over the lanes).

// laneSize is the number of lanes of args (the largest size; shared scalars have size 1).
func laneSize(t *ad.Tape, args []ad.Var) int {
	n := 1
	for _, a := range args {
		n = max(n, t.Size(a))
	}
	return n
}

// addBcast adds d to the adjoint g of an argument at lane i (a shared scalar's at 0); g nil is
// a constant.
func addBcast(g []float64, i int, d float64) {
	if g == nil {
		return
	}
	if len(g) == 1 {
		g[0] += d
		return
	}
	g[i] += d
}

// laneNormalBack is the backward rule of laneNormal: aux holds z_i = (y_i − μ_i)/σ_i and
// 1/σ_i; ∂/∂y = −z/σ, ∂/∂μ = z/σ, ∂/∂σ = (z² − 1)/σ, each times the lane's adjoint.
type laneNormalBack struct{}

func (laneNormalBack) Backward(c ad.Custom) {
	t := c.Tape()
	gy, gm, gs := t.Grad(c.Arg(0)), t.Grad(c.Arg(1)), t.Grad(c.Arg(2))
	g, aux := c.Grad(), c.Aux()
	n := len(g)
	z, is := aux[:n], aux[n:]
	for i, gi := range g {
		r := z[i] * is[i] * gi
		addBcast(gy, i, -r)
		addBcast(gm, i, r)
		addBcast(gs, i, (z[i]*z[i]-1)*is[i]*gi)
	}
}

// laneNormal records normal_lpdf(y | μ, σ) per lane: −½z² − log σ − ½ log 2π,
// z = (y − μ)/σ, as one node.
func laneNormal(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	n := laneSize(t, []ad.Var{y, mu, sigma})
	yv, mv, sv := t.Value(y), t.Value(mu), t.Value(sigma)
	c := t.CustomUninit(laneNormalBack{}, n, 2*n, y, mu, sigma)
	out, aux := c.Value(), c.Aux()
	z, is := aux[:n], aux[n:]
	if len(sv) == 1 {
		// One scale: its log and inverse once.
		inv := 1 / sv[0]
		k := -math.Log(sv[0]) - mathx.LogSqrt2Pi
		for i := range n {
			zi := (bcast(yv, i) - bcast(mv, i)) * inv
			z[i], is[i] = zi, inv
			out[i] = -0.5*zi*zi + k
		}
		return c.Var()
	}
	for i := range n {
		s := sv[i]
		inv := 1 / s
		zi := (bcast(yv, i) - bcast(mv, i)) * inv
		z[i], is[i] = zi, inv
		out[i] = -0.5*zi*zi - math.Log(s) - mathx.LogSqrt2Pi
	}
	return c.Var()
}

// laneLogMixBack is the backward rule of laneLogMix: aux holds the first component's
// responsibility w_i = θ_i e^{a_i} / (θ_i e^{a_i} + (1 − θ_i) e^{b_i}); ∂/∂a = w, ∂/∂b = 1 − w,
// ∂/∂θ = w/θ − (1 − w)/(1 − θ).
type laneLogMixBack struct{}

func (laneLogMixBack) Backward(c ad.Custom) {
	t := c.Tape()
	th := t.Value(c.Arg(0))
	gt, ga, gb := t.Grad(c.Arg(0)), t.Grad(c.Arg(1)), t.Grad(c.Arg(2))
	g, w := c.Grad(), c.Aux()
	for i, gi := range g {
		wi := w[i]
		addBcast(ga, i, wi*gi)
		addBcast(gb, i, (1-wi)*gi)
		if gt != nil {
			ti := bcast(th, i)
			addBcast(gt, i, (wi/ti-(1-wi)/(1-ti))*gi)
		}
	}
}

// laneLogMix records log_mix(θ, a, b) = log(θ eᵃ + (1 − θ) eᵇ) per lane as one node:
// with x = log θ + a and y = log(1 − θ) + b, the value is max(x, y) + log1p(e^{−|x − y|})
// and w = e^{x − value} (one exp and one log1p per lane; log θ once for a shared θ).
func laneLogMix(t *ad.Tape, theta, a, b ad.Var) ad.Var {
	n := laneSize(t, []ad.Var{theta, a, b})
	tv, av, bv := t.Value(theta), t.Value(a), t.Value(b)
	c := t.CustomUninit(laneLogMixBack{}, n, n, theta, a, b)
	out, w := c.Value(), c.Aux()
	var lt, lu float64 // log θ and log(1 − θ) of a shared θ
	if len(tv) == 1 {
		lt, lu = math.Log(tv[0]), math.Log1p(-tv[0])
	}
	for i := range n {
		if len(tv) > 1 {
			lt, lu = math.Log(tv[i]), math.Log1p(-tv[i])
		}
		x, y := lt+bcast(av, i), lu+bcast(bv, i)
		switch {
		case x >= y && !math.IsInf(x, 0):
			// e = e^{y−x} ≤ 1: value x + log1p(e), w = 1/(1 + e).
			e := math.Exp(y - x)
			out[i], w[i] = x+math.Log1p(e), 1/(1+e)
		case y > x && !math.IsInf(y, 0):
			e := math.Exp(x - y)
			out[i], w[i] = y+math.Log1p(e), e/(1+e)
		default:
			// Infinite or NaN components: the plain formula.
			v := math.Log(math.Exp(x) + math.Exp(y))
			out[i], w[i] = v, math.Exp(x-v)
		}
	}
	return c.Var()
}
