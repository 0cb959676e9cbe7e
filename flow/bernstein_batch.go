package flow

import (
	"github.com/vigo-bayes/vigo/ad"
)

// The batched forward pass of BernsteinAR (Batch): one ad.Custom node for the S draws of a
// gradient step, value [Z (S×d) | logdet (S)], aux the S per-draw records of forwardNode
// (evalAll's record, then the MADE's hidden activations). The forward runs forwardNode's
// float64 code row by row; the backward pulls the S output adjoints back through the
// polynomials row by row into a coefficient adjoint laid out by dimension, then draw, and
// through the MADE's output layer once for the whole batch (nn.MADE.OutputsByDimBackBatch:
// the weight adjoints summed over the draws before the strided add into the parameter
// layout), then the hidden layers row by row.

// bernARBatch is the Backwarder of BernsteinAR's batch node (arguments: params, U).
type bernARBatch BernsteinAR

// Backward implements ad.Backwarder.
func (n *bernARBatch) Backward(c ad.Custom) {
	b := (*BernsteinAR)(n)
	t := c.Tape()
	params, U := c.Arg(0), c.Arg(1)
	gp, gu := t.Grad(params), t.Grad(U)
	d, P := b.d, b.p.m+1
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	uv := t.Value(U)
	S := len(uv) / d
	g := c.Grad()
	Zb, lb := g[:S*d], g[S*d:]
	aux := c.Aux()
	var gm, ga []float64
	if gp != nil {
		gm = gp[:b.nm]
		if b.fixed == nil {
			ga = gp[b.nm:]
		}
	}
	// Coefficient adjoints, G[(j·S + s)·P + k] for coefficient k of coordinate j of draw s.
	G := t.Scratch(S * d * P)
	for s := range S {
		var gus []float64
		if gu != nil {
			gus = gu[s*d : (s+1)*d]
		}
		rec := aux[s*(nr+nh):][:nr]
		b.p.backwardAll(rec, d, Zb[s*d:(s+1)*d], lb[s], G, s*P, S*P, true, ga, 0, 2, gus)
	}
	if gm == nil && gu == nil {
		return
	}
	pv := t.Value(params)[:b.nm]
	nl := d // size of the output layer's input: the last hidden layer, or u
	if nh > 0 {
		hid := b.made.Hidden()
		nl = hid[len(hid)-1]
	}
	H, gH := uv, gu
	if nh > 0 {
		H = t.Scratch(S * nl)
		for s := range S {
			copy(H[s*nl:(s+1)*nl], aux[s*(nr+nh)+nr+nh-nl:][:nl])
		}
		gH = t.Scratch(S * nl)
	}
	b.made.OutputsByDimBackBatch(S, b.packed(t, params), H, uv, G, gm, gH, gu, t.Scratch(P))
	if nh == 0 {
		return
	}
	ws := t.Scratch(nh)
	for s := range S {
		var gus []float64
		if gu != nil {
			gus = gu[s*d : (s+1)*d]
		}
		hs := aux[s*(nr+nh)+nr:][:nh]
		b.made.HiddenBack(pv, uv[s*d:(s+1)*d], hs, gH[s*nl:(s+1)*nl], gm, gus, ws)
	}
}

// ForwardBatch records z_s = T(u_s) and log|det ∂z/∂u| at u_s for the S rows of U as one
// node (see Batch): per row the MADE in plain float64, the d·M softplus increments, the d
// polynomials and the log-determinant, as Forward; the backward pass sums the output layer's
// weight adjoints over the rows before adding them to the parameters'. Cost: S times
// Forward's arithmetic with one node instead of S, and one strided pass over the output
// layer's weight adjoint instead of S.
func (b *BernsteinAR) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	checkLen("BernsteinAR.ForwardBatch", "params", t.Size(params), b.NumParams())
	d, P := b.d, b.p.m+1
	S := batchRows(t, "BernsteinAR.ForwardBatch", U, d)
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.CustomUninit((*bernARBatch)(b), S*(d+1), S*(nr+nh), params, U) // every aux entry is written below
	pv, uv := t.Value(params), t.Value(U)
	aux, out := c.Aux(), c.Value()
	ws := b.scratch(t, params)
	C := ws[:d*P]
	n := b.p.prepLen(d)
	pre, bs := ws[d*P:d*P+n], ws[d*P+n:]
	packed := b.packed(t, params)
	a, ok := t.Memo((*bernARNode)(b), params, 3*d)
	L := bernRows{coef: C, coefStride: P, aff: b.affine(pv), affStride: 2}
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	zl := t.Scratch(d + 1)
	for s := range S {
		u := uv[s*d : (s+1)*d]
		rec := aux[s*(nr+nh):][:nr+nh]
		hl := b.made.HiddenForward(pv[:b.nm], u, rec[nr:])
		b.made.OutputsByDim(packed, hl, u, C)
		b.p.prepCoefs(pre, d, L)
		copy(pre[b.p.affOff(d):], a)
		b.p.evalAll(pre, bs, d, L, u, zl, rec[:nr])
		copy(out[s*d:(s+1)*d], zl[:d])
		out[S*d+s] = zl[d]
	}
	v := c.Var()
	return t.AsMatrix(t.Slice(v, 0, S*d), S, d), t.Slice(v, S*d, S*(d+1))
}
