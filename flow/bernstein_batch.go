package flow

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/nn"
)

// The batched forward pass of BernsteinAR (Batch): one ad.Custom node for the S draws of a
// gradient step, value [Z (S×d) | logdet (S)], in a few passes over all S draws at once:
//
//  1. the MADE over the S×d batch, from its masked weights formed once per parameter value
//     (ad.Tape.Memo): the hidden layers as matrix products H_l = act(H_{l−1}·(W_l⊙mask_l) +
//     1·b_lᵀ) (S×n_l), then the output layer packed by group of four coordinates: for group
//     g its output run holds the M+1 coefficients with the group's nl coordinates
//     interleaved (entry nl·k + l is coefficient k of coordinate 4g + l: for a full group the
//     layout kernel.BernsteinElev4 reads; a last group of d mod 4 coordinates is compact),
//     computed from the rows of the last hidden layer (and the inputs of the direct
//     connections) that some coordinate of the group sees — the masked rows of the whole
//     group are skipped — as one product C_g = A_g·B_g per group (kernel.GemmNN: A_g the
//     S draws' inputs of those rows with a 1 for the bias, B_g the group's packed rows);
//  2. per draw and group, one kernel.Softplus pass over the nl·M raw increments, for a full
//     group straight into the prepared-coefficient block (no copy, no gather);
//  3. per draw, evalAllBatch: the polynomials, log-derivatives and the partials the backward
//     needs, as Forward's evalAll gives them up to rounding (vector kernels for the bases, the
//     starts and the logarithms; evalAll keeps the arithmetic that saved fits reproduce).
//
// The backward pass is hand-written and batched the same way: the coefficient adjoints of
// all draws in the output layout (z̄·∂z/∂r + l̄·∂ld/∂r, the softplus derivative already in
// the record; contiguous per group and draw), then the output layer's pullback per group
// (weight adjoints A_gᵀ·Ḡ_g summed over the draws in one product before they are scattered
// into the parameter layout with the mask, kernel.Scatter4Add; the adjoints of its inputs
// Ḡ_g·B_gᵀ in one kernel.GemmNT), the hidden layers' as matrix products over the batch
// (W̄ += (Xᵀ·Ḡ)⊙mask, b̄ += 1ᵀ·Ḡ, X̄ = Ḡ·W̃ᵀ) and the activation's derivative. No per-scalar tape node is recorded and nothing is allocated in
// steady state. Every draw's values equal those of Forward up to the rounding of the
// reordered sums; the node runs on the calling goroutine and depends on S and its inputs
// only, so results are the same for any number of workers.
//
// Cost per step: the hidden layers' S·Σ n_{l−1}·n_l multiply-adds, the output layer's
// S·(M+1)·Σ_g nl_g·(rows group g sees) forward and twice that backward, S·d·M softplus
// evaluations and S·d polynomials of degree M (O(M) each).

// bernGroup is one group of four coordinates of the batch node's packed output layer: the
// rows of the MADE's output layer (units of its last hidden layer, or inputs without hidden
// layers) that some coordinate of the group sees, the inputs whose direct connections reach
// one of them, the lane masks (1 where coordinate 4g + l sees the row, 0 elsewhere and for
// padding lanes) and the offset of the group's block in the packed layer (bias, then the
// rows, then the direct rows, 4(M+1) values each).
type bernGroup struct {
	rows, drows []int
	lanes       [][4]float64 // per row, then per direct row
	off         int
	// nl is the number of real lanes (4 but for a last group of d mod 4), q = nl·(M+1) the
	// length of the group's runs (entry nl·k + l for coefficient k of lane l: the interleaved
	// layout, compact for a last group that is not full) and col the offset of the group's
	// runs in one draw's output (Σ of the earlier groups' q).
	nl, q, col int
}

// ka returns the inner size of the group's forward product: the bias, the rows and the
// direct rows.
func (gr *bernGroup) ka() int { return 1 + len(gr.rows) + len(gr.drows) }

