package flow

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
)

// The forward pass of Bernstein and BernsteinAR as one ad.Custom node per draw: the node's
// value is (z_1, …, z_d, log|det ∂z/∂u|). Its forward evaluates all d polynomials (the d·M
// softplus increments in one kernel.Softplus pass; for Bernstein they depend on the
// parameters only and are prepared once per parameter value, ad.Tape.Memo; then four
// coordinates per kernel.BernsteinElev4 call) and keeps ∂z_j/∂r, ∂ld_j/∂r
// and the six affine and input partials of every coordinate; its backward combines them with
// the output adjoint (r̄_j = z̄_j·∂z_j/∂r + l̄·∂ld_j/∂r) and, for BernsteinAR, pulls r̄ back
// through the whole MADE in plain float64 (nn.MADE.OutputsByDimBack, HiddenBack). Against one
// fused node per z_j, a log-determinant node, the coordinate views and a concatenation (and
// for BernsteinAR the MADE's layer nodes, the masked copies of its weights, its K·d-sized
// output and that output's transpose) this records 1 node instead of ≈ 3d + 20.

// bernRec is the number of scalars kept per coordinate after ∂z/∂r and ∂ld/∂r:
// ∂z/∂(a′, β, u) and ∂ld/∂(a′, β, u).
const bernRec = 6

// The d coordinates are evaluated in groups of four, one per lane of kernel.BernsteinElev4
// (the last group padded with zero lanes): the prepared coefficients and the record of
// ∂z/∂r and ∂ld/∂r hold each group's four coordinates interleaved, entry k of lane l at
// [4k + l] of the group's block, so that the kernel reads and writes whole vectors.

// bernRows says where the parameters of d coordinates are in plain slices: the raw
// coefficients of coordinate j at coef[coefOff + j·coefStride :][:M+1] and (a′_j, β_j) at
// aff[affOff + j·affStride :][:2]. coefStride is at most M+3.
type bernRows struct {
	coef                []float64
	coefOff, coefStride int
	aff                 []float64
	affOff, affStride   int
}

// groups returns the number of groups of four coordinates.
func groups(d int) int { return (d + 3) / 4 }

// recLen returns the length of the per-draw record evalAll keeps for d coordinates: per
// group ∂z/∂r and ∂ld/∂r (4(M+1) each, interleaved), then bernRec values per coordinate.
func (p *bernPoly) recLen(d int) int { return 8*(p.m+1)*groups(d) + bernRec*d }

// affOff returns where prepAll puts the affine values (α_j, σ(a′_j), log α_j).
func (p *bernPoly) affOff(d int) int { return 8 * (p.m + 1) * groups(d) }

// prepLen returns the length of the prepared coefficients of d coordinates (prepAll): per
// group δ (with ϑ_0 for δ_0) and σ(r) (4(M+1) each, interleaved), the 3d affine values, and
// the scratch of prepCoefs's softplus pass.
func (p *bernPoly) prepLen(d int) int { return p.affOff(d) + 3*d + 8*groups(d)*(p.m+3) }

// evalLen returns the length of the scratch evalAll needs for d coordinates.
func (p *bernPoly) evalLen(d int) int { return 20*(p.m+1) + 20 + 9*d }

// wsLen returns the length of the scratch forwardAll needs for d coordinates.
func (p *bernPoly) wsLen(d int) int { return p.prepLen(d) + p.evalLen(d) }

// prepAll writes the prepared coefficients of d coordinates into pre (prepLen(d)): for the
// group of coordinates 4g..4g+3, the increments δ (entry 0: ϑ_0 = r_0) and σ(r) at
// pre[8(M+1)g:] (prepCoefs), and α_j, σ(a′_j), log α_j at pre[affOff(d):] + j, + d + j,
// + 2d + j (prepAffine). The cumulative sums ϑ_k are not formed (kernel.BernsteinElev4 sums
// by parts). Cost: the d·M softplus increments and their sigmoids (one kernel.Softplus pass)
// and d softplus and logarithms for α.
func (p *bernPoly) prepAll(pre []float64, d int, L bernRows) {
	p.prepCoefs(pre, d, L)
	p.prepAffine(pre[p.affOff(d):][:3*d], d, L)
}

