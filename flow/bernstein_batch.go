package flow

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// The batched forward pass of BernsteinAR (Batch): one ad.Custom node for the S draws of a
// gradient step, value [Z (S×d) | logdet (S)], in a few passes over all S draws at once:
//
//  1. the MADE as dense matrix products over the S×d batch (kernel.Dense per layer, from the
//     masked weights W⊙mask formed once per parameter value, ad.Tape.Memo): hidden layer l
//     is H_l = act(H_{l−1}·W̃_l + 1·b_lᵀ) (S×n_l), the output C = H_L·W̃_out + 1·bᵀ (+ U·Ṽ with
//     direct connections), S×(M+1)d in the MADE's parameter-major layout, C[s, k·d + j] the
//     raw coefficient k of coordinate j of draw s;
//  2. the S·d·M softplus increments and their sigmoids in one kernel.Softplus pass;
//  3. per draw, evalAll (the polynomials, log-derivatives and the partials the backward needs,
//     four coordinates per kernel.BernsteinElev4 call, exactly as Forward), reading the
//     coefficients of four adjacent coordinates, which are adjacent in C's layout.
//
// The backward pass is hand-written and batched the same way: the coefficient adjoints of all
// draws straight into C's layout (C̄[s, k·d+j] = z̄_sj·∂z_sj/∂r_kj + l̄_s·∂ld_sj/∂r_kj, the
// softplus derivative already in the record), then each layer's pullback as three matrix
// products over the batch (kernel.DenseBackW: W̄ += (H_{l−1}ᵀ·Ḡ)⊙mask and b̄ += 1ᵀ·Ḡ;
// kernel.DenseBackX: H̄_{l−1} = Ḡ·W̃ᵀ) and the activation's derivative. No per-scalar tape
// node is recorded and nothing is allocated in steady state. Every draw's values equal those
// of Forward up to the rounding of the reordered sums in the matrix products; the result does
// not depend on anything but S and the inputs (no goroutines), so it is the same for any
// number of workers.
//
// Cost per step: the MADE's dense multiply-adds S·Σ_l n_{l−1}·n_l forward and twice that
// backward (masked entries included: for the default degrees about twice the entries the
// outputs see, in long contiguous runs instead of per-dimension runs of M+1), S·d·M softplus
// evaluations and S·d polynomials of degree M (O(M) each).

// bernARBatch is the Backwarder of BernsteinAR's batch node (arguments: params, U). Its aux
// holds the S records of evalAll (recLen(d) each), then the hidden activations of the S
// draws layer by layer (layer l an S×n_l block).
type bernARBatch BernsteinAR

// bernARMasked keys the memo of the masked weights.
type bernARMasked BernsteinAR

// bernARBatchScratch keys the memo of the batch node's working memory.
type bernARBatchScratch BernsteinAR

// maskedLen returns the length of the masked weights: Σ_l n_{l−1}·n_l over the layers, then
// d·(M+1)d for the direct connections.
func (b *BernsteinAR) maskedLen() int {
	n := 0
	in := b.d
	for _, h := range b.made.Hidden() {
		n += in * h
		in = h
	}
	n += in * b.made.K() * b.d
	if b.made.HasDirect() {
		n += b.d * b.made.K() * b.d
	}
	return n
}

// masked returns W⊙mask of every layer of the MADE, one after the other (layer l n_{l−1}×n_l
// row-major, as the parameters), then the masked direct weights, for the value of params:
// formed on the first call for that value (once per gradient step; ad.Tape.Memo).
func (b *BernsteinAR) masked(t *ad.Tape, params ad.Var) []float64 {
	w, ok := t.Memo((*bernARMasked)(b), params, b.maskedLen())
	if ok {
		return w
	}
	mp := t.Value(params)[:b.nm]
	m := b.made
	o := 0
	for l := range m.Layers() {
		W, _ := m.Layer(mp, l)
		mk := m.Mask(l)
		dst := w[o : o+len(W)]
		for i, v := range W {
			dst[i] = v * mk[i]
		}
		o += len(W)
	}
	if V := m.Direct(mp); V != nil {
		dst := w[o : o+len(V)]
		b.directMask(V, dst, 1)
	}
	return w
}

// directMask sets dst[i·K·d + c] = a·V[i·K·d + c] where output column c = p·d + j sees input i
// through a direct connection (degree of j > degree of i) and 0 elsewhere; with a = 0 it
// adds the masked V to dst instead (the adjoint's accumulation).
func (b *BernsteinAR) directMask(V, dst []float64, a float64) {
	d, kd := b.d, b.made.K()*b.d
	deg := b.made.Degrees()
	for i := range d {
		row, out := V[i*kd:(i+1)*kd], dst[i*kd:(i+1)*kd]
		for c, v := range row {
			see := deg[c%d] > deg[i]
			switch {
			case a != 0 && see:
				out[c] = a * v
			case a != 0:
				out[c] = 0
			case see:
				out[c] += v
			}
		}
	}
}