// newBernGroups returns the groups of the batch node's output layer for the MADE m with P
// outputs per dimension. The output layer's mask does not depend on the output's parameter
// index (nn.MADE: output p·d + j has the degree of dimension j), so one lane mask per row
// serves all P coefficients.
func newBernGroups(m *nn.MADE, P int) []bernGroup {
	d, kd := m.Dim(), m.K()*m.Dim()
	mk := m.Mask(m.Layers() - 1)
	nin := len(mk) / kd
	deg := m.Degrees()
	gs := make([]bernGroup, groups(d))
	off, col := 0, 0
	for g := range gs {
		j0 := 4 * g
		nl := min(4, d-j0)
		gr := &gs[g]
		for r := range nin {
			var ln [4]float64
			for l := range nl {
				ln[l] = mk[r*kd+j0+l]
			}
			if ln != [4]float64{} {
				gr.rows = append(gr.rows, r)
				gr.lanes = append(gr.lanes, ln)
			}
		}
		if m.HasDirect() {
			for i := range d {
				var ln [4]float64
				for l := range nl {
					if deg[j0+l] > deg[i] {
						ln[l] = 1
					}
				}
				if ln != [4]float64{} {
					gr.drows = append(gr.drows, i)
					gr.lanes = append(gr.lanes, ln)
				}
			}
		}
		gr.nl, gr.q, gr.col = nl, nl*P, col
		col += gr.q
		gr.off = off
		off += gr.ka() * gr.q
	}
	return gs
}

// bernARBatch is the Backwarder of BernsteinAR's batch node (arguments: params, U). Its aux
// holds the S records of evalAllBatch (recLen(d) each), then the hidden activations of the S
// draws layer by layer (layer l an S×n_l block).
type bernARBatch BernsteinAR

// Memo keys of the batch node: the masked weights, the forward's and the backward's scratch.
type (
	bernARMasked       BernsteinAR
	bernARBatchScratch BernsteinAR
	bernARBackScratch  BernsteinAR
)

// hiddenMaskedLen returns the length of the masked weights of the hidden layers.
func (b *BernsteinAR) hiddenMaskedLen() int {
	n, in := 0, b.d
	for _, h := range b.made.Hidden() {
		n, in = n+in*h, h
	}
	return n
}

// maskedLen returns the length of the masked weights (masked): the hidden layers', then the
// packed output layer.
func (b *BernsteinAR) maskedLen() int {
	last := b.grp[len(b.grp)-1]
	return b.hiddenMaskedLen() + last.off + last.ka()*last.q
}

// masked returns, for the value of params, W⊙mask of every hidden layer of the MADE one after
// the other (layer l n_{l−1}×n_l row-major, as the parameters), then the packed output layer
// (bernGroup): formed on the first call for that value (once per gradient step;
// ad.Tape.Memo).
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
	V := m.Direct(mp)
	d, kd := b.d, len(bias)
	one := [4]float64{1, 1, 1, 1}
	for g, gr := range b.grp {
		blk, Q := w[o+gr.off:], gr.q
		b.p.gatherGroup(blk[:Q], bias, one, g, d)
		for i, r := range gr.rows {
			b.p.gatherGroup(blk[(1+i)*Q:(2+i)*Q], W[r*kd:(r+1)*kd], gr.lanes[i], g, d)
		}
		n := 1 + len(gr.rows)
		for i, r := range gr.drows {
			b.p.gatherGroup(blk[(n+i)*Q:(n+i+1)*Q], V[r*kd:(r+1)*kd], gr.lanes[len(gr.rows)+i], g, d)
		}
	}
}

// transpose sets dst (c×r) to the transpose of src (r×c), both row-major and contiguous.
func transpose(dst, src []float64, r, c int) {
	dst, src = dst[:r*c], src[:r*c]
	for i := range r {
		for j, v := range src[i*c : (i+1)*c] {
			dst[j*r+i] = v
		}
	}
}

// gatherGroup sets dst[nl·k + l] = src[k·d + 4g + l]·lane[l] for the coefficients k of group
// g and its nl = min(4, d − 4g) lanes: one row of the output layer in the MADE's
// parameter-major layout into the group's interleaved layout.
func (p *bernPoly) gatherGroup(dst, src []float64, lane [4]float64, g, d int) {
	P := p.m + 1
	j0 := 4 * g
	if j0+4 <= d {
		kernel.Gather4(dst[:4*P], src[j0:], d, lane[:])
		return
	}
	nl := d - j0
	if nl == 2 { // the last group of d ≡ 2 (mod 4), two lanes per entry without an inner loop
		l0, l1 := lane[0], lane[1]
		src = src[j0:]
		for k := range P {
			r, q := src[k*d:k*d+2], dst[2*k:2*k+2]
			q[0], q[1] = r[0]*l0, r[1]*l1
		}
		return
	}
	for k := range P {
		for l := range nl {
			dst[nl*k+l] = src[k*d+j0+l] * lane[l]
		}
	}
}

