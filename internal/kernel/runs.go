package kernel

import "fmt"

// Axpy4 sets y[p] += (a0·x[p] + a1·x[n+p]) + (a2·x[2n+p] + a3·x[3n+p]) for p < n = len(y):
// four axpys over the four consecutive runs of x in one pass over y (a layer's output block
// accumulated four inputs at a time, as nn.MADE.OutputsByDim does over its packed weights).
// len(x) must be 4·len(y). Cost: 4·len(y) multiply-adds, y read and written once.
func Axpy4(a0, a1, a2, a3 float64, x, y []float64) {
	if len(x) != 4*len(y) {
		panic(fmt.Sprintf("kernel: Axpy4: len(x)=%d, want 4·len(y)=%d", len(x), 4*len(y)))
	}
	if len(y) == 0 {
		return
	}
	axpy4(a0, a1, a2, a3, x, y)
	clearUpper()
}

// Axpy2 sets y[p] += a0·x[p] + a1·x[n+p] for p < n = len(y): Axpy4 with two runs. len(x)
// must be 2·len(y). Cost: 2·len(y) multiply-adds.
func Axpy2(a0, a1 float64, x, y []float64) {
	if len(x) != 2*len(y) {
		panic(fmt.Sprintf("kernel: Axpy2: len(x)=%d, want 2·len(y)=%d", len(x), 2*len(y)))
	}
	if len(y) == 0 {
		return
	}
	axpy2(a0, a1, x, y)
	clearUpper()
}

// ScatterAxpyDot sets dst[p·s] += a·g[p] for p < len(g) and returns Σ_p q[p]·g[p], reading g
// once: the pullback of one weight run of a layer whose weight adjoints are strided
// (nn.MADE.OutputsByDimBack: ∂W[r, p·d + j] += h_r·ḡ_j[p] and ∂h_r += ⟨w_rj, ḡ_j⟩). Each
// a·g[p] is rounded, then added to dst[p·s], as the plain loop does; the dot product's
// summation order depends on the implementation. len(q) must equal len(g), s ≥ 1 and, for
// len(g) > 0, len(dst) > (len(g)−1)·s. Cost: 2·len(g) multiply-adds and len(g) strided
// read-modify-writes.
func ScatterAxpyDot(a float64, g, dst []float64, s int, q []float64) float64 {
	if len(q) != len(g) || s < 1 || (len(g) > 0 && len(dst) <= (len(g)-1)*s) {
		panic(fmt.Sprintf("kernel: ScatterAxpyDot: len(g)=%d, len(q)=%d, len(dst)=%d, s=%d", len(g), len(q), len(dst), s))
	}
	if len(g) == 0 {
		return 0
	}
	r := scatterAxpyDot(a, g, dst, s, q)
	clearUpper()
	return r
}

// axpy4Go is Axpy4 in pure Go.
func axpy4Go(a0, a1, a2, a3 float64, x, y []float64) {
	n := len(y)
	x0, x1, x2, x3 := x[:n], x[n:2*n], x[2*n:3*n], x[3*n:4*n]
	for p := range y {
		y[p] += (a0*x0[p] + a1*x1[p]) + (a2*x2[p] + a3*x3[p])
	}
}

// axpy2Go is Axpy2 in pure Go.
func axpy2Go(a0, a1 float64, x, y []float64) {
	n := len(y)
	x0, x1 := x[:n], x[n:2*n]
	for p := range y {
		y[p] += a0*x0[p] + a1*x1[p]
	}
}

// scatterAxpyDotGo is ScatterAxpyDot in pure Go (two accumulators for the dot product).
func scatterAxpyDotGo(a float64, g, dst []float64, s int, q []float64) float64 {
	if len(g) == 0 {
		return 0
	}
	dst, q = dst[:(len(g)-1)*s+1], q[:len(g)]
	var s0, s1 float64
	p := 0
	for ; p+1 < len(g); p += 2 {
		v0, v1 := g[p], g[p+1]
		dst[p*s] += a * v0
		dst[(p+1)*s] += a * v1
		s0 += q[p] * v0
		s1 += q[p+1] * v1
	}
	if p < len(g) {
		dst[p*s] += a * g[p]
		s0 += q[p] * g[p]
	}
	return s0 + s1
}

// ScatterAxpyDot4 is ScatterAxpyDot for four runs at once into four adjacent strided
// columns: with n = len(g)/4 and the runs g_i = g[i·n : (i+1)·n], it sets
// dst[p·s + i] += a·g_i[p] for i < 4, p < n and returns Σ_i Σ_p q[o[i] + p]·g_i[p]. This is
// the pullback of four dimensions j..j+3 that see the same weight row in nn.MADE's output
// layer (G's rows j..j+3 are the runs, dst the row's adjoint from column j). The assembly
// transposes 4 × 4 blocks in registers so that each dst[p·s : p·s+4] takes one vector
// read-modify-write. The products and sums into dst are rounded as in ScatterAxpyDot; the
// dot product's summation order depends on the implementation. len(g) must be a multiple
// of 4, s ≥ 4, len(dst) > (n−1)·s + 3 for n > 0, and 0 ≤ o[i] ≤ len(q) − n. Cost: 8n
// multiply-adds.
func ScatterAxpyDot4(a float64, g, dst []float64, s int, q []float64, o [4]int) float64 {
	n := len(g) / 4
	bad := len(g)%4 != 0 || s < 4 || (n > 0 && len(dst) <= (n-1)*s+3)
	for _, oi := range o {
		bad = bad || oi < 0 || oi > len(q)-n
	}
	if bad {
		panic(fmt.Sprintf("kernel: ScatterAxpyDot4: len(g)=%d, len(dst)=%d, s=%d, len(q)=%d, o=%v", len(g), len(dst), s, len(q), o))
	}
	if n == 0 {
		return 0
	}
	r := scatterAxpyDot4(a, g, dst, s, q, o)
	clearUpper()
	return r
}

// scatterAxpyDot4Go is ScatterAxpyDot4 in pure Go.
func scatterAxpyDot4Go(a float64, g, dst []float64, s int, q []float64, o [4]int) float64 {
	n := len(g) / 4
	if n == 0 {
		return 0
	}
	var t float64
	for i := range 4 {
		t += scatterAxpyDotGo(a, g[i*n:(i+1)*n], dst[i:], s, q[o[i]:o[i]+n])
	}
	return t
}
