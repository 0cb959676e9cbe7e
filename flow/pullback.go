package flow

import (
	"fmt"
	"math"
)

// Pullback is implemented by flows that carry the gradient of a log density through their
// forward map at a known input without inverting it. If x has density q_x with score
// g_x = ∇_x log q_x(x), the pushforward density of y = T(x) is
//
//	log q_y(y) = log q_x(x) − log|det ∂T/∂x|,   x = T⁻¹(y),
//
// and its score at y = T(x) is
//
//	g_y = ∇_y log q_y(y) = (∂T/∂x)⁻ᵀ (g_x − ∇_x log|det ∂T/∂x|).
//
// ForwardPullback writes y = T(x) and g_y and returns log|det ∂T/∂x| at x. This is what a
// sticking-the-landing gradient needs at the family's own draws (the score of q at z, with
// the parameters stopped): for an autoregressive flow it costs one forward pass, d + 1
// vector–Jacobian products and a triangular solve, where LogDensity at the same point would
// invert the flow (d sequential passes, a root search per coordinate for Bernstein flows).
// Use the function ForwardPullback, which falls back to the inverse for other flows.
type Pullback interface {
	ForwardPullback(params, x, gx, y, gy []float64) (logdet float64, err error)
}

// ForwardPullback writes y = T(x; params) and the pushed-forward score
// g_y = (∂T/∂x)⁻ᵀ(g_x − ∇_x log|det ∂T/∂x|) (see Pullback) and returns log|det ∂T/∂x| at x.
// Flows that implement Pullback use their own method; any other flow is handled by recording
// its inverse at y on a scratch tape and pulling g_x back through it (exact for every flow,
// one pass for coupling flows, sequential for autoregressive ones). gx and gy may alias; y must
// not alias x. It fails when the Jacobian is singular or the result is not finite. No allocation
// in steady state.
func ForwardPullback(f Flow, params, x, gx, y, gy []float64) (float64, error) {
	d := f.Dim()
	checkLen("ForwardPullback", "params", len(params), f.NumParams())
	checkLen("ForwardPullback", "x", len(x), d)
	checkLen("ForwardPullback", "gx", len(gx), d)
	checkLen("ForwardPullback", "y", len(y), d)
	checkLen("ForwardPullback", "gy", len(gy), d)
	if p, ok := f.(Pullback); ok {
		return p.ForwardPullback(params, x, gx, y, gy)
	}
	return pullbackByInverse(f, params, x, gx, y, gy)
}

// pullbackByInverse is ForwardPullback through the recorded inverse: y = T(x) by Forward,
// then u(y), ld(y) = InverseTape at y, and g_y = ∇_y [g_xᵀu(y) − ld(y)] (u(y) = x, and
// ∂u/∂y = (∂T/∂x)⁻¹, ∇_y ld = (∂T/∂x)⁻ᵀ∇_x ld).
func pullbackByInverse(f Flow, params, x, gx, y, gy []float64) (float64, error) {
	t := GetTape()
	defer PutTape(t)
	P := t.ConstRef(params)
	z, ld := f.Forward(t, P, t.ConstRef(x))
	copy(y, t.Value(z))
	ldv := t.Float(ld)
	Y := t.Input(y)
	u, lu := f.InverseTape(t, P, Y)
	out := t.Sub(t.Dot(u, t.Const(gx...)), lu)
	if t.IsConst(out) {
		clear(gy)
	} else {
		t.Backward(out)
		copy(gy, t.Grad(Y))
	}
	if !finite(ldv, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: ForwardPullback: non-finite result (log-det %g)", ldv)
	}
	return ldv, nil
}

