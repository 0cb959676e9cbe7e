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
		out[i], w[i] = logMix2(lt+bcast(av, i), lu+bcast(bv, i))
	}
	return c.Var()
}

// laneMixNormal compiles log_mix(θ, normal_lpdf(y₁ | μ₁, σ₁), normal_lpdf(y₂ | μ₂, σ₂)) in a
// lane body — a two-component normal mixture — as one node (laneMixNormalNode) instead of
// three; ok is false for any other call. The arguments are evaluated, and their domain errors
// reported, in the order of the three calls compiled one by one, and the values are the same
// floating-point operations, so the results are those of laneNormal and laneLogMix.
func (c *compiler) laneMixNormal(e *Call) (evalFn, bool, error) {
	if e.Name != "log_mix" || len(e.Args) != 3 {
		return nil, false, nil
	}
	var comps [2]*Call
	for k := range comps {
		a := e.Args[k+1]
		for {
			p, ok := a.(*Paren)
			if !ok {
				break
			}
			a = p.X
		}
		call, ok := a.(*Call)
		if !ok || call.Fun != nil || call.Name != "normal_lpdf" || len(call.Args) != 3 || call.Info().Type != TReal {
			return nil, false, nil
		}
		comps[k] = call
	}
	exprs := append([]Expr{e.Args[0]}, append(append([]Expr(nil), comps[0].Args...), comps[1].Args...)...)
	args, err := c.laneScalarArgs(exprs)
	if err != nil {
		return nil, false, err
	}
	li := c.lane
	poss := [3]Pos{comps[0].Pos, comps[1].Pos, e.Pos}
	return func(f *frame) (Value, error) {
		t := f.st.t
		var xs [7]ad.Var
		var vals [7][]float64
		eval := func(i int) error {
			v, err := args[i](f)
			if err != nil {
				return err
			}
			xs[i] = laneRealVar(t, v)
			vals[i] = t.Value(xs[i])
			return nil
		}
		if err := eval(0); err != nil {
			return Value{}, err
		}
		for k := range 2 {
			for j := range 3 {
				if err := eval(1 + 3*k + j); err != nil {
					return Value{}, err
				}
			}
			for j, chk := range [3]struct {
				label string
				k     pcheck
			}{{lblY, chkNotNaN}, {lblLoc, chkFinite}, {lblScale, chkPositive}} {
				v := vals[1+3*k+j]
				if err := checkVals("normal_lpdf", chk.label, chk.k, v, len(v) > 1); err != nil {
					return Value{}, withPos(poss[k], err)
				}
			}
		}
		for _, th := range vals[0] {
			if !(th >= 0 && th <= 1) {
				return Value{}, withPos(poss[2], errf("log_mix", "lambda is %v, but must be in the interval [0, 1]", th))
			}
		}
		x := laneMixNormalNode(t, xs)
		n := li.lanesOf(f)
		if t.Size(x) != n {
			return laneReal(t, x, n), nil
		}
		return laneVec(x, n), nil
	}, true, nil
}

// laneMixNormalBack is the backward rule of laneMixNormalNode. aux holds, per lane, w (the
// first component's responsibility) and z_k = (y_k − μ_k)/σ_k, 1/σ_k of both components:
// ∂/∂a₁ = w, ∂/∂a₂ = 1 − w chain into laneNormalBack's partials, and
// ∂/∂θ = w/θ − (1 − w)/(1 − θ).
type laneMixNormalBack struct{}

func (laneMixNormalBack) Backward(c ad.Custom) {
	t := c.Tape()
	var gr [7][]float64
	for i := range gr {
		gr[i] = t.Grad(c.Arg(i))
	}
	th := t.Value(c.Arg(0))
	g, aux := c.Grad(), c.Aux()
	n := len(g)
	w := aux[:n]
	for i, gi := range g {
		wi := w[i]
		for k, gk := range [2]float64{wi * gi, (1 - wi) * gi} {
			z, is := aux[(1+2*k)*n+i], aux[(2+2*k)*n+i]
			r := z * is * gk
			addBcast(gr[1+3*k], i, -r)
			addBcast(gr[2+3*k], i, r)
			addBcast(gr[3+3*k], i, (z*z-1)*is*gk)
		}
		if gr[0] != nil {
			ti := bcast(th, i)
			addBcast(gr[0], i, (wi/ti-(1-wi)/(1-ti))*gi)
		}
	}
}

// laneMixNormalNode records log_mix(θ, normal_lpdf(y₁ | μ₁, σ₁), normal_lpdf(y₂ | μ₂, σ₂)) per
// lane as one node over args θ, y₁, μ₁, σ₁, y₂, μ₂, σ₂ (each a lane vector or a shared
// scalar): the component log densities as laneNormal computes them, combined as laneLogMix.
func laneMixNormalNode(t *ad.Tape, args [7]ad.Var) ad.Var {
	n := laneSize(t, args[:])
	var v [7][]float64
	for i, a := range args {
		v[i] = t.Value(a)
	}
	c := t.CustomUninit(laneMixNormalBack{}, n, 5*n, args[:]...)
	out, aux := c.Value(), c.Aux()
	w := aux[:n]
	// The components' log densities go into out and w first (a₁, a₂), then the mixture.
	for k, dst := range [2][]float64{out, w} {
		yv, mv, sv := v[1+3*k], v[2+3*k], v[3+3*k]
		z, is := aux[(1+2*k)*n:(2+2*k)*n], aux[(2+2*k)*n:(3+2*k)*n]
		if len(sv) == 1 {
			inv := 1 / sv[0]
			kc := -math.Log(sv[0]) - mathx.LogSqrt2Pi
			for i := range n {
				zi := (bcast(yv, i) - bcast(mv, i)) * inv
				z[i], is[i] = zi, inv
				dst[i] = -0.5*zi*zi + kc
			}
			continue
		}
		for i := range n {
			s := sv[i]
			inv := 1 / s
			zi := (bcast(yv, i) - bcast(mv, i)) * inv
			z[i], is[i] = zi, inv
			dst[i] = -0.5*zi*zi - math.Log(s) - mathx.LogSqrt2Pi
		}
	}
	tv := v[0]
	var lt, lu float64
	if len(tv) == 1 {
		lt, lu = math.Log(tv[0]), math.Log1p(-tv[0])
	}
	for i := range n {
		if len(tv) > 1 {
			lt, lu = math.Log(tv[i]), math.Log1p(-tv[i])
		}
		out[i], w[i] = logMix2(lt+out[i], lu+w[i])
	}
	return c.Var()
}

// logMix2 is log(eˣ + eʸ) and the weight eˣ/(eˣ + eʸ): with e = e^{−|x − y|} ≤ 1 the value is
// max(x, y) + log1p(e); infinite or NaN components take the plain formula.
func logMix2(x, y float64) (v, w float64) {
	switch {
	case x >= y && !math.IsInf(x, 0):
		e := math.Exp(y - x)
		return x + math.Log1p(e), 1 / (1 + e)
	case y > x && !math.IsInf(y, 0):
		e := math.Exp(x - y)
		return y + math.Log1p(e), e / (1 + e)
	}
	v = math.Log(math.Exp(x) + math.Exp(y))
	return v, math.Exp(x - v)
}
