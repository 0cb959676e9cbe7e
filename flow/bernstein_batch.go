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
//  1. the MADE as matrix products over the S×d batch, from its masked weights W⊙mask formed
//     once per parameter value (ad.Tape.Memo): hidden layer l is
//     H_l = act(H_{l−1}·W̃_l + 1·b_lᵀ) (S×n_l), and the output C = H_L·W̃_out + 1·bᵀ (+ U·Ṽ
//     with direct connections) is formed with the output layer's columns permuted into the
//     layout evalAll reads: per group of four coordinates, the M+1 coefficients with the four
//     coordinates interleaved (column g·4(M+1) + 4k + l is coefficient k of coordinate
//     4g + l; padding lanes of the last group have zero weights);
//  2. per draw and group, one kernel.Softplus pass over the M·4 raw increments straight into
//     the prepared-coefficient block (no copy, no gather);
//  3. per draw, evalAll: the polynomials, log-derivatives and the partials the backward
//     needs, four coordinates per kernel.BernsteinElev4 call, exactly as Forward.
//
// The backward pass is hand-written and batched the same way: the coefficient adjoints of
// all draws straight into C's layout (C̄[s, g·4(M+1) + 4k + l] = z̄·∂z/∂r + l̄·∂ld/∂r, the
// softplus derivative already in the record, contiguous in both), then each layer's pullback
// as matrix products over the batch (W̄ += (Xᵀ·Ḡ)⊙mask, b̄ += 1ᵀ·Ḡ, X̄ = Ḡ·W̃ᵀ, the output
// layer's un-permuted on the way) and the activation's derivative. No per-scalar tape node is
// recorded and nothing is allocated in steady state. Every draw's values equal those of
// Forward up to the rounding of the reordered sums of the matrix products; the node runs on
// the calling goroutine and depends on S and its inputs only, so results are the same for any
// number of workers.
//
// Cost per step: the MADE's multiply-adds S·Σ_l n_{l−1}·n_l forward and twice that backward
// (masked entries and padding lanes included: for the default degrees about twice the
// entries the outputs see, in long contiguous runs, kernel.Axpy4 and kernel.Dot), S·d·M
// softplus evaluations and S·d polynomials of degree M (O(M) each).

// groupCols returns the column map of the batch node's output layout for d coordinates with
// P coefficients: entry g·4P + 4k + l is the MADE's output column k·d + 4g + l (parameter-major
// layout), or −1 when 4g + l ≥ d (a padding lane).
func groupCols(d, P int) []int {
	G := groups(d)
	cols := make([]int, 4*P*G)
	for g := range G {
		for k := range P {
			for l := range 4 {
				c := -1
				if j := 4*g + l; j < d {
					c = k*d + j
				}
				cols[g*4*P+4*k+l] = c
			}
		}
	}
	return cols
}

// bernARBatch is the Backwarder of BernsteinAR's batch node (arguments: params, U). Its aux
// holds the S records of evalAll (recLen(d) each), then the hidden activations of the S
// draws layer by layer (layer l an S×n_l block).
type bernARBatch BernsteinAR

// Memo keys of the batch node: the masked weights, the forward's and the backward's scratch.
type (
	bernARMasked       BernsteinAR
	bernARBatchScratch BernsteinAR
	bernARBackScratch  BernsteinAR
)

// outLen returns the width of the batch node's MADE output (len(b.cols)).
func (b *BernsteinAR) outLen() int { return len(b.cols) }

// maskedLen returns the length of the masked weights (masked).
func (b *BernsteinAR) maskedLen() int {
	n, in := 0, b.d
	for _, h := range b.made.Hidden() {
		n, in = n+in*h, h
	}
	w := b.outLen()
	n += (in + 1) * w
	if b.made.HasDirect() {
		n += b.d * w
	}
	return n
}

// masked returns, for the value of params, W⊙mask of every hidden layer of the MADE one after
// the other (layer l n_{l−1}×n_l row-major, as the parameters), then the output layer's
// masked weights and its bias with the columns in the batch layout (b.cols; zero for padding
// lanes), then the masked direct weights in the same layout: formed on the first call for
// that value (once per gradient step; ad.Tape.Memo).
func (b *BernsteinAR) masked(t *ad.Tape, params ad.Var) []float64 {
	w, ok := t.Memo((*bernARMasked)(b), params, b.maskedLen())
	if !ok {
		b.formMasked(t.Value(params)[:b.nm], w)
	}
	return w
}