// prepCoefs is the part of prepAll for the polynomial coefficients (δ with ϑ_0, σ(r)): one
// kernel.Softplus call over all the rows of raw coefficients (with whatever lies between them
// when coefStride > M+1, computed and ignored), then the rows interleaved by group of four.
func (p *bernPoly) prepCoefs(pre []float64, d int, L bernRows) {
	M := p.m
	P := M + 1
	st := L.coefStride
	if st < P || st > M+3 {
		panic(fmt.Sprintf("flow: Bernstein: coefficient stride %d, want M+1..M+3 (M=%d)", st, M))
	}
	G := groups(d)
	n := (d-1)*st + M
	N := 4 * G * st // the rows of the padding lanes of the last group read zeros
	sc := pre[p.affOff(d)+3*d:]
	sp, sg := sc[:N], sc[N:2*N]
	r := L.coef[L.coefOff:][:n+1]
	kernel.Softplus(sp[:n], sg[:n], r[1:])
	clear(sp[n:])
	clear(sg[n:])
	for g := range G {
		blk := pre[8*P*g : 8*P*(g+1)]
		de, si := blk[:4*P], blk[4*P:]
		o := 4 * g * st // sp[o + l·st + k − 1] = softplus(r_k) of coordinate 4g+l
		for l := range 4 {
			de[l], si[l] = 0, 0
			if j := 4*g + l; j < d {
				de[l] = r[j*st]
			}
		}
		kernel.Interleave4(de[4:], sp[o:], st)
		kernel.Interleave4(si[4:], sg[o:], st)
	}
}

// prepAffine writes α_j = softplus(a′_j), σ(a′_j) and log α_j into a[j], a[d+j], a[2d+j]
// (len(a) = 3d) for the d affine pairs of L.
func (p *bernPoly) prepAffine(a []float64, d int, L bernRows) {
	alpha, sa, la := a[:d], a[d:2*d], a[2*d:3*d]
	for j := range d {
		la[j] = L.aff[L.affOff+j*L.affStride] // a′_j, replaced by log α_j below
	}
	kernel.Softplus(alpha, sa, la)
	for j := range d {
		la[j] = math.Log(alpha[j])
	}
}

// lanePoints is the set-up of group g's four lanes (nl of them real) that evalAll and
// evalAllBatch share, into the caller's zeroed arrays: each lane's point v_l = vv[4g+l], its x
// and y = 1 − x into xy[l] and xy[4+l] (σ(±v) from sg for BoundedTails, v and 1 − v for
// LinearTails), for BoundedTails their logarithms lx, ly (−softplus(∓v) from sp), and slow for
// the lanes the four-lane path does not take: past nl, degree M < 2, a NaN point, or a point in
// a linear tail (their xy are 0). Cost O(1) per lane, no transcendental function.
func (p *bernPoly) lanePoints(g, nl, d int, vv, sp, sg, xy []float64, v, lx, ly *[4]float64, slow *[4]bool) {
	for l := range 4 {
		xy[l], xy[4+l] = 0, 0
		if l >= nl {
			slow[l] = true
			continue
		}
		j := 4*g + l
		vj := vv[j]
		v[l] = vj
		switch {
		case p.m < 2 || math.IsNaN(vj) || (p.tails == LinearTails && (vj < 0 || vj > 1)):
			slow[l] = true
		case p.tails == BoundedTails:
			xy[l], xy[4+l], lx[l], ly[l] = sg[j], sg[d+j], -sp[d+j], -sp[j]
		default:
			xy[l], xy[4+l] = vj, 1-vj
		}
	}
}

