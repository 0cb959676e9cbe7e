package kernel

import "fmt"

// BernsteinElev4 finishes the evaluation of four Bernstein polynomials of degree m ≥ 2 at
// once, one per lane, from their basis of degree m−2: the work of flow's multivariate
// Bernstein flow per group of four coordinates. Every array holds the four lanes of entry i
// at [4i : 4i+4] (entry i of lane l at 4i + l). Inputs: xy = (x_0..x_3, y_0..y_3), the
// points and y = 1 − x (carried separately); b2, the 4(m−1) basis values b_{i,m−2}(x);
// tds = (δ, s), two blocks of 4(m+1): the increments δ_k = ϑ_k − ϑ_{k−1} of the coefficients
// ϑ with δ_0 replaced by ϑ_0, and the factors s_k (σ(r_k) in flow). Per lane it computes, by
// degree elevation b_{i,n+1} = y·b_{i,n} + x·b_{i−1,n} and with the tail sums
// T_k = Σ_{i≥k} b_{i,m}(x),
//
//	b1[i] = b_{i,m−1}(x),  h′ = m·Σ_{k=1..m} δ_k b_{k−1,m−1},
//	h″ = m(m−1)·Σ_{i=0..m−2} (δ_{i+2} − δ_{i+1}) b_{i,m−2},
//	z = Σ_k ϑ_k b_{k,m} = ϑ_0·T_0 + Σ_{k≥1} δ_k T_k (summation by parts),
//	dz_k = s_k·T_k,  dl_k = (m/h′)·b_{k−1,m−1}·s_k  (k ≥ 1),  dz_0 = 1,  dl_0 = 0,
//
// into b1 (scratch, 4m), dzdl = (dz, dl) (two blocks of 4(m+1)) and res = (z, h′, h″) (12).
// Two passes over the entries, the second downwards for the tail sums; the summation order
// (and, with FMA, the rounding) depends on the implementation. With δ_k > 0 the terms of z
// after the first all have one sign, and the cumulative sums ϑ_k are never formed. Cost ≈ 10
// multiply-adds per entry and lane; the assembly of the default amd64 build does the four
// lanes in one vector.
func BernsteinElev4(m int, xy, b2, tds, b1, dzdl, res []float64) {
	if m < 2 || len(xy) != 8 || len(b2) != 4*(m-1) || len(tds) != 8*(m+1) || len(b1) != 4*m || len(dzdl) != 8*(m+1) || len(res) != 12 {
		panic(fmt.Sprintf("kernel: BernsteinElev4: m=%d, len(xy)=%d, len(b2)=%d, len(tds)=%d, len(b1)=%d, len(dzdl)=%d, len(res)=%d",
			m, len(xy), len(b2), len(tds), len(b1), len(dzdl), len(res)))
	}
	bernElev4(m, xy, b2, tds, b1, dzdl, res)
	clearUpper()
}