// formMasked writes the masked weights of the MADE parameters mp into w (maskedLen).
func (b *BernsteinAR) formMasked(mp, w []float64) {
	m := b.made
	L := m.Layers() - 1
	o := 0
	for l := range L {
		W, _ := m.Layer(mp, l)
		mk := m.Mask(l)
		dst := w[o : o+len(W)]
		for i, v := range W {
			dst[i] = v * mk[i]
		}
		o += len(W)
	}
	W, bias := m.Layer(mp, L)
	nw, kd := b.outLen(), len(bias)
	mk := m.Mask(L)
	for r := range len(W) / kd {
		b.p.permute(w[o:o+nw], W[r*kd:(r+1)*kd], mk[r*kd:(r+1)*kd], b.d)
		o += nw
	}
	b.p.permute(w[o:o+nw], bias, nil, b.d)
	o += nw
	if V := m.Direct(mp); V != nil {
		deg := m.Degrees()
		for i := range b.d {
			dst := w[o : o+nw]
			for c, src := range b.cols {
				dst[c] = 0
				if src >= 0 && deg[src%b.d] > deg[i] {
					dst[c] = V[i*kd+src]
				}
			}
			o += nw
		}
	}
}

// permute writes one row of the output layer (src, in the MADE's parameter-major layout,
// times the mask mk; mk nil: 1) into the batch layout dst (zeros for padding lanes): the four
// coordinates of a group are adjacent in both, so each (group, coefficient) moves four
// contiguous values.
func (p *bernPoly) permute(dst, src, mk []float64, d int) {
	P := p.m + 1
	for g := range groups(d) {
		j0 := 4 * g
		o := dst[4*P*g : 4*P*(g+1)]
		if j0+4 <= d {
			for k := range P {
				s, q := (*[4]float64)(src[k*d+j0:]), (*[4]float64)(o[4*k:])
				if mk == nil {
					*q = *s
					continue
				}
				m := (*[4]float64)(mk[k*d+j0:])
				*q = [4]float64{s[0] * m[0], s[1] * m[1], s[2] * m[2], s[3] * m[3]}
			}
			continue
		}
		clear(o)
		for k := range P {
			for l := range d - j0 {
				v := src[k*d+j0+l]
				if mk != nil {
					v *= mk[k*d+j0+l]
				}
				o[4*k+l] = v
			}
		}
	}
}

// batchScratch returns the forward's working memory for S draws: the MADE's output C
// (S·outLen), the prepared coefficients (prepLen), evalAll's scratch (evalLen) and one draw's
// d+1 outputs. The backward pass reuses C's part for the coefficient adjoints. Nothing in it
// outlives one call; kept by the tape for the parameter value and never cleared: every call
// writes what it reads. The backward pass keeps the coefficient adjoints in both layouts:
// the batch layout in C's place, the MADE's after it.
func (b *BernsteinAR) batchScratch(t *ad.Tape, params ad.Var, S int) []float64 {
	d := b.d
	s, _ := t.Memo((*bernARBatchScratch)(b), params, S*b.outLen()+max(b.p.prepLen(d)+b.p.evalLen(d)+d+1, S*(b.p.m+1)*d))
	return s
}

// ForwardBatch records z_s = T(u_s) and log|det ∂z/∂u| at u_s for the S rows of U as one
// node (see Batch and the comment at the top of bernstein_batch.go): the MADE as matrix
// products over the S rows, the softplus increments of each draw in one pass per group of
// four coordinates, then the d polynomials of every row as Forward evaluates them. Cost:
// S·(MADE + d·M) with the MADE's and the backward's work in matrix products over the
// batch; one node.
func (b *BernsteinAR) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	checkLen("BernsteinAR.ForwardBatch", "params", t.Size(params), b.NumParams())
	d := b.d
	S := batchRows(t, "BernsteinAR.ForwardBatch", U, d)
	nw := b.outLen()
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.CustomUninit((*bernARBatch)(b), S*(d+1), S*(nr+nh), params, U) // every aux entry is written below
	pv, uv := t.Value(params), t.Value(U)
	mp := pv[:b.nm]
	aux, out := c.Aux(), c.Value()
	recs, hs := aux[:S*nr], aux[S*nr:]
	wm := b.masked(t, params)
	ws := b.batchScratch(t, params, S)
	C := ws[:S*nw]
	npre, nev := b.p.prepLen(d), b.p.evalLen(d)
	pre := ws[S*nw : S*nw+npre]
	bs := ws[S*nw+npre : S*nw+npre+nev]
	zl := ws[S*nw+npre+nev:]

	b.madeForwardBatch(S, mp, wm, uv, hs, C)
	L := bernRows{aff: b.affine(pv), affStride: 2}
	a, ok := t.Memo((*bernARNode)(b), params, 3*d) // the affine values: parameters only
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	copy(pre[b.p.affOff(d):], a)
	b.polyForwardBatch(S, C, pre, bs, zl, L, uv, out, recs)
	v := c.Var()
	return t.AsMatrix(t.Slice(v, 0, S*d), S, d), t.Slice(v, S*d, S*(d+1))
}

