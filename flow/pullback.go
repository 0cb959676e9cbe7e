package flow

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
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
// the parameters stopped): for an autoregressive layer it costs one forward pass, the rows of
// its triangular Jacobian and a back substitution, where LogDensity at the same point would
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

// ForwardPullback implements Pullback through the triangular Jacobian in the MADE's order.
// In the default (IAF) direction, y_j = x_j·e^{s_j} + m_j with (m, r) = MADE(x) and
// s = c·tanh(r/c), it runs in plain float64 without a tape, in forward mode: the hidden
// layers once (nn.MADE.HiddenForward), their Jacobian T = ∂h/∂x (H × d) by the products
// T ← diag(act′)·(W∘mask)ᵀ·T layer by layer, then row j of ∂y/∂x from the output layer's two
// columns m_j and r_j (weights 1 and x_j·e^{s_j}·∂s_j/∂r_j) against T plus the direct
// connections and the diagonal e^{s_j}, ∇_x log|det| = Σ_j (∂s_j/∂r_j)·∂r_j/∂x the same way,
// then the back substitution of pullbackTriangular. Cost: one MADE forward plus
// Σ_l in_l·out_l·d for T and 2·H·d² for the rows (H the last hidden layer), no tape. With
// ConditionOnOutput it records the d forward passes on a scratch tape (pullbackTriangular).
func (m *MAF) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("MAF.ForwardPullback", "params", len(params), m.NumParams())
	if m.onOutput {
		return pullbackTriangular(m, m.made.Degrees(), "MAF", params, x, gx, y, gy)
	}
	d, mm := m.d, m.made
	t := GetTape()
	defer PutTape(t)
	nh := mm.HiddenLen()
	hs := t.Scratch(nh)
	h := mm.HiddenForward(params, x, hs)
	L := mm.Layers()
	// T = ∂h/∂x, row-major len(h) × d; without hidden layers h = x and T = I (not formed).
	if nh > 0 {
		hid := mm.Hidden()
		maxH := 0
		for _, H := range hid {
			maxH = max(maxH, H)
		}
		T, Tn := t.Scratch(maxH*d), t.Scratch(maxH*d)
		dv := t.Scratch(maxH)
		off := 0
		for l, H := range hid {
			W, _ := mm.Layer(params, l)
			M := mm.Mask(l)
			yl := hs[off : off+H]
			off += H
			a := dv[:H]
			for o := range a {
				a[o] = 1
			}
			nn.ActivateBack(mm.Activation(), a, yl) // act′ at this layer
			next := Tn[:H*d]
			clear(next)
			if l == 0 {
				for i := range d {
					w, mk := W[i*H:(i+1)*H], M[i*H:(i+1)*H]
					for o, wo := range w {
						next[o*d+i] = wo * mk[o]
					}
				}
			} else {
				in := hid[l-1]
				for i := range in {
					w, mk := W[i*H:(i+1)*H], M[i*H:(i+1)*H]
					ti := T[i*d : (i+1)*d]
					for o, wo := range w {
						if c := wo * mk[o]; c != 0 {
							no := next[o*d : (o+1)*d]
							for k, v := range ti {
								no[k] += c * v
							}
						}
					}
				}
			}
			for o := range H {
				no := next[o*d : (o+1)*d]
				for k := range no {
					no[k] *= a[o]
				}
			}
			T, Tn = Tn, T
		}
		return m.pullRows(t, params, x, gx, y, gy, h, T[:len(h)*d], L)
	}
	return m.pullRows(t, params, x, gx, y, gy, h, nil, L)
}