// scatterGroup is the adjoint of gatherGroup: dst[k·d + 4g + l] += src[nl·k + l]·lane[l].
func (p *bernPoly) scatterGroup(dst, src []float64, lane [4]float64, g, d int) {
	P := p.m + 1
	j0 := 4 * g
	if j0+4 <= d {
		kernel.Scatter4Add(dst[j0:], d, src[:4*P], lane[:])
		return
	}
	nl := d - j0
	if nl == 2 { // as gatherGroup
		l0, l1 := lane[0], lane[1]
		dst = dst[j0:]
		for k := range P {
			r, q := src[2*k:2*k+2], dst[k*d:k*d+2]
			q[0] += r[0] * l0
			q[1] += r[1] * l1
		}
		return
	}
	for k := range P {
		for l := range nl {
			dst[k*d+j0+l] += src[nl*k+l] * lane[l]
		}
	}
}

// batchScratch returns the forward's working memory for S draws: the MADE's output C
// (S·nl·(M+1) per group, group by group, draw by draw), the prepared coefficients (prepLen),
// evalAll's scratch (evalLen), one draw's d+1 outputs, 6M for prepDraw and S·maxKa for the
// output layer's inputs (madeForwardBatch). The backward
// pass reuses C's part for the coefficient adjoints. Nothing in it outlives one call; kept by
// the tape for the parameter value and never cleared: every call writes what it reads.
func (b *BernsteinAR) batchScratch(t *ad.Tape, params ad.Var, S int) []float64 {
	d := b.d
	s, _ := t.Memo((*bernARBatchScratch)(b), params, S*b.outLen()+b.p.prepLen(d)+b.p.evalLen(d)+d+1+6*b.p.m+S*b.maxKa())
	return s
}

// outLen returns the width of one draw's output of the packed output layer, Σ_g q = (M+1)d.
func (b *BernsteinAR) outLen() int { return (b.p.m + 1) * b.d }

// ForwardBatch records z_s = T(u_s) and log|det ∂z/∂u| at u_s for the S rows of U as one
// node (see Batch and the comment at the top of bernstein_batch.go): the MADE over the S
// rows at once, the softplus increments of each draw in one pass per group of four
// coordinates, then the d polynomials of every row as Forward evaluates them. Cost:
// S·(MADE + d·M) with the MADE's and the backward's work in long runs over the batch; one
// node.
func (b *BernsteinAR) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	checkLen("BernsteinAR.ForwardBatch", "params", t.Size(params), b.NumParams())
	d := b.d
	S := batchRows(t, "BernsteinAR.ForwardBatch", U, d)
	nw := b.outLen()
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.CustomUninit((*bernARBatch)(b), S*(d+1), S*(nr+nh), params, U) // every aux entry is written below
	pv, uv := t.Value(params), t.Value(U)
	aux, out := c.Aux(), c.Value()
	recs, hs := aux[:S*nr], aux[S*nr:]
	wm := b.masked(t, params)
	ws := b.batchScratch(t, params, S)
	C := ws[:S*nw]
	npre, nev := b.p.prepLen(d), b.p.evalLen(d)
	pre := ws[S*nw : S*nw+npre]
	bs := ws[S*nw+npre : S*nw+npre+nev]
	zl := ws[S*nw+npre+nev : S*nw+npre+nev+d+1+6*b.p.m]
	as := ws[S*nw+npre+nev+d+1+6*b.p.m:]

	b.madeForwardBatch(S, pv[:b.nm], wm, uv, hs, C, as)
	L := bernRows{aff: b.affine(pv), affStride: 2}
	a, ok := t.Memo((*bernARNode)(b), params, 3*d) // the affine values: parameters only
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	copy(pre[b.p.affOff(d):], a)
	b.polyForwardBatch(S, C, pre, bs, zl[:d+1], zl[d+1:], L, uv, out, recs)
	v := c.Var()
	return t.AsMatrix(t.Slice(v, 0, S*d), S, d), t.Slice(v, S*d, S*(d+1))
}