// evalAll writes z_j = T_j(u_j) into out[j] and Σ_j log T_j′(u_j) into out[d] from the
// prepared coefficients pre (prepAll) and the β_j of L, and the partials into rec (recLen):
// ∂z_j/∂r and ∂ld_j/∂r interleaved by group of four, then at rec[8(M+1)·groups(d) + 6j:]
// ∂z_j/∂(a′, β, u), ∂ld_j/∂(a′, β, u). bs is scratch of evalLen(d). For BoundedTails the
// points x_j = σ(v_j), 1 − x_j and their logarithms come from one kernel.Softplus pass over
// ±v_j (LinearTails: a log and a log1p each); then, per group of four coordinates, the bases
// of degree M−2 by the mode-centred recurrences (one exponential each; basisRun4, the four
// lanes in lockstep), then kernel.BernsteinElev4 for the elevations, z, h′, h″ and the
// partials in r, and a logarithm per coordinate for log h′. Coordinates at a NaN point, in a linear tail, or of degree M = 1
// take the one-coordinate path (atSplit) instead. Cost O(d·M).
func (p *bernPoly) evalAll(pre, bs []float64, d int, L bernRows, u, out, rec []float64) {
	M := p.m
	P := M + 1
	G := groups(d)
	aff := pre[p.affOff(d):][:3*d]
	alpha, sa, la := aff[:d], aff[d:2*d], aff[2*d:]
	b2, b1 := bs[:4*max(M-1, 0)], bs[4*P:4*P+4*M]
	xy, res := bs[8*P:8*P+8], bs[8*P+8:8*P+20]
	fb := bs[8*P+20:][:8*P] // one-coordinate path: ϑ, δ, σ; its basis scratch; ∂z, ∂ld
	// The points v_j, and for BoundedTails softplus(±v_j) and σ(±v_j) in one kernel.Softplus
	// pass: x = σ(v), y = σ(−v), log x = −softplus(−v), log y = −softplus(v).
	vs := bs[16*P+20:][:6*d]
	vv, sp, sg := vs[:2*d], vs[2*d:4*d], vs[4*d:]
	for j := range d {
		vj := alpha[j]*u[j] + L.aff[L.affOff+j*L.affStride+1]
		vv[j], vv[d+j] = vj, -vj
	}
	if p.tails == BoundedTails {
		kernel.Softplus(sp, sg, vv)
	}
	srec := rec[8*P*G:][:bernRec*d]
	sum := 0.0
	for g := range G {
		tds := pre[8*P*g : 8*P*(g+1)]
		dzdl := rec[8*P*g : 8*P*(g+1)]
		nl := min(4, d-4*g)
		// The transcendental functions of the four lanes in separate passes, so that the
		// processor overlaps the lanes' independent calls.
		var v, e, lx, ly [4]float64
		var kk [4]int
		var slow [4]bool
		p.lanePoints(g, nl, d, vv, sp, sg, xy, &v, &lx, &ly, &slow)
		for l := range 4 {
			if slow[l] {
				continue
			}
			if p.tails == LinearTails {
				lx[l], ly[l] = math.Log(v[l]), math.Log1p(-v[l])
			}
			kk[l], e[l] = p.basisMode(M-2, xy[l], xy[4+l], lx[l], ly[l]) // b_{k,M−2} = exp(lb), as before
		}
		clear(b2)
		if M >= 2 {
			p.basisRun4(b2, M-2, kk, e, xy, slow)
		}
		if M >= 2 {
			kernel.BernsteinElev4(M, xy, b2, tds, b1, dzdl, res)
		}
		for l := range 4 {
			if !slow[l] {
				e[l] = math.Log(res[4+l]) // log h′
			}
		}
		for l := range nl {
			j := 4*g + l
			var zj, ld, dzdv, dldv float64
			if slow[l] {
				zj, ld, dzdv, dldv = p.evalOne(fb, tds, dzdl, l, v[l])
			} else {
				x, y := xy[l], xy[4+l]
				hp, hpp := res[4+l], res[8+l]
				zj, ld = res[l], e[l]
				if p.tails == BoundedTails { // chain through x = σ(v): dx/dv = x·y
					q := x * y
					ld += lx[l] + ly[l]
					dzdv, dldv = hp*q, hpp/hp*q+(y-x)
				} else {
					dzdv, dldv = hp, hpp/hp
				}
			}
			out[j] = zj
			sum += ld + la[j]
			uj, a, sj := u[j], alpha[j], sa[j]
			s := srec[bernRec*j : bernRec*(j+1)]
			s[0], s[1], s[2] = dzdv*uj*sj, dzdv, dzdv*a
			s[3], s[4], s[5] = dldv*uj*sj+sj/a, dldv, dldv*a
		}
	}
	out[d] = sum
}

