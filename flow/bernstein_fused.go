package flow

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
)

// The forward pass of Bernstein and BernsteinAR as one ad.Custom node per draw: the node's
// value is (z_1, …, z_d, log|det ∂z/∂u|). Its forward evaluates all d polynomials (the d·M
// softplus increments in one vectorised pass; for Bernstein they depend on the parameters
// only and are prepared once per parameter value, ad.Tape.Memo) and keeps ∂z_j/∂r, ∂ld_j/∂r
// and the six affine and input partials of every coordinate; its backward combines them with
// the output adjoint (r̄_j = z̄_j·∂z_j/∂r + l̄·∂ld_j/∂r) and, for BernsteinAR, pulls r̄ back
// through the whole MADE in plain float64 (nn.MADE.OutputsByDimBack, HiddenBack). Against one
// fused node per z_j, a log-determinant node, the coordinate views and a concatenation (and
// for BernsteinAR the MADE's layer nodes, the masked copies of its weights, its K·d-sized
// output and that output's transpose) this records 1 node instead of ≈ 3d + 20.

// bernRec is the number of scalars kept per coordinate after ∂z/∂r and ∂ld/∂r:
// ∂z/∂(a′, β, u) and ∂ld/∂(a′, β, u).
const bernRec = 6

// bernRows says where the parameters of d coordinates are in plain slices: the raw
// coefficients of coordinate j at coef[coefOff + j·coefStride :][:M+1] and (a′_j, β_j) at
// aff[affOff + j·affStride :][:2].
type bernRows struct {
	coef                []float64
	coefOff, coefStride int
	aff                 []float64
	affOff, affStride   int
}

// recLen returns the length of the per-draw record forwardAll keeps for d coordinates.
func (p *bernPoly) recLen(d int) int { return d * (2*(p.m+1) + bernRec) }

// prepLen returns the length of the prepared coefficients of d coordinates (prepAll).
func (p *bernPoly) prepLen(d int) int { return 3*d*(p.m+1) + 3*d }

// wsLen returns the length of the scratch forwardAll needs for d coordinates.
func (p *bernPoly) wsLen(d int) int { return p.prepLen(d) + 3*(p.m+1) }

// prepAll writes the prepared coefficients of d coordinates into pre (prepLen(d)): for
// coordinate j, ϑ, δ and σ(r) as prep writes them at pre[3(M+1)j:], and α_j, σ(a′_j) and
// log α_j at pre[3(M+1)d + 3j:] (prepAffine). Cost: the d·M softplus increments and their
// sigmoids (kernel.Softplus), d cumulative sums, and d softplus for α.
func (p *bernPoly) prepAll(pre []float64, d int, L bernRows) {
	p.prepCoefs(pre, d, L)
	p.prepAffine(pre[3*d*(p.m+1):], d, L)
}

// prepCoefs is the part of prepAll for the polynomial coefficients (ϑ, δ, σ(r)).
func (p *bernPoly) prepCoefs(pre []float64, d int, L bernRows) {
	P := p.m + 1
	for j := range d {
		r := L.coef[L.coefOff+j*L.coefStride:][:P]
		w := pre[3*j*P : 3*(j+1)*P]
		theta, delta, sig := w[:P], w[P:2*P], w[2*P:]
		kernel.Softplus(delta[1:], sig[1:], r[1:])
		acc := r[0]
		theta[0] = acc
		for k := 1; k < P; k++ {
			acc += delta[k]
			theta[k] = acc
		}
	}
}

// prepAffine writes α_j, σ(a′_j) and log α_j into a[3j:3j+3] for the d affine pairs of L.
func (p *bernPoly) prepAffine(a []float64, d int, L bernRows) {
	for j := range d {
		alpha, sa := softplusSig(L.aff[L.affOff+j*L.affStride])
		a[3*j], a[3*j+1], a[3*j+2] = alpha, sa, math.Log(alpha)
	}
}