// madeForwardBatch writes the MADE's hidden activations of the S rows of uv into hs (layer
// by layer, S×n_l each) and its output into C (S×outLen, batch layout), from the parameters
// mp and their masked weights wm.
func (b *BernsteinAR) madeForwardBatch(S int, mp, wm, uv, hs, C []float64) {
	m := b.made
	d, nw := b.d, b.outLen()
	act := m.Activation()
	in, nin := uv, d
	wo := 0
	for l, H := range m.Hidden() {
		_, bias := m.Layer(mp, l)
		Y := hs[:S*H]
		hs = hs[S*H:]
		for s := range S {
			copy(Y[s*H:(s+1)*H], bias)
		}
		mulAdd(Y, in, wm[wo:wo+nin*H], S, nin, H)
		activateRows(act, Y)
		wo += nin * H
		in, nin = Y, H
	}
	Wout, bias := wm[wo:wo+nin*nw], wm[wo+nin*nw:wo+(nin+1)*nw]
	for s := range S {
		copy(C[s*nw:(s+1)*nw], bias)
	}
	mulAdd(C, in, Wout, S, nin, nw)
	if m.HasDirect() {
		o := wo + (nin+1)*nw
		mulAdd(C, uv, wm[o:o+d*nw], S, d, nw)
	}
}

// polyForwardBatch evaluates the polynomials of the S draws from the MADE output C (batch
// layout): per draw and group, the softplus increments straight into the prepared
// coefficients pre (whose affine part is set), then evalAll with scratch bs and zl (d+1),
// the values into out ([Z | logdet]) and the records into recs.
func (b *BernsteinAR) polyForwardBatch(S int, C, pre, bs, zl []float64, L bernRows, uv, out, recs []float64) {
	d, P := b.d, b.p.m+1
	nw, nr := b.outLen(), b.p.recLen(d)
	for s := range S {
		cs := C[s*nw : (s+1)*nw]
		for g := range groups(d) {
			blk, r := pre[8*P*g:8*P*(g+1)], cs[4*P*g:4*P*(g+1)]
			kernel.Softplus(blk[4:4*P], blk[4*P+4:], r[4:])
			copy(blk[:4], r[:4]) // ϑ_0 = r_0
			clear(blk[4*P : 4*P+4])
		}
		b.p.evalAll(pre, bs, d, L, uv[s*d:(s+1)*d], zl, recs[s*nr:(s+1)*nr])
		copy(out[s*d:(s+1)*d], zl[:d])
		out[S*d+s] = zl[d]
	}
}