// basisRun4 is basisRun for the four lanes of a group at once (b interleaved, entry i of
// lane l at b[4i + l], zero on entry), with the same arithmetic on every lane: lane l (unless
// slow) starts at kk[l] with bk[l] and runs the ratio recurrences for x = xy[l], y = xy[4+l].
// The four lanes' recurrences are independent chains of multiplications; they advance in
// lockstep for as many steps as every lane has, so that the processor overlaps them, and each
// lane finishes alone.
func (p *bernPoly) basisRun4(b []float64, n int, kk [4]int, bk [4]float64, xy []float64, slow [4]bool) {
	const tiny = 1e-300 // as basisRun
	b = b[:4*(n+1)]
	// Per lane: the chains' ratios (0 for lanes without chains: slow lanes, padding, point
	// masses), their start values and the threshold of the stopping test (−1: never stops).
	var qu, qd, v0, thr [4]float64
	var ku, kd [4]int
	var chain [4]bool
	upSteps, downSteps := n, n
	for l := range 4 {
		ku[l], kd[l], thr[l] = 0, n, -1
		if slow[l] {
			continue
		}
		b[4*kk[l]+l] = bk[l]
		x, y := xy[l], xy[4+l]
		if n == 0 || x <= 0 || y <= 0 {
			continue
		}
		chain[l] = true
		qu[l], qd[l], v0[l], thr[l] = x/y, y/x, bk[l], tiny
		ku[l], kd[l] = kk[l], kk[l]
		upSteps, downSteps = min(upSteps, n-kk[l]), min(downSteps, kk[l])
	}
	if chain == [4]bool{} {
		return
	}
	up, down := p.up[:n], p.down[:n+1]
	// Upwards: lane l writes b[4(i+1) + l] for i = ku[l], ku[l]+1, … The lockstep part reads
	// each lane's run of ratios and writes its run of b through views of one common length,
	// so that the loop carries no bounds checks and keeps its state in registers.
	a0, a1, a2, a3 := v0[0], v0[1], v0[2], v0[3]
	q0, q1, q2, q3 := qu[0], qu[1], qu[2], qu[3]
	h0, h1, h2, h3 := thr[0], thr[1], thr[2], thr[3]
	t := 0
	if upSteps > 0 {
		r0 := up[ku[0]:][:upSteps]
		r1, r2, r3 := up[ku[1]:][:len(r0)], up[ku[2]:][:len(r0)], up[ku[3]:][:len(r0)]
		w0 := b[4*(ku[0]+1):][:4*len(r0)-3]
		w1, w2, w3 := b[4*(ku[1]+1)+1:][:len(w0)], b[4*(ku[2]+1)+2:][:len(w0)], b[4*(ku[3]+1)+3:][:len(w0)]
		for ; t < len(r0) && a0 > h0 && a1 > h1 && a2 > h2 && a3 > h3; t++ {
			a0 *= r0[t] * q0
			a1 *= r1[t] * q1
			a2 *= r2[t] * q2
			a3 *= r3[t] * q3
			w0[4*t], w1[4*t], w2[4*t], w3[4*t] = a0, a1, a2, a3
		}
	}
	last := [4]float64{a0, a1, a2, a3}
	for l := range 4 {
		if !chain[l] {
			continue
		}
		v, q := last[l], qu[l]
		for i := ku[l] + t; i < n && v > tiny; i++ {
			v *= up[i] * q
			b[4*(i+1)+l] = v
		}
	}
	// Downwards: lane l writes b[4(i−1) + l] for i = kd[l], kd[l]−1, …, through reversed
	// index arithmetic on views as above: step t reads down[kd − t] and writes b[4(kd−t−1) + l].
	a0, a1, a2, a3 = v0[0], v0[1], v0[2], v0[3]
	q0, q1, q2, q3 = qd[0], qd[1], qd[2], qd[3]
	t = 0
	if downSteps > 0 {
		m := downSteps
		r0 := down[kd[0]+1-m:][:m]
		r1, r2, r3 := down[kd[1]+1-m:][:len(r0)], down[kd[2]+1-m:][:len(r0)], down[kd[3]+1-m:][:len(r0)]
		w0 := b[4*(kd[0]-m):][:4*len(r0)-3]
		w1, w2, w3 := b[4*(kd[1]-m)+1:][:len(w0)], b[4*(kd[2]-m)+2:][:len(w0)], b[4*(kd[3]-m)+3:][:len(w0)]
		for ; t < len(r0) && a0 > h0 && a1 > h1 && a2 > h2 && a3 > h3; t++ {
			j := len(r0) - 1 - t
			a0 *= r0[j] * q0
			a1 *= r1[j] * q1
			a2 *= r2[j] * q2
			a3 *= r3[j] * q3
			w0[4*j], w1[4*j], w2[4*j], w3[4*j] = a0, a1, a2, a3
		}
	}
	last = [4]float64{a0, a1, a2, a3}
	for l := range 4 {
		if !chain[l] {
			if !slow[l] { // the lockstep wrote zeros over the lane: restore its point mass
				b[4*kk[l]+l] = bk[l]
			}
			continue
		}
		v, q := last[l], qd[l]
		for i := kd[l] - t; i > 0 && v > tiny; i-- {
			v *= down[i] * q
			b[4*(i-1)+l] = v
		}
	}
}

