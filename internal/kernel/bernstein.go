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