// activateRows applies the hidden activation in place, as ad.Dense (and nn.MADE) do.
func activateRows(act ad.Activation, y []float64) {
	switch act {
	case ad.ReLU:
		for i, z := range y {
			y[i] = max(z, 0)
		}
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
		for i, yi := range y {
			if yi <= 0 {
				g[i] = 0
			}
		}
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
	d := b.d
	nw := b.outLen()
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
	ws := b.batchScratch(t, params, S)
	G, Go := ws[:S*nw], ws[S*nw:S*nw+S*(b.p.m+1)*d]
	for s := range S {
		rec := recs[s*nr : (s+1)*nr]
		var gus []float64
		if gu != nil {
			gus = gu[s*d : (s+1)*d]
		}
		b.p.coefAdjoint(rec, d, Zb[s*d:(s+1)*d], lb[s], G[s*nw:(s+1)*nw], Go[s*len(Go)/S:(s+1)*len(Go)/S])
		b.p.backwardAll(rec, d, Zb[s*d:(s+1)*d], lb[s], nil, 0, 0, false, ga, 0, 2, gus)
	}
	if gm == nil && gu == nil {
		return
	}
	b.madeBackBatch(S, b.masked(t, params), b.backScratch(t, params, S), uv, hs, G, Go, gm, gu)
}

// coefAdjoint writes the coefficient adjoints of one draw,
// z̄_j·∂z_j/∂r_kj + l̄·∂ld_j/∂r_kj for coordinate j = 4g + l, from the record of evalAll (the
// interleaved ∂z/∂r and ∂ld/∂r of each group) into G in the batch layout (entry
// g·4P + 4k + l; 0 for padding lanes) and into Go in the MADE's parameter-major layout (entry
// k·d + j): four adjacent values per (group, coefficient) in all three.
func (p *bernPoly) coefAdjoint(rec []float64, d int, zbar []float64, lbar float64, G, Go []float64) {
	P := p.m + 1
	for g := range groups(d) {
		blk := rec[8*P*g : 8*P*(g+1)]
		dz, dl := blk[:4*P], blk[4*P:]
		o := G[4*P*g : 4*P*(g+1)]
		j0 := 4 * g
		if j0+4 <= d {
			z0, z1, z2, z3 := zbar[j0], zbar[j0+1], zbar[j0+2], zbar[j0+3]
			for k := range P {
				x, y := (*[4]float64)(dz[4*k:]), (*[4]float64)(dl[4*k:])
				v := [4]float64{z0*x[0] + lbar*y[0], z1*x[1] + lbar*y[1], z2*x[2] + lbar*y[2], z3*x[3] + lbar*y[3]}
				*(*[4]float64)(o[4*k:]) = v
				*(*[4]float64)(Go[k*d+j0:]) = v
			}
			continue
		}
		nl := d - j0
		for k := range P {
			for l := range 4 {
				v := 0.0
				if l < nl {
					v = zbar[j0+l]*dz[4*k+l] + lbar*dl[4*k+l]
					Go[k*d+j0+l] = v
				}
				o[4*k+l] = v
			}
		}
	}
}

// madeBackBatch is the MADE's pullback over the batch: for the adjoint of its output, G
// (S×outLen, batch layout) and the same in the parameter-major layout Go (S×(M+1)d), it adds ∂/∂params into gm (nil to skip) and ∂/∂U into gu (nil to
// skip), from the inputs uv (S×d) and the hidden activations hs (layer by layer, S×n_l each).
// Per layer (output layer first): W̄ += (Xᵀ·Ḡ)⊙mask, b̄ += 1ᵀ·Ḡ (un-permuted into the
// parameter layout for the output layer), X̄ = Ḡ·W̃ᵀ, then the activation's derivative when X
// is a hidden layer.
func (b *BernsteinAR) madeBackBatch(S int, wm, ws, uv, hs, G, Go, gm, gu []float64) {
	m := b.made
	d, nw := b.d, b.outLen()
	act := m.Activation()
	hid := m.Hidden()
	L := len(hid)
	maxW, maxH := b.backLens()
	tmp := ws[:maxW]
	ga, gb := ws[maxW:maxW+S*maxH], ws[maxW+S*maxH:]

	// Output layer: X is the last hidden layer (or U), nx wide.
	nx, X := d, uv
	if L > 0 {
		nx = hid[L-1]
		X = hs[len(hs)-S*nx:]
	}
	wo := len(wm) - (nx+1)*nw
	if m.HasDirect() {
		wo -= d * nw
	}
	if gm != nil {
		gW, gbias := m.Layer(gm, L)
		kd := len(gbias)
		w := tmp[:nx*kd]
		clear(w)
		mulTAdd(w, X, Go, S, nx, kd)
		colSumAdd(gbias, Go, S, kd)
		for i, v := range m.Mask(L) {
			gW[i] += w[i] * v
		}
		if gV := m.Direct(gm); gV != nil {
			w := tmp[:d*kd]
			clear(w)
			mulTAdd(w, uv, Go, S, d, kd)
			deg := m.Degrees()
			for i := range d {
				row, src := gV[i*kd:(i+1)*kd], w[i*kd:(i+1)*kd]
				for c := range row {
					if deg[c%d] > deg[i] {
						row[c] += src[c]
					}
				}
			}
		}
	}
	if gu != nil && m.HasDirect() {
		o := wo + (nx+1)*nw
		mulNTAdd(gu, G, wm[o:o+d*nw], S, d, nw)
	}
	Wout := wm[wo : wo+nx*nw]
	if L == 0 {
		if gu != nil {
			mulNTAdd(gu, G, Wout, S, d, nw)
		}
		return
	}
	gx := ga[:S*nx]
	clear(gx)
	mulNTAdd(gx, G, Wout, S, nx, nw)
	activateRowsBack(act, gx, X)

	// Hidden layers, last first: layer l reads X (U or hidden layer l−1, nx wide) and has the
	// adjoint g of its pre-activation output (nout wide).
	g, nout := gx, nx
	hEnd := len(hs) - S*nout
	wEnd := wo
	for l := L - 1; l >= 0; l-- {
		nx, X = d, uv
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
			mulTAdd(w, X, g, S, nx, nout)
			colSumAdd(gbias, g, S, nout)
			mk := m.Mask(l)
			for i, v := range w {
				gW[i] += v * mk[i]
			}
		}
		if l == 0 {
			if gu != nil {
				mulNTAdd(gu, g, W, S, d, nout)
			}
			return
		}
		ga, gb = gb, ga
		gx := ga[:S*nx]
		clear(gx)
		mulNTAdd(gx, g, W, S, nx, nout)
		activateRowsBack(act, gx, X)
		g, nout = gx, nx
	}
}