// evalAllBatch is evalAll for the batched node (BernsteinAR.ForwardBatch): the same values
// to rounding (≤ a few ulp per coordinate; TestBernsteinEvalAllMatchesOne checks both against
// atSplit), computed with vector kernels where evalAll keeps the arithmetic of the release
// before it (the per-draw Forward, whose draws saved fits reproduce bit for bit). It writes
// z_j = T_j(u_j) into out[j] and Σ_j log T_j′(u_j) into out[d] from the
// prepared coefficients pre (prepAll) and the β_j of L, and the partials into rec (recLen):
// ∂z_j/∂r and ∂ld_j/∂r interleaved by group of four, then at rec[8(M+1)·groups(d) + 6j:]
// ∂z_j/∂(a′, β, u), ∂ld_j/∂(a′, β, u). bs is scratch of evalLen(d). For BoundedTails the
// points x_j = σ(v_j), 1 − x_j and their logarithms come from one kernel.Softplus pass over
// ±v_j, and the starts of the bases, max(x_j, y_j)^(M−2) = exp((M−2)·max(log x_j, log y_j)),
// from one kernel.Exp pass (LinearTails: x_j = v_j, y_j = 1 − v_j, the starts by repeated
// squaring, powi4). Then, per group of four coordinates, the bases of degree M−2 from the
// ends (kernel.BernsteinBasis4, the four lanes in one vector; for M−2 > endMax the
// recurrences from the mode, basisMode and basisRun), kernel.BernsteinElev4 for the
// elevations, z, h′, h″ and the partials in r; and log h′ of all d coordinates in one
// kernel.Log pass. Coordinates at a NaN point or of degree M = 1 take the one-coordinate path
// (atSplit), coordinates in a linear tail evalTail. Cost O(d·M).
func (p *bernPoly) evalAllBatch(pre, bs []float64, d int, L bernRows, u, out, rec []float64) {
	M := p.m
	P := M + 1
	G := groups(d)
	aff := pre[p.affOff(d):][:3*d]
	alpha, sa, la := aff[:d], aff[d:2*d], aff[2*d:]
	b2, b1 := bs[:4*max(M-1, 0)], bs[4*P:4*P+4*M]
	xy, res := bs[8*P:8*P+8], bs[8*P+8:8*P+20]
	fb := bs[8*P+20:][:8*P] // one-coordinate path: ϑ, δ, σ; its basis scratch; ∂z, ∂ld
	// The points v_j, and for BoundedTails softplus(±v_j) and σ(±v_j) in one kernel.Softplus
	// pass: x = σ(v), y = σ(−v), log x = −softplus(−v), log y = −softplus(v).
	vs := bs[16*P+20:][:6*d]
	vv, sp, sg := vs[:2*d], vs[2*d:4*d], vs[4*d:]
	tb := bs[16*P+20+6*d:][:4*P] // kernel.BernsteinBasis4's scratch
	// Per coordinate: h′ (1 for the one-coordinate path), its logarithm, and what ld adds to
	// log h′ (log x + log y for BoundedTails; the whole ld on the one-coordinate path).
	lg := bs[20*P+20+6*d:][:3*d]
	hps, lh, ldx := lg[:d], lg[d:2*d], lg[2*d:]
	for j := range d {
		vj := alpha[j]*u[j] + L.aff[L.affOff+j*L.affStride+1]
		vv[j], vv[d+j] = vj, -vj
	}
	if p.tails == BoundedTails {
		kernel.Softplus(sp, sg, vv)
		if n := M - 2; n >= 0 && n <= endMax {
			// The basis starts b_{n,n} = xⁿ or b_{0,n} = yⁿ of every coordinate, from the
			// logarithms, in one kernel.Exp pass (into lh, which holds log h′ only at the end).
			for j := range d {
				lh[j] = float64(n) * max(-sp[d+j], -sp[j])
			}
			kernel.Exp(lh, lh)
		}
	}
	srec := rec[8*P*G:][:bernRec*d]
	sum := 0.0
	for g := range G {
		tds := pre[8*P*g : 8*P*(g+1)]
		dzdl := rec[8*P*g : 8*P*(g+1)]
		nl := min(4, d-4*g)
		var v, e, lx, ly [4]float64
		var kk [4]int // basisMode's starts (M−2 > endMax only)
		var slow [4]bool
		p.lanePoints(g, nl, d, vv, sp, sg, xy, &v, &lx, &ly, &slow)
		for l := range 4 {
			if slow[l] {
				continue
			}
			if n := M - 2; n > endMax { // the mode-centred start (kernel.BernsteinBasis4's would underflow)
				if p.tails == LinearTails {
					lx[l], ly[l] = math.Log(v[l]), math.Log1p(-v[l])
				}
				kk[l], e[l] = p.basisMode(n, xy[l], xy[4+l], lx[l], ly[l])
			} else if p.tails == BoundedTails {
				e[l] = lh[4*g+l] // the start formed above
			}
		}
		if p.tails == LinearTails && M >= 2 && M-2 <= endMax { // b_{n,n} = xⁿ or b_{0,n} = yⁿ
			e = powi4(xy, M-2)
		}
		clear(b2)
		switch {
		case M < 2:
		case M-2 > endMax:
			for l := range 4 {
				if !slow[l] {
					p.basisRun(b2[l:], 4, M-2, kk[l], e[l], xy[l], xy[4+l])
				}
			}
		default:
			kernel.BernsteinBasis4(M-2, p.up, xy, e[:], tb, b2)
		}
		if M >= 2 {
			kernel.BernsteinElev4(M, xy, b2, tds, b1, dzdl, res)
		}
		for l := range nl {
			j := 4*g + l
			var zj, dzdv, dldv float64
			switch {
			case slow[l] && p.tails == LinearTails && (v[l] < 0 || v[l] > 1):
				zj, dzdv = p.evalTail(tds, dzdl, l, v[l])
				hps[j], ldx[j] = dzdv, 0 // ld = log of the tail's slope
			case slow[l]:
				var ld float64
				zj, ld, dzdv, dldv = p.evalOne(fb, tds, dzdl, l, v[l])
				hps[j], ldx[j] = 1, ld // log 1 = 0 exactly: ld goes in whole
			default:
				x, y := xy[l], xy[4+l]
				hp, hpp := res[4+l], res[8+l]
				zj = res[l]
				hps[j], ldx[j] = hp, 0
				if p.tails == BoundedTails { // chain through x = σ(v): dx/dv = x·y
					q := x * y
					ldx[j] = lx[l] + ly[l]
					dzdv, dldv = hp*q, hpp/hp*q+(y-x)
				} else {
					dzdv, dldv = hp, hpp/hp
				}
			}
			out[j] = zj
			uj, a, sj := u[j], alpha[j], sa[j]
			s := srec[bernRec*j : bernRec*(j+1)]
			s[0], s[1], s[2] = dzdv*uj*sj, dzdv, dzdv*a
			s[3], s[4], s[5] = dldv*uj*sj+sj/a, dldv, dldv*a
		}
	}
	// log h′ of all d coordinates in one pass; ld_j = log h′_j (+ log x_j + log y_j, bounded).
	kernel.Log(lh, hps)
	for j := range d {
		sum += (lh[j] + ldx[j]) + la[j]
	}
	out[d] = sum
}