// pullbackTriangular is ForwardPullback for a layer whose output y_k depends on x_j only when
// deg[j] < deg[k] or j = k (an autoregressive layer in the order deg, a permutation of 1..d;
// nil: an elementwise layer, y_k depends on x_k alone). It records f.Forward at x with x an
// input on a scratch tape, takes ∇_x log|det| and the rows ∂y_k/∂x (one reverse pass each)
// and solves (∂T/∂x)ᵀ g_y = g_x − ∇_x log|det| by back substitution in decreasing degree:
//
//	g_y,j = (v_j − Σ_{k: deg k > deg j} (∂y_k/∂x_j) g_y,k) / (∂y_j/∂x_j).
//
// Cost: one Forward and d + 1 reverse passes of it (two for an elementwise layer), plus O(d²).
// fn names the flow in errors.
func pullbackTriangular(f Flow, deg []int, fn string, params, x, gx, y, gy []float64) (float64, error) {
	d := len(x)
	t := GetTape()
	defer PutTape(t)
	X := t.Input(x)
	z, ld := f.Forward(t, t.ConstRef(params), X)
	copy(y, t.Value(z))
	ldv := t.Float(ld)
	v := t.Scratch(d)
	copy(v, gx)
	if !t.IsConst(ld) {
		t.Backward(ld)
		for i, g := range t.Grad(X) {
			v[i] -= g
		}
	}
	J := t.Scratch(d * d)
	if deg == nil { // diagonal: one pass of Σ_k y_k gives every ∂y_k/∂x_k
		if s := t.Sum(z); !t.IsConst(s) {
			t.Backward(s)
			for k, g := range t.Grad(X) {
				J[k*d+k] = g
			}
		}
		solveTriangularT(J, nil, v, gy)
		if !finite(ldv, gy) || !finite(0, y) {
			return math.NaN(), fmt.Errorf("flow: %s.ForwardPullback: singular Jacobian or non-finite result (log-det %g)", fn, ldv)
		}
		return ldv, nil
	}
	for k := range d {
		zk := t.Index(z, k)
		if t.IsConst(zk) {
			continue
		}
		t.Backward(zk)
		copy(J[k*d:(k+1)*d], t.Grad(X))
	}
	solveTriangularT(J, deg, v, gy)
	if !finite(ldv, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: %s.ForwardPullback: singular Jacobian or non-finite result (log-det %g)", fn, ldv)
	}
	return ldv, nil
}

// solveTriangularT solves Jᵀw = v for the d×d row-major J whose row k has non-zeros only at
// columns j with deg[j] < deg[k] and at j = k (deg nil: diagonal J): back substitution in
// decreasing degree. A zero diagonal gives ±Inf or NaN entries (the caller checks).
func solveTriangularT(J []float64, deg []int, v, w []float64) {
	d := len(v)
	if deg == nil {
		for j := range d {
			w[j] = v[j] / J[j*d+j]
		}
		return
	}
	for r := d; r >= 1; r-- {
		j := indexOf(deg, r)
		s := v[j]
		for k := range d {
			if deg[k] > r {
				s -= J[k*d+j] * w[k]
			}
		}
		w[j] = s / J[j*d+j]
	}
}

// ForwardPullback implements Pullback: the parts in order, each pulling the score forward
// through its own map (T = f_k ∘ … ∘ f₁, so (∂T)⁻ᵀ = (∂f_k)⁻ᵀ ⋯ (∂f₁)⁻ᵀ and the log-determinant
// gradients enter layer by layer).
func (c *Composed) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("Composed.ForwardPullback", "params", len(params), c.NumParams())
	if len(c.parts) == 1 {
		return ForwardPullback(c.parts[0], params, x, gx, y, gy)
	}
	t := GetTape()
	defer PutTape(t)
	d := c.d
	bx, bg := t.Scratch(d), t.Scratch(d)
	by, bgy := t.Scratch(d), t.Scratch(d)
	copy(bx, x)
	copy(bg, gx)
	sum := 0.0
	for i, f := range c.parts {
		ld, err := ForwardPullback(f, params[c.offs[i]:c.offs[i+1]], bx, bg, by, bgy)
		if err != nil {
			return math.NaN(), err
		}
		sum += ld
		bx, by = by, bx
		bg, bgy = bgy, bg
	}
	copy(y, bx)
	copy(gy, bg)
	return sum, nil
}

// ForwardPullback implements Pullback: y_i = x_perm[i], g_y,i = g_x,perm[i] (a permutation
// matrix is orthogonal and has log-determinant 0).
func (p *Permutation) ForwardPullback(_, x, gx, y, gy []float64) (float64, error) {
	t := GetTape()
	defer PutTape(t)
	g := t.Scratch(len(gx))
	copy(g, gx)
	for i, j := range p.perm {
		y[i] = x[j]
		gy[i] = g[j]
	}
	return 0, nil
}