// backLens returns the sizes of madeBackBatch's scratch: the largest weight adjoint (before
// masking; with the bias row for the output layer) and the widest hidden layer.
func (b *BernsteinAR) backLens() (maxW, maxH int) {
	m := b.made
	d, nw := b.d, b.outLen()
	in := d
	for _, H := range m.Hidden() {
		maxW, maxH, in = max(maxW, in*H), max(maxH, H), H
	}
	maxW = max(maxW, (in+1)*nw)
	if m.HasDirect() {
		maxW = max(maxW, d*nw)
	}
	return maxW, maxH
}

// backScratch returns the working memory of madeBackBatch for S draws (the weight adjoint
// before masking and two hidden-layer adjoints), kept by the tape for the parameter value
// (ad.Tape.Memo) and never cleared.
func (b *BernsteinAR) backScratch(t *ad.Tape, params ad.Var, S int) []float64 {
	maxW, maxH := b.backLens()
	s, _ := t.Memo((*bernARBackScratch)(b), params, maxW+2*S*maxH)
	return s
}

// The matrix products of the batch node, on row-major contiguous matrices with a small inner
// dimension (the MADE's widths) and long rows (its outputs), as runs of kernel.Axpy4 and
// kernel.Dot (AVX2+FMA assembly in the default amd64 build): four rank-1 updates per pass
// over an output row.

// mulAdd sets C += A·B for A n×k, B k×m, C n×m. Cost n·k·m multiply-adds.
func mulAdd(C, A, B []float64, n, k, m int) {
	for i := range n {
		a, c := A[i*k:(i+1)*k], C[i*m:(i+1)*m]
		p := 0
		for ; p+4 <= k; p += 4 {
			kernel.Axpy4(a[p], a[p+1], a[p+2], a[p+3], B[p*m:(p+4)*m], c)
		}
		for ; p+2 <= k; p += 2 {
			kernel.Axpy2(a[p], a[p+1], B[p*m:(p+2)*m], c)
		}
		if p < k {
			kernel.Axpy(a[p], B[p*m:(p+1)*m], c)
		}
	}
}

// mulTAdd sets W += Xᵀ·G for X n×k, G n×m, W k×m (a layer's weight adjoint summed over the
// n rows of a batch). Cost n·k·m multiply-adds.
func mulTAdd(W, X, G []float64, n, k, m int) {
	for r := range k {
		w := W[r*m : (r+1)*m]
		s := 0
		for ; s+4 <= n; s += 4 {
			kernel.Axpy4(X[s*k+r], X[(s+1)*k+r], X[(s+2)*k+r], X[(s+3)*k+r], G[s*m:(s+4)*m], w)
		}
		for ; s+2 <= n; s += 2 {
			kernel.Axpy2(X[s*k+r], X[(s+1)*k+r], G[s*m:(s+2)*m], w)
		}
		if s < n {
			kernel.Axpy(X[s*k+r], G[s*m:(s+1)*m], w)
		}
	}
}

// colSumAdd sets b += 1ᵀ·G for G n×m (a layer's bias adjoint).
func colSumAdd(b, G []float64, n, m int) {
	s := 0
	for ; s+4 <= n; s += 4 {
		kernel.Axpy4(1, 1, 1, 1, G[s*m:(s+4)*m], b)
	}
	for ; s+2 <= n; s += 2 {
		kernel.Axpy2(1, 1, G[s*m:(s+2)*m], b)
	}
	if s < n {
		kernel.Axpy(1, G[s*m:(s+1)*m], b)
	}
}

// mulNTAdd sets X += G·Wᵀ for G n×m, W k×m, X n×k (a layer's input adjoint). Cost n·k·m
// multiply-adds, one dot product of length m per entry of X.
func mulNTAdd(X, G, W []float64, n, k, m int) {
	for s := range n {
		g, x := G[s*m:(s+1)*m], X[s*k:(s+1)*k]
		for r := range k {
			x[r] += kernel.Dot(g, W[r*m:(r+1)*m])
		}
	}
}