// endMax is the largest base degree n whose basis evalAll computes from the ends
// (kernel.BernsteinBasis4): its start max(x, y)ⁿ ≥ 2⁻ⁿ ≥ 2⁻⁹⁹⁰ ≈ 1e-298 stays above the
// kernel's cutoff (1e-300). Beyond it, the recurrences start at the mode (basisMode, basisRun).
const endMax = 990

// evalTail evaluates lane l of a group at v in a linear tail (v < 0 or v > 1, LinearTails) as
// bernPoly.tail does, straight from the group's interleaved prepared coefficients into its
// record dzdl: it returns z and the tail's slope s = ∂z/∂v (log s is ld; ∂ld/∂v = 0).
func (p *bernPoly) evalTail(tds, dzdl []float64, l int, v float64) (z, s float64) {
	M := p.m
	P := M + 1
	fm := float64(M)
	dz, dl := dzdl[:4*P], dzdl[4*P:8*P]
	sig := tds[4*P : 8*P]
	for k := range P {
		dz[4*k+l], dl[4*k+l] = 0, 0
	}
	dz[l] = 1
	if v < 0 { // z = ϑ_0 + M·δ_1·v
		d1, s1 := tds[4+l], sig[4+l]
		dz[4+l] = fm * s1 * v
		dl[4+l] = s1 / d1
		s = fm * d1
		return tds[l] + s*v, s
	}
	// z = ϑ_M + M·δ_M·(v − 1), ϑ_M summed as evalOne forms it.
	theta := 0.0
	for k := range P {
		theta += tds[4*k+l]
	}
	for k := 1; k <= M; k++ {
		dz[4*k+l] = sig[4*k+l]
	}
	dM, sM := tds[4*M+l], sig[4*M+l]
	dz[4*M+l] += fm * sM * (v - 1)
	dl[4*M+l] = sM / dM
	s = fm * dM
	return theta + s*(v-1), s
}