// ForwardPullback implements Pullback: y = μ + exp(ω)⊙x, g_y = exp(−ω)⊙g_x (the
// log-determinant Σω does not depend on x).
func (a *Affine) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	d := a.d
	checkLen("Affine.ForwardPullback", "params", len(params), 2*d)
	ld := 0.0
	for i := range d {
		om := params[d+i]
		e := math.Exp(om)
		y[i] = params[i] + e*x[i]
		gy[i] = gx[i] / e
		ld += om
	}
	if !finite(ld, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: Affine.ForwardPullback: non-finite result")
	}
	return ld, nil
}

// ForwardPullback implements Pullback through the triangular Jacobian in the MADE's order
// (see pullbackTriangular): one Forward, d + 1 reverse passes (d + 1 MADE backward passes; with
// ConditionOnOutput the recorded forward is d passes), no inverse.
func (m *MAF) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("MAF.ForwardPullback", "params", len(params), m.NumParams())
	return pullbackTriangular(m, m.made.Degrees(), "MAF", params, x, gx, y, gy)
}

// ForwardPullback implements Pullback through the triangular Jacobian in the MADE's order
// (see pullbackTriangular): one Forward and d + 1 reverse passes of the fused node, no root
// search.
func (b *BernsteinAR) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("BernsteinAR.ForwardPullback", "params", len(params), b.NumParams())
	return pullbackTriangular(b, b.made.Degrees(), "BernsteinAR", params, x, gx, y, gy)
}

// ForwardPullback implements Pullback: the map is elementwise, so the Jacobian is diagonal
// (one Forward and two reverse passes, no root search).
func (b *Bernstein) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("Bernstein.ForwardPullback", "params", len(params), b.NumParams())
	return pullbackTriangular(b, nil, "Bernstein", params, x, gx, y, gy)
}

// ForwardPullback implements Pullback in one forward and one reverse pass. With A the kept
// and B the changed coordinates, y_A = x_A and y_B = x_B⊙exp(s(x_A)) + t(x_A), so ∂T/∂x is
// block triangular with the diagonal blocks I and diag(exp s), and (∂T/∂x)ᵀg_y = v gives
//
//	g_y,B = exp(−s)⊙g_x,B,   g_y,A = g_x,A − ∇_{x_A}[Σ s + g_y,Bᵀ y_B]   (g_y,B held fixed),
//
// whose last term is one reverse pass (∇_{x_B} of the bracket is g_x,B, unused).
func (c *Coupling) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("Coupling.ForwardPullback", "params", len(params), c.NumParams())
	t := GetTape()
	defer PutTape(t)
	X := t.Input(x)
	z, ld, s := c.applyS(t, t.ConstRef(params), X, false)
	copy(y, t.Value(z))
	ldv := t.Float(ld)
	w := t.Scratch(len(c.change))
	for k, j := range c.change {
		w[k] = gx[j] * math.Exp(-t.Value(s)[k])
	}
	out := t.Add(ld, t.Dot(t.Gather(z, c.change), t.ConstRef(w)))
	g := t.Scratch(c.d)
	copy(g, gx)
	if !t.IsConst(out) && len(c.keep) > 0 {
		t.Backward(out)
		gX := t.Grad(X)
		for _, j := range c.keep {
			g[j] -= gX[j]
		}
	}
	for k, j := range c.change {
		g[j] = w[k]
	}
	copy(gy, g)
	if !finite(ldv, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: Coupling.ForwardPullback: non-finite result (log-det %g)", ldv)
	}
	return ldv, nil
}

var (
	_ Pullback = (*Coupling)(nil)
	_ Pullback = (*Composed)(nil)
	_ Pullback = (*Permutation)(nil)
	_ Pullback = (*Affine)(nil)
	_ Pullback = (*MAF)(nil)
	_ Pullback = (*BernsteinAR)(nil)
	_ Pullback = (*Bernstein)(nil)
)