// madeForwardBatch writes the MADE's hidden activations of the S rows of uv into hs (layer
// by layer, S×n_l each) and its output into C (the packed layout, group by group, draw by
// draw), from the parameters mp and their masked weights wm; as is scratch of S·maxKa. Every
// layer is one product over the batch (kernel.GemmNN): a hidden layer's from its bias rows,
// a group's of the output layer as C_g = A_g·B_g with A_g (S × ka) the ones of the bias and
// the entries of the rows and direct rows the group sees, gathered per draw, and B_g the
// group's packed block.
func (b *BernsteinAR) madeForwardBatch(S int, mp, wm, uv, hs, C, as []float64) {
	m := b.made
	d := b.d
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
		kernel.GemmNN(true, S, nin, H, in, nin, wm[wo:wo+nin*H], H, Y, H)
		if act == ad.Tanh {
			// Vectorised (within 4 ulp of math.Tanh); Forward keeps nn.Activate's math.Tanh, so
			// that saved fits draw bit for bit as before.
			kernel.Tanh(Y, Y)
		} else {
			nn.Activate(act, Y)
		}
		wo += nin * H
		in, nin = Y, H
	}
	for _, gr := range b.grp {
		ka, Q := gr.ka(), gr.q
		A := as[:S*ka]
		gatherInputs(A, gr, S, in, nin, uv, d)
		kernel.GemmNN(false, S, ka, Q, A, ka, wm[wo+gr.off:wo+gr.off+ka*Q], Q, C[S*gr.col:S*(gr.col+Q)], Q)
	}
}

// gatherInputs writes, for each of the S draws, row s of a group's inputs into A (S × ka):
// 1 (the bias), the entries rows of x (S×nx), the entries drows of u (S×d).
func gatherInputs(A []float64, gr bernGroup, S int, x []float64, nx int, u []float64, d int) {
	ka := gr.ka()
	for s := range S {
		a := A[s*ka : (s+1)*ka]
		a[0] = 1
		xs := x[s*nx : (s+1)*nx]
		for i, r := range gr.rows {
			a[1+i] = xs[r]
		}
		us := u[s*d : (s+1)*d]
		for i, r := range gr.drows {
			a[1+len(gr.rows)+i] = us[r]
		}
	}
}

// maxKa returns the largest inner size of the groups' forward products (bernGroup.ka).
func (b *BernsteinAR) maxKa() int {
	n := 0
	for _, gr := range b.grp {
		n = max(n, gr.ka())
	}
	return n
}

// polyForwardBatch evaluates the polynomials of the S draws from the MADE output C (packed
// layout): per draw, prepDraw, then evalAllBatch with scratch bs and zl (d+1), the values into out
// ([Z | logdet]) and the records into recs; cs is prepDraw's scratch.
func (b *BernsteinAR) polyForwardBatch(S int, C, pre, bs, zl, cs []float64, L bernRows, uv, out, recs []float64) {
	d := b.d
	nr := b.p.recLen(d)
	for s := range S {
		b.prepDraw(S, s, C, pre, cs)
		b.p.evalAllBatch(pre, bs, d, L, uv[s*d:(s+1)*d], zl, recs[s*nr:(s+1)*nr])
		copy(out[s*d:(s+1)*d], zl[:d])
		out[S*d+s] = zl[d]
	}
}