// evalOne evaluates lane l of a group at v by atSplit (the one-coordinate path, for the
// special cases) and writes its ∂z/∂r and ∂ld/∂r into the group's record dzdl. fb is scratch
// of 8(M+1).
func (p *bernPoly) evalOne(fb, tds, dzdl []float64, l int, v float64) (z, ld, dzdv, dldv float64) {
	P := p.m + 1
	w := fb[:3*P]
	theta := 0.0
	for k := range P {
		theta += tds[4*k+l] // ϑ_k as prep forms it: ϑ_0 = r_0, then δ_1, δ_2, … added
		w[k], w[P+k], w[2*P+k] = theta, tds[4*k+l], tds[4*P+4*k+l]
	}
	dz, dl := fb[6*P:7*P], fb[7*P:8*P]
	z, ld, dzdv, dldv = p.atSplit(w, fb[3*P:6*P], v, dz, dl)
	for k := range P {
		dzdl[4*k+l], dzdl[4*P+4*k+l] = dz[k], dl[k]
	}
	return z, ld, dzdv, dldv
}

// forwardAll is prepAll then evalAll with scratch ws of wsLen(d).
func (p *bernPoly) forwardAll(ws []float64, d int, L bernRows, u, out, rec []float64) {
	n := p.prepLen(d)
	pre, bs := ws[:n], ws[n:n+p.evalLen(d)]
	p.prepAll(pre, d, L)
	p.evalAll(pre, bs, d, L, u, out, rec)
}