// pullRows finishes MAF.ForwardPullback from the last hidden layer h and its Jacobian T
// (len(h) × d; nil: h = x, T = I): the output layer, y, the Jacobian rows, ∇ log|det| and the
// back substitution, in scratch of t (ForwardPullback's pooled tape).
func (m *MAF) pullRows(t *ad.Tape, params, x, gx, y, gy, h, T []float64, L int) (float64, error) {
	d, mm := m.d, m.made
	W, b := mm.Layer(params, L-1)
	M := mm.Mask(L - 1)
	V, VM := mm.Direct(params), mm.DirectMask()
	no := 2 * d
	out := t.Scratch(no)
	copy(out, b)
	for i, hi := range h {
		w, mk := W[i*no:(i+1)*no], M[i*no:(i+1)*no]
		for o := range out {
			out[o] += hi * (w[o] * mk[o])
		}
	}
	if V != nil {
		for i, xi := range x {
			w, mk := V[i*no:(i+1)*no], VM[i*no:(i+1)*no]
			for o := range out {
				out[o] += xi * (w[o] * mk[o])
			}
		}
	}
	ld := 0.0
	J, v := t.Scratch(d*d), t.Scratch(d)
	c := t.Scratch(len(h))
	ds := t.Scratch(d) // ∂s_j/∂r_j
	es := t.Scratch(d) // e^{s_j}
	for j := range d {
		s, dr := softClampAt(out[d+j], m.clamp)
		es[j], ds[j] = math.Exp(s), dr
		y[j] = x[j]*es[j] + out[j]
		ld += s
	}
	// rowOf writes row = Σ_o a_o ∂out_o/∂x over the output columns m_j, r_j for j0 ≤ j < j1
	// (a the output adjoint, len 2d).
	a := t.Scratch(no)
	// pair is Σ_{j0 ≤ j < j1} a_j·w_j + a_{d+j}·w_{d+j} over one row of masked weights.
	pair := func(w, mk []float64, j0, j1 int) float64 {
		sum := 0.0
		for j := j0; j < j1; j++ {
			sum += a[j]*(w[j]*mk[j]) + a[d+j]*(w[d+j]*mk[d+j])
		}
		return sum
	}
	rowOf := func(row []float64, j0, j1 int) {
		for i := range h {
			c[i] = pair(W[i*no:(i+1)*no], M[i*no:(i+1)*no], j0, j1)
		}
		clear(row)
		if T == nil { // h = x
			copy(row, c)
		} else {
			for i, ci := range c {
				if ci == 0 {
					continue
				}
				ti := T[i*d : (i+1)*d]
				for k, tv := range ti {
					row[k] += ci * tv
				}
			}
		}
		if V != nil {
			for k := range x {
				row[k] += pair(V[k*no:(k+1)*no], VM[k*no:(k+1)*no], j0, j1)
			}
		}
	}
	copy(a[d:], ds)
	rowOf(v, 0, d) // ∇_x log|det|
	for j := range d {
		v[j] = gx[j] - v[j]
	}
	clear(a)
	for j := range d {
		row := J[j*d : (j+1)*d]
		a[j], a[d+j] = 1, x[j]*es[j]*ds[j]
		rowOf(row, j, j+1)
		a[j], a[d+j] = 0, 0
		row[j] += es[j]
	}
	solveTriangularT(J, mm.Degrees(), v, gy)
	if !finite(ld, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: MAF.ForwardPullback: non-finite result (log-det %g)", ld)
	}
	return ld, nil
}

// ForwardPullback implements Pullback through the triangular Jacobian in the MADE's order, in
// plain float64: the forward node's arithmetic once (its record of the polynomials and the
// MADE's activations), two pullbacks through the polynomials (of Σ_j y_j, giving every
// coordinate's ∂y_j/∂x_j and coefficient adjoints at once, since y_j reads only its own
// coefficients; and of log|det|), the MADE's pullback of the log-determinant's coefficient
// adjoints, and for each row j of ∂y/∂x the pullback of dimension j's coefficient adjoints
// alone (nn.MADE.OutputsOfDimBack, then the hidden layers without weight gradients); then the
// back substitution of pullbackTriangular. Cost: one forward node, d + 1 input-only MADE
// pullbacks (the output layer once in all), O(d·M) for the polynomials; no root search.
func (b *BernsteinAR) ForwardPullback(params, x, gx, y, gy []float64) (float64, error) {
	checkLen("BernsteinAR.ForwardPullback", "params", len(params), b.NumParams())
	d, P := b.d, b.p.m+1
	mm := b.made
	t := GetTape()
	defer PutTape(t)
	pv := t.ConstRef(params)
	nr, nh := b.p.recLen(d), mm.HiddenLen()
	aux, out := t.Scratch(nr+nh), t.Scratch(d+1)
	b.eval(t, pv, x, out, aux)
	copy(y, out[:d])
	ld := out[d]
	rec, hs := aux[:nr], aux[nr:]
	packed := b.packed(t, pv)
	mp := params[:b.nm]
	hl := x
	if nh > 0 {
		hid := mm.Hidden()
		hl = hs[nh-hid[len(hid)-1]:]
	}
	gh, ws := t.Scratch(len(hl)), t.Scratch(nh)
	// pull back the output-layer input adjoint gh (nh > 0) to x, into row.
	hidden := func(row []float64) {
		if nh == 0 {
			for i, v := range gh {
				row[i] += v
			}
			return
		}
		mm.HiddenBack(mp, x, hs, gh, nil, row, ws)
	}
	ones, zeros := t.Scratch(d), t.Scratch(d)
	for j := range ones {
		ones[j] = 1
	}
	Gz, Gl := t.Scratch(d*P), t.Scratch(d*P)
	J, v := t.Scratch(d*d), t.Scratch(d)
	diag := t.Scratch(d)
	b.p.backwardAll(rec, d, ones, 0, Gz, 0, P, true, nil, 0, 0, diag)
	b.p.backwardAll(rec, d, zeros, 1, Gl, 0, P, true, nil, 0, 0, v)
	clear(gh)
	mm.OutputsByDimBack(packed, hl, x, Gl, nil, gh, v)
	hidden(v) // v = ∇_x log|det|
	for j := range d {
		v[j] = gx[j] - v[j]
	}
	for j := range d {
		row := J[j*d : (j+1)*d]
		clear(gh)
		mm.OutputsOfDimBack(packed, j, Gz[j*P:(j+1)*P], gh, row)
		hidden(row)
		row[j] += diag[j]
	}
	solveTriangularT(J, mm.Degrees(), v, gy)
	if !finite(ld, gy) || !finite(0, y) {
		return math.NaN(), fmt.Errorf("flow: BernsteinAR.ForwardPullback: singular Jacobian or non-finite result (log-det %g)", ld)
	}
	return ld, nil
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