// bernElev4Go is BernsteinElev4 in pure Go, lane by lane (two accumulators per sum in the
// first pass, so that consecutive additions do not wait on each other).
func bernElev4Go(m int, xy, b2, tds, b1, dzdl, res []float64) {
	P := m + 1
	n := m - 2
	delta, sig := tds[:4*P], tds[4*P:8*P]
	dz, dl := dzdl[:4*P], dzdl[4*P:8*P]
	b1 = b1[:4*m]
	b2 = b2[:4*(n+1)]
	fm, fmm := float64(m), float64(m*(m-1))
	for l := range 4 {
		x, y := xy[l], xy[4+l]
		var hp, hp1, hpp, hpp1 float64
		prev := 0.0 // b2[i−1]
		i := 0
		for ; i < n; i += 2 {
			c0, c1 := b2[4*i+l], b2[4*i+4+l]
			d1, d2, d3 := delta[4*i+4+l], delta[4*i+8+l], delta[4*i+12+l]
			hpp += (d2 - d1) * c0
			hpp1 += (d3 - d2) * c1
			e0 := y*c0 + x*prev
			e1 := y*c1 + x*c0
			b1[4*i+l], b1[4*i+4+l] = e0, e1
			hp += d1 * e0
			hp1 += d2 * e1
			prev = c1
		}
		if i == n {
			c := b2[4*n+l]
			d1 := delta[4*n+4+l]
			hpp += (delta[4*n+8+l] - d1) * c
			e := y*c + x*prev
			b1[4*n+l] = e
			hp += d1 * e
			prev = c
		}
		e := x * prev
		b1[4*(m-1)+l] = e
		hp += hp1 + delta[4*m+l]*e
		hp *= fm
		res[4+l], res[8+l] = hp, (hpp+hpp1)*fmm
		c := fm / hp
		var z, tail, next float64 // next = b1[k] (b1[m] = 0)
		for k := m; k >= 1; k-- {
			bp := b1[4*(k-1)+l]
			bk := y*next + x*bp
			s := sig[4*k+l]
			tail += bk
			z += delta[4*k+l] * tail
			dz[4*k+l] = s * tail
			dl[4*k+l] = c * bp * s
			next = bp
		}
		res[l] = z + delta[l]*(tail+y*next)
		dz[l], dl[l] = 1, 0
	}
}

// Interleave4 sets dst[4k+l] = src[l·s + k] for l < 4 and k < n = len(dst)/4: four rows of
// n values at stride s in src, interleaved (the layout BernsteinElev4 reads). len(dst) must
// be a multiple of 4, s ≥ n and, for n > 0, len(src) ≥ 3s + n. The assembly transposes 4 × 4
// blocks in registers. Cost: 4n loads and stores.
func Interleave4(dst, src []float64, s int) {
	n := len(dst) / 4
	if len(dst)%4 != 0 || s < n || (n > 0 && len(src) < 3*s+n) {
		panic(fmt.Sprintf("kernel: Interleave4: len(dst)=%d, len(src)=%d, s=%d", len(dst), len(src), s))
	}
	n4 := interleave4(dst, src, s, n)
	for k := n4; k < n; k++ {
		dst[4*k], dst[4*k+1], dst[4*k+2], dst[4*k+3] = src[k], src[s+k], src[2*s+k], src[3*s+k]
	}
	clearUpper()
}

// interleave4Go is Interleave4 in pure Go; it returns n (all entries done).
func interleave4Go(dst, src []float64, s, n int) int {
	r0, r1, r2, r3 := src[:n], src[s:s+n], src[2*s:2*s+n], src[3*s:3*s+n]
	dst = dst[:4*n]
	for k := range n {
		d := dst[4*k : 4*k+4]
		d[0], d[1], d[2], d[3] = r0[k], r1[k], r2[k], r3[k]
	}
	return n
}

// Deinterleave4 sets dst[l·s + k] = a[l]·x[4k+l] + b·y[4k+l] for l < 4 and k < n =
// len(x)/4: the inverse layout change of Interleave4 with a combination of two interleaved
// arrays on the way (the pullback of four Bernstein coordinates, z̄_l·∂z/∂r + l̄·∂ld/∂r).
// len(x) must be a multiple of 4, len(y) = len(x), len(a) = 4, s ≥ n and, for n > 0,
// len(dst) ≥ 3s + n. Each value is one product and one multiply-add (fused in the assembly,
// so rounding may differ from the Go loop in the last bit). Cost: 2n multiply-adds per row.
func Deinterleave4(dst []float64, s int, a []float64, b float64, x, y []float64) {
	n := len(x) / 4
	if len(x)%4 != 0 || len(y) != len(x) || len(a) != 4 || s < n || (n > 0 && len(dst) < 3*s+n) {
		panic(fmt.Sprintf("kernel: Deinterleave4: len(dst)=%d, s=%d, len(a)=%d, len(x)=%d, len(y)=%d", len(dst), s, len(a), len(x), len(y)))
	}
	n4 := deinterleave4(dst, s, a, b, x, y, n)
	for k := n4; k < n; k++ {
		for l := range 4 {
			dst[l*s+k] = a[l]*x[4*k+l] + b*y[4*k+l]
		}
	}
	clearUpper()
}