// prepDraw writes the prepared coefficients of draw s of S (the group blocks of pre, as
// prepCoefs writes them) from the MADE output C: per group, one kernel.Softplus pass over the
// 4M raw increments straight into the block, ϑ_0 = r_0 copied; a last group that is not full
// through the scratch cs (6M), then into its block with zero padding lanes.
func (b *BernsteinAR) prepDraw(S, s int, C, pre, cs []float64) {
	M := b.p.m
	Q := 4 * (M + 1)
	for g, gr := range b.grp {
		blk, r := pre[2*Q*g:2*Q*(g+1)], C[S*gr.col+s*gr.q:][:gr.q]
		if nl := gr.nl; nl < 4 {
			// The last group's runs are compact (entry nl·k + l): its M·nl increments are
			// contiguous; one pass, then into the interleaved block with zero padding lanes.
			csp, csg := cs[:nl*M], cs[nl*M:2*nl*M]
			kernel.Softplus(csp, csg, r[nl:])
			clear(blk)
			kernel.Spread(blk[4:Q], csp, nl)
			kernel.Spread(blk[Q+4:], csg, nl)
			copy(blk[:nl], r[:nl]) // ϑ_0 = r_0
			continue
		}
		kernel.Softplus(blk[4:Q], blk[Q+4:], r[4:])
		copy(blk[:4], r[:4]) // ϑ_0 = r_0
		clear(blk[Q : Q+4])
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
	G := b.batchScratch(t, params, S)[:S*nw]
	for s := range S {
		rec := recs[s*nr : (s+1)*nr]
		var gus []float64
		if gu != nil {
			gus = gu[s*d : (s+1)*d]
		}
		b.p.coefAdjoint(rec, d, Zb[s*d:(s+1)*d], lb[s], G, s, S)
		b.p.backwardAll(rec, d, Zb[s*d:(s+1)*d], lb[s], nil, 0, 0, false, ga, 0, 2, gus)
	}
	if gm == nil && gu == nil {
		return
	}
	b.madeBackBatch(S, b.masked(t, params), b.backScratch(t, params, S), uv, hs, G, gm, gu)
}

// coefAdjoint writes the coefficient adjoints of draw s of S, z̄_j·∂z_j/∂r_kj + l̄·∂ld_j/∂r_kj
// for coordinate j = 4g + l, from its record of evalAllBatch (the interleaved ∂z/∂r and ∂ld/∂r of
// each group) into G in C's layout (group g's runs at S·col + s·q, entry nl·k + l; col = 4g·P
// since every earlier group is full).
func (p *bernPoly) coefAdjoint(rec []float64, d int, zbar []float64, lbar float64, G []float64, s, S int) {
	P := p.m + 1
	Q := 4 * P
	for g := range groups(d) {
		blk := rec[2*Q*g : 2*Q*(g+1)]
		j0 := 4 * g
		if j0+4 <= d {
			kernel.Comb4(G[S*j0*P+s*Q:S*j0*P+(s+1)*Q], zbar[j0:j0+4], lbar, blk[:Q], blk[Q:])
			continue
		}
		nl := d - j0 // the compact runs of a last group that is not full
		o := G[S*j0*P+s*nl*P : S*j0*P+(s+1)*nl*P]
		kernel.CombCompact(o, nl, zbar[j0:d], lbar, blk[:Q], blk[Q:])
	}
}

// madeBackBatch is the MADE's pullback over the batch: for the adjoint G of its output (C's
// layout) it adds ∂/∂params into gm (nil to skip) and ∂/∂U into gu (nil to skip), from the
// inputs uv (S×d), the hidden activations hs (layer by layer, S×n_l each) and the masked
// weights wm, with scratch ws (backLen). The output layer group by group: its weight
// adjoints Aᵀ·Ḡ_g (ka × q: A_g the forward's inputs, transposed, Ḡ_g the group's S×q
// adjoint) in one product, summed over the draws in the packed layout and then scattered
// into the parameter layout with the lane masks (scatterGroup); the adjoints of its inputs
// Ḡ_g·B̃_gᵀ (S × (ka−1), B̃_g the group's packed rows) in one product, added into the hidden
// (or input) adjoints; then the hidden layers, last first: W̄ += (Xᵀ·Ḡ)⊙mask, b̄ += 1ᵀ·Ḡ,
// X̄ = Ḡ·W̃ᵀ and the activation's derivative, each product one kernel.GemmNN (with the
// inputs transposed first) or kernel.GemmNT (against the weights as they are).
func (b *BernsteinAR) madeBackBatch(S int, wm, ws, uv, hs, G, gm, gu []float64) {
	m := b.made
	d := b.d
	act := m.Activation()
	hid := m.Hidden()
	L := len(hid)
	maxW, maxH, maxT, maxY := b.backLens(S)
	tmp := ws[:maxW]
	ws = ws[maxW:]
	ga, gb := ws[:S*maxH], ws[S*maxH:2*S*maxH]
	ws = ws[2*S*maxH:]
	T, Y := ws[:maxT], ws[maxT:maxT+maxY]

	// Output layer: X is the last hidden layer (or U), nx wide, its adjoint gx.
	nx, X := d, uv
	gx := gu
	if L > 0 {
		nx = hid[L-1]
		X = hs[len(hs)-S*nx:]
		gx = ga[:S*nx]
		clear(gx)
	}
	wo := b.hiddenMaskedLen()
	var gW, gbias, gV []float64
	if gm != nil {
		gW, gbias = m.Layer(gm, L)
		gV = m.Direct(gm)
	}
	kd := m.K() * d
	one := [4]float64{1, 1, 1, 1}
	for g, gr := range b.grp {
		ka, Q := gr.ka(), gr.q
		nr := len(gr.rows)
		Gg := G[S*gr.col : S*(gr.col+Q)]
		if gm != nil {
			// T = A_gᵀ (ka × S), then W̄_g = T·Ḡ_g (ka × q).
			At := T[:ka*S]
			for s := range S {
				At[s] = 1
			}
			for i, r := range gr.rows {
				for s := range S {
					At[(1+i)*S+s] = X[s*nx+r]
				}
			}
			for i, r := range gr.drows {
				for s := range S {
					At[(1+nr+i)*S+s] = uv[s*d+r]
				}
			}
			w := tmp[:ka*Q]
			kernel.GemmNN(false, ka, S, Q, At, S, Gg, Q, w, Q)
			b.p.scatterGroup(gbias, w[:Q], one, g, d)
			for i, r := range gr.rows {
				b.p.scatterGroup(gW[r*kd:(r+1)*kd], w[(1+i)*Q:(2+i)*Q], gr.lanes[i], g, d)
			}
			for i, r := range gr.drows {
				b.p.scatterGroup(gV[r*kd:(r+1)*kd], w[(1+nr+i)*Q:(2+nr+i)*Q], gr.lanes[nr+i], g, d)
			}
		}
		if (gx != nil && nr > 0) || (gu != nil && len(gr.drows) > 0) {
			n := ka - 1
			y := Y[:S*n]
			kernel.GemmNT(false, S, Q, n, Gg, Q, wm[wo+gr.off+Q:wo+gr.off+ka*Q], Q, y, n)
			for s := range S {
				ys := y[s*n : (s+1)*n]
				if gx != nil {
					gxs := gx[s*nx : (s+1)*nx]
					for i, r := range gr.rows {
						gxs[r] += ys[i]
					}
				}
				if gu != nil {
					gus := gu[s*d : (s+1)*d]
					for i, r := range gr.drows {
						gus[r] += ys[nr+i]
					}
				}
			}
		}
	}
	if L == 0 {
		return
	}
	nn.ActivateBack(act, gx, X)

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
		wEnd -= nx * nout
		W := wm[wEnd : wEnd+nx*nout]
		if gm != nil {
			gW, gbias := m.Layer(gm, l)
			w := tmp[:nx*nout]
			Xt := T[:nx*S]
			transpose(Xt, X, S, nx)
			kernel.GemmNN(false, nx, S, nout, Xt, S, g, nout, w, nout)
			colSumAdd(gbias, g, S, nout)
			mk := m.Mask(l)
			for i, v := range w {
				gW[i] += v * mk[i]
			}
		}
		if l == 0 {
			if gu != nil {
				kernel.GemmNT(true, S, nout, d, g, nout, W, nout, gu, d)
			}
			return
		}
		ga, gb = gb, ga
		gx := ga[:S*nx]
		kernel.GemmNT(false, S, nout, nx, g, nout, W, nout, gx, nx)
		nn.ActivateBack(act, gx, X)
		g, nout = gx, nx
	}
}