// batchScratch returns the working memory of the batch node for S draws: the MADE's output C
// and the softplus values and sigmoids of its entries (S·(M+1)d each), then the prepared
// coefficients (prepLen), evalAll's scratch (evalLen) and one draw's d+1 outputs. The backward pass reuses it for the
// coefficient adjoints and the layer adjoints. Nothing in it outlives one call; kept by the
// tape for the parameter value and never cleared: every call writes what it reads.
func (b *BernsteinAR) batchScratch(t *ad.Tape, params ad.Var, S int) []float64 {
	d := b.d
	kd := (b.p.m + 1) * d
	s, _ := t.Memo((*bernARBatchScratch)(b), params, 3*S*kd+b.p.prepLen(d)+b.p.evalLen(d)+d+1)
	return s
}

// ForwardBatch records z_s = T(u_s) and log|det ∂z/∂u| at u_s for the S rows of U as one
// node (see Batch and the comment at the top of bernstein_batch.go): the MADE as dense matrix
// products over the S rows, one softplus pass over all S·d·M increments, then the d
// polynomials of every row as Forward evaluates them. Cost: S·(MADE + d·M) with the MADE's
// and the backward's work in matrix products over the batch; one node.
func (b *BernsteinAR) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	checkLen("BernsteinAR.ForwardBatch", "params", t.Size(params), b.NumParams())
	d, P := b.d, b.p.m+1
	S := batchRows(t, "BernsteinAR.ForwardBatch", U, d)
	kd := P * d
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.CustomUninit((*bernARBatch)(b), S*(d+1), S*(nr+nh), params, U) // every aux entry is written below
	pv, uv := t.Value(params), t.Value(U)
	mp := pv[:b.nm]
	aux, out := c.Aux(), c.Value()
	recs, hs := aux[:S*nr], aux[S*nr:]
	wm := b.masked(t, params)
	ws := b.batchScratch(t, params, S)
	C, SP, SG := ws[:S*kd], ws[S*kd:2*S*kd], ws[2*S*kd:3*S*kd]
	npre := b.p.prepLen(d)
	pre := ws[3*S*kd : 3*S*kd+npre]
	bs := ws[3*S*kd+npre : 3*S*kd+npre+b.p.evalLen(d)]
	zl := ws[3*S*kd+npre+b.p.evalLen(d):]

	// 1. The MADE over the batch.
	m := b.made
	act := m.Activation()
	in, nin := uv, d
	wo := 0
	for l, H := range m.Hidden() {
		_, bias := m.Layer(mp, l)
		Y := hs[:S*H]
		hs = hs[S*H:]
		kernel.Dense(Y, in, S, nin, wm[wo:wo+nin*H], H, bias, act == ad.ReLU)
		activateRows(act, Y)
		wo += nin * H
		in, nin = Y, H
	}
	_, bias := m.Layer(mp, m.Layers()-1)
	kernel.Dense(C, in, S, nin, wm[wo:wo+nin*kd], kd, bias, false)
	wo += nin * kd
	if m.HasDirect() {
		// C += U·Ṽ, as the layer above with no bias: Dense into SP, then added.
		kernel.Dense(SP, uv, S, d, wm[wo:wo+d*kd], kd, zeroBias(SG[:kd]), false)
		for i, v := range SP {
			C[i] += v
		}
	}

	// 2. The increments: softplus of every entry of C from the first row's k = 1 on (the
	// k = 0 entries of the later rows are computed and ignored).
	kernel.Softplus(SP[d:], SG[d:], C[d:])

	// 3. The polynomials, draw by draw. The affine values depend on the parameters only.
	L := bernRows{coef: C, coefStride: P, aff: b.affine(pv), affStride: 2}
	a, ok := t.Memo((*bernARNode)(b), params, 3*d)
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	copy(pre[b.p.affOff(d):], a)
	for s := range S {
		b.p.fillGroups(pre, d, C[s*kd:(s+1)*kd], SP[s*kd:(s+1)*kd], SG[s*kd:(s+1)*kd])
		b.p.evalAll(pre, bs, d, L, uv[s*d:(s+1)*d], zl, recs[s*nr:(s+1)*nr])
		copy(out[s*d:(s+1)*d], zl[:d])
		out[S*d+s] = zl[d]
	}
	v := c.Var()
	return t.AsMatrix(t.Slice(v, 0, S*d), S, d), t.Slice(v, S*d, S*(d+1))
}

