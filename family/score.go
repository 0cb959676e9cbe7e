package family

import (
	"github.com/vigo-bayes/vigo/flow"
)

// DrawScorer is a Family that gives the score of q at its own draws without inverting its map:
// DrawScore writes the draw z = T(ε; φ) for the noise eps (the point Draw records) and
// g = ∇_z log q(z; φ) at it, and returns log q(z; φ).
//
// This is all a sticking-the-landing gradient needs from log q (Roeder, Wu & Duvenaud 2017,
// NeurIPS, "Sticking the landing"): with the parameters stopped, log q enters the surrogate as
// a function of z alone, and at the draw its gradient is g. For a flow family, LogDensity at z
// inverts the flow on the tape (d sequential conditioner passes for an inverse autoregressive
// flow, a root search per coordinate for a Bernstein flow); DrawScore carries the base score
// forward through the known draw instead (flow.ForwardPullback): one forward pass, d + 1
// reverse passes and a triangular solve per autoregressive layer. objective.Estimator uses it
// when it is offered (objective.DrawScoreFamily names the same method); Flow implements it, and
// Affine offers it through Scorer when its base does.
type DrawScorer interface {
	Family
	DrawScore(params, eps, z, gz []float64) (logq float64, err error)
}

// DrawScore implements DrawScorer: u = ε (with a t base ε_t = F_ν⁻¹(Φ(ε))), the base score
// −u (t base: −(ν+1)u_i/(ν + u_i²)) pushed through the flow and its affine output layer. It
// fails when the flow's Jacobian is singular or the result is not finite. No allocation in
// steady state.
func (q *Flow) DrawScore(params, eps, z, gz []float64) (float64, error) {
	d := q.d
	checkLen("Flow.DrawScore", "params", len(params), q.NumParams())
	checkLen("Flow.DrawScore", "eps", len(eps), d)
	checkLen("Flow.DrawScore", "z", len(z), d)
	checkLen("Flow.DrawScore", "gz", len(gz), d)
	t := flow.GetTape()
	defer flow.PutTape(t)
	u, g := eps, t.Scratch(d)
	if !q.base.gaussian() {
		u = t.Scratch(d)
		q.base.transform(eps, u)
	}
	q.base.score(u, g)
	ld, err := flow.ForwardPullback(q.inner, params, u, g, z, gz)
	if err != nil {
		return 0, err
	}
	return q.base.logDensity(u) - ld, nil
}

// score writes g = ∇ log p(x) of the base: −x, or −(ν+1)x_i/(ν + x_i²) for the t base.
func (b tBase) score(x, g []float64) {
	for i, v := range x {
		if b.gaussian() {
			g[i] = -v
		} else {
			g[i] = -(b.nu + 1) * v / (b.nu + v*v)
		}
	}
}

// Scorer returns a as a DrawScorer when its base family is one, and false otherwise: the score
// of z = Shift + Scale·u at the base's draw u is Scale⁻ᵀ∇_u log q_base(u).
func (a *Affine) Scorer() (DrawScorer, bool) {
	b, ok := a.Base.(DrawScorer)
	if !ok {
		return nil, false
	}
	return affineScore{a, b}, true
}

// affineScore is an Affine whose base is a DrawScorer.
type affineScore struct {
	*Affine
	base DrawScorer
}

// DrawScore implements DrawScorer: the base's draw and score, mapped by z = Shift + Scale·u and
// g_z = Scale⁻ᵀ g_u (back substitution), log q − log|det Scale|. Cost O(d²) on top of the base.
func (a affineScore) DrawScore(params, eps, z, gz []float64) (float64, error) {
	d := a.Dim()
	checkLen("Affine.DrawScore", "z", len(z), d)
	checkLen("Affine.DrawScore", "gz", len(gz), d)
	t := flow.GetTape()
	defer flow.PutTape(t)
	u := t.Scratch(d)
	lq, err := a.base.DrawScore(params, eps, u, gz)
	if err != nil {
		return 0, err
	}
	a.apply(z, u)
	for i := range z {
		z[i] += a.Shift[i]
	}
	a.solveT(gz)
	return lq - a.logDet, nil
}

// solveT overwrites x with Scale⁻ᵀx.
func (a *Affine) solveT(x []float64) {
	d := len(x)
	if a.Diag {
		for i := range x {
			x[i] /= a.Scale[i]
		}
		return
	}
	for i := d - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < d; k++ {
			s -= a.Scale[k*d+i] * x[k]
		}
		x[i] = s / a.Scale[i*d+i]
	}
}

var _ DrawScorer = (*Flow)(nil)