// backwardAll adds the pullback of the adjoints zbar (of z, len d) and lbar (of the
// log-determinant) through the record of evalAll: coefficient adjoints into
// gc[gcOff + j·gcStride :][:M+1], affine adjoints into ga[gaOff + j·gaStride :][:2], input
// adjoints into gu[j]. Any of gc, ga, gu may be nil to skip it. With setC the coefficient
// adjoints are stored instead of added (gc need not be zeroed). Cost O(d·M).
func (p *bernPoly) backwardAll(rec []float64, d int, zbar []float64, lbar float64, gc []float64, gcOff, gcStride int, setC bool, ga []float64, gaOff, gaStride int, gu []float64) {
	P := p.m + 1
	G := groups(d)
	srec := rec[8*P*G:][:bernRec*d]
	if gc != nil {
		for g := range G {
			blk := rec[8*P*g : 8*P*(g+1)]
			if setC && 4*g+4 <= d { // a whole group: four rows at once
				kernel.Deinterleave4(gc[gcOff+4*g*gcStride:], gcStride, zbar[4*g:4*g+4], lbar, blk[:4*P], blk[4*P:])
				continue
			}
			for l := range min(4, d-4*g) {
				j := 4*g + l
				zb := zbar[j]
				dz, dl := blk[l:4*P], blk[4*P+l:]
				g := gc[gcOff+j*gcStride:][:P]
				if setC {
					for k := range g {
						g[k] = zb*dz[4*k] + lbar*dl[4*k]
					}
				} else {
					for k := range g {
						g[k] += zb*dz[4*k] + lbar*dl[4*k]
					}
				}
			}
		}
	}
	for j := range d {
		zb := zbar[j]
		s := srec[bernRec*j : bernRec*(j+1)]
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
	b.p.backwardAll(c.Aux(), b.d, g[:b.d], g[b.d], gp, 0, B, false, gp, b.p.m+1, B, gu)
}

// bernElemScratch keys Bernstein's scratch memo.
type bernElemScratch Bernstein

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
	// evalAll's scratch: written before it is read, so shared by the draws uncleared.
	bs, _ := t.Memo((*bernElemScratch)(b), params, b.p.evalLen(d))
	b.p.evalAll(pre, bs, d, L, t.Value(u), c.Value(), c.Aux())
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
	G := b.scratch(t, params)[:d*P]
	b.p.backwardAll(rec, d, g[:d], g[d], G, 0, P, true, ga, 0, 2, gu)
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

// bernARScratch keys BernsteinAR's scratch memo.
type bernARScratch BernsteinAR

// scratch returns the working memory of one forward or backward call of BernsteinAR's node:
// the MADE's outputs C, the prepared coefficients and evalAll's scratch (forward), or the
// coefficient adjoints (backward). Nothing in it outlives the call, so all the draws of a
// gradient step share one buffer, kept by the tape for the parameter value (ad.Tape.Memo)
// and never cleared: every call writes what it reads.
func (b *BernsteinAR) scratch(t *ad.Tape, params ad.Var) []float64 {
	d := b.d
	s, _ := t.Memo((*bernARScratch)(b), params, d*(b.p.m+1)+b.p.prepLen(d)+b.p.evalLen(d))
	return s
}

// forwardNode records BernsteinAR's forward pass as one node: the MADE in plain float64 (its
// hidden layers, then its output layer from the unmasked output weights packed once per
// parameter value), the d polynomials and the log-determinant.
func (b *BernsteinAR) forwardNode(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	d := b.d
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	c := t.CustomUninit((*bernARNode)(b), d+1, nr+nh, params, u) // evalAll and HiddenForward write all of aux
	b.eval(t, params, t.Value(u), c.Value(), c.Aux())
	out := c.Var()
	return t.Slice(out, 0, d), t.Index(out, d)
}

// eval is forwardNode's arithmetic: [z | log|det|] at uv into out (len d + 1), and into aux
// (len recLen(d) + HiddenLen) evalAll's record, then the MADE's hidden activations.
func (b *BernsteinAR) eval(t *ad.Tape, params ad.Var, uv, out, aux []float64) {
	d, P := b.d, b.p.m+1
	nr, nh := b.p.recLen(d), b.made.HiddenLen()
	pv := t.Value(params)
	hl := b.made.HiddenForward(pv[:b.nm], uv, aux[nr:nr+nh])
	ws := b.scratch(t, params)
	C := ws[:d*P]
	b.made.OutputsByDim(b.packed(t, params), hl, uv, C)
	L := bernRows{coef: C, coefStride: P, aff: b.affine(pv), affStride: 2}
	// The coefficients change with every draw, the affine pairs only with the parameters:
	// their softplus is prepared once per parameter value (ad.Tape.Memo).
	n := b.p.prepLen(d)
	pre, bs := ws[d*P:d*P+n], ws[d*P+n:]
	b.p.prepCoefs(pre, d, L)
	a, ok := t.Memo((*bernARNode)(b), params, 3*d)
	if !ok {
		b.p.prepAffine(a, d, L)
	}
	copy(pre[b.p.affOff(d):], a)
	b.p.evalAll(pre, bs, d, L, uv, out, aux[:nr])
}