// backLens returns the sizes of madeBackBatch's scratch for S draws: the largest weight
// adjoint of a hidden layer or of a group of the output layer, the widest hidden layer, the
// largest transposed input (ka·S or n_{l−1}·S) and the largest input adjoint of a group
// (S·(ka−1)).
func (b *BernsteinAR) backLens(S int) (maxW, maxH, maxT, maxY int) {
	for _, gr := range b.grp {
		maxW, maxT, maxY = max(maxW, gr.ka()*gr.q), max(maxT, gr.ka()*S), max(maxY, (gr.ka()-1)*S)
	}
	in := b.d
	for _, H := range b.made.Hidden() {
		maxW, maxH, maxT, in = max(maxW, in*H), max(maxH, H), max(maxT, in*S), H
	}
	return maxW, maxH, maxT, maxY
}

// backLen returns the length of madeBackBatch's scratch for S draws.
func (b *BernsteinAR) backLen(S int) int {
	maxW, maxH, maxT, maxY := b.backLens(S)
	return maxW + 2*S*maxH + maxT + maxY
}

// backScratch returns the working memory of madeBackBatch for S draws (backLen), kept by the
// tape for the parameter value (ad.Tape.Memo) and never cleared.
func (b *BernsteinAR) backScratch(t *ad.Tape, params ad.Var, S int) []float64 {
	s, _ := t.Memo((*bernARBackScratch)(b), params, b.backLen(S))
	return s
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