// evalAll writes z_j = T_j(u_j) into out[j] and Σ_j log T_j′(u_j) into out[d] from the
// prepared coefficients pre (prepAll) and the β_j of L, and the partials of coordinate j into
// rec[j·(2(M+1)+bernRec):]: ∂z_j/∂r, ∂ld_j/∂r, then ∂z_j/∂(a′, β, u), ∂ld_j/∂(a′, β, u).
// bs is scratch of 3(M+1). Cost O(d·M) and four transcendental functions per coordinate (at).
func (p *bernPoly) evalAll(pre, bs []float64, d int, L bernRows, u, out, rec []float64) {
	P := p.m + 1
	R := 2*P + bernRec
	sum := 0.0
	for j := range d {
		w := pre[3*j*P : 3*(j+1)*P]
		a := pre[3*d*P+3*j:][:3]
		alpha, sa := a[0], a[1]
		uj := u[j]
		rj := rec[j*R : (j+1)*R]
		v := alpha*uj + L.aff[L.affOff+j*L.affStride+1]
		zj, ld, dzdv, dldv := p.atSplit(w, bs, v, rj[:P], rj[P:2*P])
		out[j] = zj
		sum += ld + a[2]
		s := rj[2*P:]
		s[0], s[1], s[2] = dzdv*uj*sa, dzdv, dzdv*alpha
		s[3], s[4], s[5] = dldv*uj*sa+sa/alpha, dldv, dldv*alpha
	}
	out[d] = sum
}

// forwardAll is prepAll then evalAll with scratch ws of wsLen(d).
func (p *bernPoly) forwardAll(ws []float64, d int, L bernRows, u, out, rec []float64) {
	n := p.prepLen(d)
	pre, bs := ws[:n], ws[n:n+3*(p.m+1)]
	p.prepAll(pre, d, L)
	p.evalAll(pre, bs, d, L, u, out, rec)
}

// backwardAll adds the pullback of the adjoints zbar (of z, len d) and lbar (of the
// log-determinant) through the record of forwardAll: coefficient adjoints into
// gc[gcOff + j·gcStride :][:M+1], affine adjoints into ga[gaOff + j·gaStride :][:2], input
// adjoints into gu[j]. Any of gc, ga, gu may be nil to skip it. Cost O(d·M).
func (p *bernPoly) backwardAll(rec []float64, d int, zbar []float64, lbar float64, gc []float64, gcOff, gcStride int, ga []float64, gaOff, gaStride int, gu []float64) {
	P := p.m + 1
	R := 2*P + bernRec
	for j := range d {
		rj := rec[j*R : (j+1)*R]
		zb := zbar[j]
		if gc != nil {
			g := gc[gcOff+j*gcStride:][:P]
			dz, dl := rj[:P], rj[P:2*P]
			for k := range g {
				g[k] += zb*dz[k] + lbar*dl[k]
			}
		}
		s := rj[2*P:]
		if ga != nil {
			a := gaOff + j*gaStride
			ga[a] += zb*s[0] + lbar*s[3]
			ga[a+1] += zb*s[1] + lbar*s[4]
		}
		if gu != nil {
			gu[j] += zb*s[2] + lbar*s[5]
		}
	}
}

// bernElemNode is the ad.Backwarder of Bernstein's forward node (arguments: params, u).
type bernElemNode Bernstein

// Backward implements ad.Backwarder.
func (n *bernElemNode) Backward(c ad.Custom) {
	b := (*Bernstein)(n)
	t := c.Tape()
	gp, gu := t.Grad(c.Arg(0)), t.Grad(c.Arg(1))
	g := c.Grad()
	B := b.p.m + 3
	b.p.backwardAll(c.Aux(), b.d, g[:b.d], g[b.d], gp, 0, B, gp, b.p.m+1, B, gu)
}