// zeroBias clears z and returns it.
func zeroBias(z []float64) []float64 {
	clear(z)
	return z
}

// fillGroups writes the prepared coefficients of one draw into the group blocks of pre (the
// layout prepCoefs writes, see prepAll) from the raw coefficients r, their softplus values sp
// and sigmoids sg, all in the MADE's parameter-major layout (entry k·d + j for coefficient k
// of coordinate j): lane l of group g at k is entry k·d + 4g + l, four adjacent entries.
// Padding lanes get zeros, as prepCoefs gives them.
func (p *bernPoly) fillGroups(pre []float64, d int, r, sp, sg []float64) {
	P := p.m + 1
	for g := range groups(d) {
		blk := pre[8*P*g : 8*P*(g+1)]
		de, si := blk[:4*P], blk[4*P:]
		j0 := 4 * g
		if j0+4 <= d {
			copy(de[:4], r[j0:j0+4])
			clear(si[:4])
			for k := 1; k < P; k++ {
				o := k*d + j0
				copy(de[4*k:4*k+4], sp[o:o+4])
				copy(si[4*k:4*k+4], sg[o:o+4])
			}
			continue
		}
		nl := d - j0
		clear(blk)
		copy(de[:nl], r[j0:d])
		for k := 1; k < P; k++ {
			o := k*d + j0
			copy(de[4*k:4*k+nl], sp[o:o+nl])
			copy(si[4*k:4*k+nl], sg[o:o+nl])
		}
	}
}

// activateRows applies the hidden activation in place, as ad.Dense (and nn.MADE) do.
func activateRows(act ad.Activation, y []float64) {
	switch act {
	case ad.ReLU: // kernel.Dense applied it
	case ad.Tanh:
		for i, z := range y {
			y[i] = math.Tanh(z)
		}
	case ad.Sigmoid:
		for i, z := range y {
			y[i] = mathx.Logistic(z)
		}
	}
}

// activateRowsBack multiplies the adjoint g by the activation's derivative at output y.
func activateRowsBack(act ad.Activation, g, y []float64) {
	switch act {
	case ad.ReLU:
		kernel.ReLUBack(g, g, y)
	case ad.Tanh:
		for i, yi := range y {
			g[i] *= 1 - yi*yi
		}
	case ad.Sigmoid:
		for i, yi := range y {
			g[i] *= yi * (1 - yi)
		}
	}
}

// Backward implements ad.Backwarder.
func (n *bernARBatch) Backward(c ad.Custom) {
	b := (*BernsteinAR)(n)
	t := c.Tape()
	params, U := c.Arg(0), c.Arg(1)
	gp, gu := t.Grad(params), t.Grad(U)
	d, P := b.d, b.p.m+1
	kd := P * d
	nr := b.p.recLen(d)
	uv := t.Value(U)
	S := len(uv) / d
	g := c.Grad()
	Zb, lb := g[:S*d], g[S*d:]
	aux := c.Aux()
	recs, hs := aux[:S*nr], aux[S*nr:]
	var gm, ga []float64
	if gp != nil {
		gm = gp[:b.nm]
		if b.fixed == nil {
			ga = gp[b.nm:]
		}
	}
	// The coefficient adjoints of all draws (C's layout), the affine and input adjoints.
	G := b.batchScratch(t, params, S)[:S*kd]
	for s := range S {
		rec := recs[s*nr : (s+1)*nr]
		var gus []float64
		if gu != nil {
			gus = gu[s*d : (s+1)*d]
		}
		b.p.coefAdjoint(rec, d, Zb[s*d:(s+1)*d], lb[s], G[s*kd:(s+1)*kd])
		b.p.backwardAll(rec, d, Zb[s*d:(s+1)*d], lb[s], nil, 0, 0, false, ga, 0, 2, gus)
	}
	if gm == nil && gu == nil {
		return
	}
	b.madeBackBatch(t, params, S, uv, hs, G, gm, gu)
}