// deinterleave4Go is Deinterleave4 in pure Go; it returns n (all entries done).
func deinterleave4Go(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int {
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	d0, d1, d2, d3 := dst[:n], dst[s:s+n], dst[2*s:2*s+n], dst[3*s:3*s+n]
	x, y = x[:4*n], y[:4*n]
	for k := range n {
		xk, yk := x[4*k:4*k+4], y[4*k:4*k+4]
		d0[k] = a0*xk[0] + b*yk[0]
		d1[k] = a1*xk[1] + b*yk[1]
		d2[k] = a2*xk[2] + b*yk[2]
		d3[k] = a3*xk[3] + b*yk[3]
	}
	return n
}

// Comb4 sets dst[i] = a[i mod 4]·x[i] + b·y[i]: two interleaved arrays of four lanes (the
// layout of BernsteinElev4) combined with a per-lane weight on the first and a common one on
// the second (the coefficient adjoints of four Bernstein coordinates in that layout,
// z̄_l·∂z/∂r + l̄·∂ld/∂r). len(dst) must be a multiple of 4, len(x) = len(y) = len(dst),
// len(a) = 4; dst may alias x or y. Each value is one product and one multiply-add (fused
// in the assembly, so rounding may differ from the Go loop in the last bit). Cost: 2 flops
// per element.
func Comb4(dst, a []float64, b float64, x, y []float64) {
	if len(dst)%4 != 0 || len(x) != len(dst) || len(y) != len(dst) || len(a) != 4 {
		panic(fmt.Sprintf("kernel: Comb4: len(dst)=%d, len(a)=%d, len(x)=%d, len(y)=%d", len(dst), len(a), len(x), len(y)))
	}
	if len(dst) == 0 {
		return
	}
	comb4(dst, a, b, x, y)
	clearUpper()
}

// comb4Go is Comb4 in pure Go.
func comb4Go(dst, a []float64, b float64, x, y []float64) {
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	x, y = x[:len(dst)], y[:len(dst)]
	for i := 0; i+3 < len(dst); i += 4 {
		d, xs, ys := dst[i:i+4], x[i:i+4], y[i:i+4]
		d[0] = a0*xs[0] + b*ys[0]
		d[1] = a1*xs[1] + b*ys[1]
		d[2] = a2*xs[2] + b*ys[2]
		d[3] = a3*xs[3] + b*ys[3]
	}
}

// basisTiny is BernsteinBasis4's cutoff: terms below it are set to zero (no subnormal
// arithmetic; a term this small cannot matter in a sum of terms that add up to 1).
const basisTiny = 1e-300

// BernsteinBasis4 sets b[4i + l] = b_{i,n}(x_l) = C(n, i)·x_lⁱ·y_l^(n−i), i = 0..n, for four
// points at once (lane l: x = xy[l], y = xy[4+l] = 1 − x, carried separately), from
// start[l] = max(x_l, y_l)ⁿ and the table up[t] = (n−t)/(t+1), t ≤ n. Each lane starts at the
// end of its larger point — b_{n,n} = xⁿ when x ≥ y, b_{0,n} = yⁿ else, ≥ 2⁻ⁿ either way — and
// runs the ratio recurrence across the whole range towards the other end: with q =
// min(x, y)/max(x, y) and ρ_t = up[t]·q, v_{t+1} = v_t·ρ_t is b_{t+1} (upwards, x < y) or
// b_{n−t−1} (downwards, x ≥ y: i/(n−i+1) at i = n−t equals up[t]), computed as v_1 = v_0·ρ_0
// and v_{t+2} = v_t·(ρ_t·ρ_{t+1}): two independent chains of multiplications, so that each
// step waits on half as many products. The four lanes do the same arithmetic in lockstep for
// exactly n steps; the values go into tmp in step order and then into b, reversed in the
// downward lanes. Every step multiplies nonnegative numbers, so b_i has a relative error of
// at most 2|i − start| + 2 roundings beyond the start's own, O(n·ε); terms below basisTiny
// (1e-300) are set to zero. A lane with max(x, y) = 0 (an unused lane, start 0) gives zeros;
// x = 0 or y = 0 give the point mass start at the end and zeros elsewhere. The assembly and
// the pure-Go loop give the same bits (the same products in the same order). len(xy) = 8,
// len(start) = 4, len(up) ≥ n+1, len(tmp) ≥ 4(n+2) (the assembly may write one value beyond
// the last), len(b) = 4(n+1). Cost: ≈ 2n multiplications per lane and two passes of n+1
// vectors.
func BernsteinBasis4(n int, up, xy, start, tmp, b []float64) {
	if n < 0 || len(up) < n+1 || len(xy) != 8 || len(start) != 4 || len(tmp) < 4*(n+2) || len(b) != 4*(n+1) {
		panic(fmt.Sprintf("kernel: BernsteinBasis4: n=%d, len(up)=%d, len(xy)=%d, len(start)=%d, len(tmp)=%d, len(b)=%d",
			n, len(up), len(xy), len(start), len(tmp), len(b)))
	}
	bernBasis4(n, up, xy, start, tmp, b)
	clearUpper()
}

// bernBasis4Go is BernsteinBasis4 in pure Go, lane by lane, writing b directly.
func bernBasis4Go(n int, up, xy, start, tmp, b []float64) {
	up, b = up[:n+1], b[:4*(n+1)]
	for l := range 4 {
		x, y := xy[l], xy[4+l]
		q, o, s := 0.0, l, 4
		if hi := max(x, y); hi > 0 {
			q = min(x, y) / hi
		}
		if x >= y {
			o, s = 4*n+l, -4
		}
		v0 := start[l]
		b[o] = v0
		if n == 0 {
			continue
		}
		r0 := up[0] * q
		v1 := v0 * r0
		if !(v1 >= basisTiny) {
			v1 = 0
		}
		b[o+s] = v1
		for t := 0; t+2 <= n; t++ {
			r1 := up[t+1] * q
			v2 := v0 * (r0 * r1)
			if !(v2 >= basisTiny) {
				v2 = 0
			}
			b[o+(t+2)*s] = v2
			v0, v1, r0 = v1, v2, r1
		}
	}
}

// Gather4 sets dst[4k + l] = src[k·s + l]·lane[l] for l < 4 and k < n = len(dst)/4: runs of
// four consecutive values at stride s, weighted per lane, into the interleaved layout of
// BernsteinElev4 (a MADE output layer's weights of four coordinates, masked, into the packed
// layout of flow's batched Bernstein node). len(dst) must be a multiple of 4, len(lane) = 4,
// s ≥ 4 and, for n > 0, len(src) ≥ (n−1)·s + 4. Cost: 4n products.
func Gather4(dst, src []float64, s int, lane []float64) {
	n := len(dst) / 4
	if len(dst)%4 != 0 || len(lane) != 4 || s < 4 || (n > 0 && len(src) < (n-1)*s+4) {
		panic(fmt.Sprintf("kernel: Gather4: len(dst)=%d, len(src)=%d, s=%d, len(lane)=%d", len(dst), len(src), s, len(lane)))
	}
	if n == 0 {
		return
	}
	gather4(dst, src, s, lane)
	clearUpper()
}

// Scatter4Add is the adjoint of Gather4: dst[k·s + l] += src[4k + l]·lane[l] for l < 4 and
// k < n = len(src)/4 (each product rounded, then added). len(src) must be a multiple of 4,
// len(lane) = 4, s ≥ 4 and, for n > 0, len(dst) ≥ (n−1)·s + 4. Cost: 4n multiply-adds.
func Scatter4Add(dst []float64, s int, src, lane []float64) {
	n := len(src) / 4
	if len(src)%4 != 0 || len(lane) != 4 || s < 4 || (n > 0 && len(dst) < (n-1)*s+4) {
		panic(fmt.Sprintf("kernel: Scatter4Add: len(dst)=%d, s=%d, len(src)=%d, len(lane)=%d", len(dst), s, len(src), len(lane)))
	}
	if n == 0 {
		return
	}
	scatter4Add(dst, s, src, lane)
	clearUpper()
}

// gather4Go is Gather4 in pure Go.
func gather4Go(dst, src []float64, s int, lane []float64) {
	l0, l1, l2, l3 := lane[0], lane[1], lane[2], lane[3]
	for k := range len(dst) / 4 {
		r, q := src[k*s:k*s+4], dst[4*k:4*k+4]
		q[0], q[1], q[2], q[3] = r[0]*l0, r[1]*l1, r[2]*l2, r[3]*l3
	}
}

// scatter4AddGo is Scatter4Add in pure Go.
func scatter4AddGo(dst []float64, s int, src, lane []float64) {
	l0, l1, l2, l3 := lane[0], lane[1], lane[2], lane[3]
	for k := range len(src) / 4 {
		r, q := src[4*k:4*k+4], dst[k*s:k*s+4]
		q[0] += r[0] * l0
		q[1] += r[1] * l1
		q[2] += r[2] * l2
		q[3] += r[3] * l3
	}
}

// Spread sets dst[4k + l] = src[nl·k + l] for l < nl and k < n = len(src)/nl: a compact run of
// nl < 4 interleaved lanes into the four-lane layout of BernsteinElev4, the other lanes of dst
// left alone (the last group of d mod 4 coordinates of a Bernstein flow). 1 ≤ nl ≤ 3,
// len(src) a multiple of nl, len(dst) ≥ 4n − (4 − nl). The assembly covers nl = 2 (one
// 16-byte move per entry), the Go loop the others. Cost: n·nl copies.
func Spread(dst, src []float64, nl int) {
	if nl < 1 || nl > 3 || len(src)%nl != 0 || (len(src) > 0 && len(dst) < 4*(len(src)/nl)-(4-nl)) {
		panic(fmt.Sprintf("kernel: Spread: len(dst)=%d, len(src)=%d, nl=%d", len(dst), len(src), nl))
	}
	if len(src) == 0 {
		return
	}
	spread(dst, src, nl)
}

// CombCompact sets dst[nl·k + l] = a[l]·x[4k + l] + b·y[4k + l] for l < nl and k < n =
// len(dst)/nl: Comb4 for the first nl < 4 lanes, written compact (the coefficient adjoints of
// the last group of d mod 4 Bernstein coordinates). 1 ≤ nl ≤ 3, len(dst) a multiple of nl,
// len(a) ≥ nl, len(x) = len(y) ≥ 4n − (4 − nl). The assembly covers nl = 2 (fused, so rounding
// may differ from the Go loop in the last bit), the Go loop the others. Cost: 2 flops per
// element.
func CombCompact(dst []float64, nl int, a []float64, b float64, x, y []float64) {
	n := 0
	if nl >= 1 {
		n = len(dst) / nl
	}
	if nl < 1 || nl > 3 || len(dst)%nl != 0 || len(a) < nl || len(x) != len(y) || (n > 0 && len(x) < 4*n-(4-nl)) {
		panic(fmt.Sprintf("kernel: CombCompact: len(dst)=%d, nl=%d, len(a)=%d, len(x)=%d, len(y)=%d", len(dst), nl, len(a), len(x), len(y)))
	}
	if n == 0 {
		return
	}
	combCompact(dst, nl, a[:nl:nl], b, x, y)
}

// spreadGo is Spread in pure Go.
func spreadGo(dst, src []float64, nl int) {
	for k := range len(src) / nl {
		copy(dst[4*k:4*k+nl], src[nl*k:nl*k+nl])
	}
}

// combCompactGo is CombCompact in pure Go.
func combCompactGo(dst []float64, nl int, a []float64, b float64, x, y []float64) {
	for k := range len(dst) / nl {
		for l := range nl {
			dst[nl*k+l] = a[l]*x[4*k+l] + b*y[4*k+l]
		}
	}
}