// forwardNode records Bernstein's forward node.
func (b *Bernstein) forwardNode(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	d := b.d
	c := t.Custom((*bernElemNode)(b), d+1, b.p.recLen(d), params, u)
	pv := t.Value(params)
	B := b.p.m + 3
	L := bernRows{coef: pv, coefStride: B, aff: pv, affOff: b.p.m + 1, affStride: B}
	// The coefficients do not depend on u: prepare them once per parameter value (once per
	// gradient step, not once per draw).
	pre, ok := t.Memo(b, params, b.p.prepLen(d))
	if !ok {
		b.p.prepAll(pre, d, L)
	}
	b.p.evalAll(pre, t.Scratch(3*(b.p.m+1)), d, L, t.Value(u), c.Value(), c.Aux())
	out := c.Var()
	return t.Slice(out, 0, d), t.Index(out, d)
}

// bernARNode is the ad.Backwarder of BernsteinAR's forward node (arguments: params, u). The
// node's aux holds the record of evalAll, then the MADE's hidden activations.
type bernARNode BernsteinAR

// Backward implements ad.Backwarder.
func (n *bernARNode) Backward(c ad.Custom) {
	b := (*BernsteinAR)(n)
	t := c.Tape()
	params, u := c.Arg(0), c.Arg(1)
	gp, gu := t.Grad(params), t.Grad(u)
	g := c.Grad()
	d, P := b.d, b.p.m+1
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	aux := c.Aux()
	rec, hs := aux[:nr], aux[nr:nr+nh]
	var gm, ga []float64
	if gp != nil {
		gm = gp[:b.nm]
		if b.fixed == nil {
			ga = gp[b.nm:]
		}
	}
	G := t.Scratch(d * P)
	b.p.backwardAll(rec, d, g[:d], g[d], G, 0, P, ga, 0, 2, gu)
	if gm == nil && gu == nil {
		return
	}
	pv, uv := t.Value(params)[:b.nm], t.Value(u)
	hl, gh := uv, gu // without hidden layers the output layer reads u
	if nh > 0 {
		hid := b.made.Hidden()
		hl = hs[nh-hid[len(hid)-1]:]
		gh = t.Scratch(len(hl))
	}
	b.made.OutputsByDimBack(b.packed(t, params), hl, uv, G, gm, gh, gu)
	if nh > 0 {
		b.made.HiddenBack(pv, uv, hs, gh, gm, gu, t.Scratch(nh))
	}
}

// packed returns the MADE's packed output layer for the value of params, packing it on the
// first call for that value (once per gradient step; ad.Tape.Memo).
func (b *BernsteinAR) packed(t *ad.Tape, params ad.Var) []float64 {
	q, ok := t.Memo(b, params, b.made.PackedLen())
	if !ok {
		b.made.PackOutput(t.Value(params)[:b.nm], q)
	}
	return q
}

// forwardNode records BernsteinAR's forward pass as one node: the MADE in plain float64 (its
// hidden layers, then its output layer from the unmasked output weights packed once per
// parameter value), the d polynomials and the log-determinant.
func (b *BernsteinAR) forwardNode(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	d, P := b.d, b.p.m+1
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.Custom((*bernARNode)(b), d+1, nr+nh, params, u)
	pv, uv := t.Value(params), t.Value(u)
	aux := c.Aux()
	hl := b.made.HiddenForward(pv[:b.nm], uv, aux[nr:nr+nh])
	C := t.Scratch(d * P)
	b.made.OutputsByDim(b.packed(t, params), hl, uv, C)
	L := bernRows{coef: C, coefStride: P, aff: b.affine(pv), affStride: 2}
	// The coefficients change with every draw, the affine pairs only with the parameters:
	// their softplus is prepared once per parameter value (ad.Tape.Memo).
	n := b.p.prepLen(d)
	pre := t.Scratch(n)
	b.p.prepCoefs(pre, d, L)
	a, ok := t.Memo((*bernARNode)(b), params, 3*d)
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	copy(pre[3*d*P:], a)
	b.p.evalAll(pre, t.Scratch(3*P), d, L, uv, c.Value(), aux[:nr])
	out := c.Var()
	return t.Slice(out, 0, d), t.Index(out, d)
}