// madeBackBatch is the MADE's pullback over the batch: for the adjoint G (S×(M+1)d) of its
// output it adds ∂/∂params into gm (nil to skip) and ∂/∂U into gu (nil to skip), from the
// inputs uv (S×d) and the hidden activations hs (layer by layer, S×n_l each). Per layer
// (output layer first): W̄ += (Xᵀ·Ḡ)⊙mask, b̄ += 1ᵀ·Ḡ, X̄ = Ḡ·W̃ᵀ, then the activation's
// derivative into X̄ when X is a hidden layer.
func (b *BernsteinAR) madeBackBatch(t *ad.Tape, params ad.Var, S int, uv, hs, G, gm, gu []float64) {
	m := b.made
	d := b.d
	kd := m.K() * d
	wm := b.masked(t, params)
	act := m.Activation()
	hid := m.Hidden()
	L := len(hid)
	// Scratch: the unmasked weight adjoint of the largest layer, two hidden adjoints.
	maxW, maxH, in := 0, 0, d
	for _, H := range hid {
		maxW, maxH, in = max(maxW, in*H), max(maxH, H), H
	}
	maxW = max(maxW, in*kd)
	if m.HasDirect() {
		maxW = max(maxW, d*kd)
	}
	ws := b.backScratch(t, params, maxW+2*S*maxH)
	tmp := ws[:maxW]
	ga, gb := ws[maxW:maxW+S*maxH], ws[maxW+S*maxH:]
	// Layer l (L: the output layer) has nx inputs X (U, or hidden layer l−1) and nout outputs
	// with adjoint g; its masked weights end at wm[wEnd], X ends at hs[hEnd].
	wEnd, hEnd := len(wm), len(hs)
	if m.HasDirect() {
		wEnd -= d * kd
	}
	g, nout := G, kd
	for l := L; l >= 0; l-- {
		X, nx := uv, d
		if l > 0 {
			nx = hid[l-1]
			X = hs[hEnd-S*nx : hEnd]
			hEnd -= S * nx
		}
		W := wm[wEnd-nx*nout : wEnd]
		wEnd -= nx * nout
		if gm != nil {
			gW, gbias := m.Layer(gm, l)
			w := tmp[:nx*nout]
			clear(w)
			kernel.DenseBackW(w, gbias, X, S, nx, g, nout)
			mk := m.Mask(l)
			for i, v := range w {
				gW[i] += v * mk[i]
			}
			if l == L && m.HasDirect() {
				w := tmp[:d*kd]
				clear(w)
				kernel.DenseBackW(w, nil, uv, S, d, g, kd)
				b.directMask(w, m.Direct(gm), 0)
			}
		}
		if l == L && gu != nil && m.HasDirect() {
			kernel.DenseBackX(gu, S, d, g, kd, wm[len(wm)-d*kd:])
		}
		if l == 0 {
			if gu != nil {
				kernel.DenseBackX(gu, S, d, g, nout, W)
			}
			return
		}
		// X̄ = Ḡ·W̃ᵀ, then through the activation of hidden layer l−1.
		gx := ga[:S*nx]
		clear(gx)
		kernel.DenseBackX(gx, S, nx, g, nout, W)
		activateRowsBack(act, gx, X)
		g, nout = gx, nx
		ga, gb = gb, ga
	}
}

// bernARBackScratch keys the memo of the batch node's backward scratch.
type bernARBackScratch BernsteinAR

// backScratch returns n float64s of working memory for madeBackBatch, kept by the tape for the
// parameter value (ad.Tape.Memo) and never cleared.
func (b *BernsteinAR) backScratch(t *ad.Tape, params ad.Var, n int) []float64 {
	s, _ := t.Memo((*bernARBackScratch)(b), params, n)
	return s
}

// coefAdjoint writes the coefficient adjoints of one draw into G in the MADE's parameter-major
// layout, G[k·d + j] = z̄_j·∂z_j/∂r_kj + l̄·∂ld_j/∂r_kj, from the record of evalAll (the
// interleaved ∂z/∂r and ∂ld/∂r of each group of four coordinates, which are adjacent in G).
func (p *bernPoly) coefAdjoint(rec []float64, d int, zbar []float64, lbar float64, G []float64) {
	P := p.m + 1
	for g := range groups(d) {
		blk := rec[8*P*g : 8*P*(g+1)]
		dz, dl := blk[:4*P], blk[4*P:]
		j0 := 4 * g
		if j0+4 <= d {
			z0, z1, z2, z3 := zbar[j0], zbar[j0+1], zbar[j0+2], zbar[j0+3]
			for k := range P {
				x, y := dz[4*k:4*k+4], dl[4*k:4*k+4]
				o := G[k*d+j0 : k*d+j0+4]
				o[0] = z0*x[0] + lbar*y[0]
				o[1] = z1*x[1] + lbar*y[1]
				o[2] = z2*x[2] + lbar*y[2]
				o[3] = z3*x[3] + lbar*y[3]
			}
			continue
		}
		for l := range d - j0 {
			zb := zbar[j0+l]
			for k := range P {
				G[k*d+j0+l] = zb*dz[4*k+l] + lbar*dl[4*k+l]
			}
		}
	}
}
