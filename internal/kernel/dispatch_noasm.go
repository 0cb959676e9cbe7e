//go:build !amd64 || purego || goexperiment.simd

package kernel

// The MADE output-layer and interleaving kernels run their pure-Go loops in every build without
// the assembly of asm_amd64.go: other architectures, -tags purego, and GOEXPERIMENT=simd (whose
// archsimd code has no versions of them).

func axpy4(a0, a1, a2, a3 float64, x, y []float64) { axpy4Go(a0, a1, a2, a3, x, y) }
func axpy2(a0, a1 float64, x, y []float64)         { axpy2Go(a0, a1, x, y) }
func interleave4(dst, src []float64, s, n int) int { return interleave4Go(dst, src, s, n) }
func deinterleave4(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int {
	return deinterleave4Go(dst, s, a, b, x, y, n)
}
func scatterAxpyDot(a float64, g, dst []float64, s int, q []float64) float64 {
	return scatterAxpyDotGo(a, g, dst, s, q)
}
func scatterAxpyDot4(a float64, g, dst []float64, s int, q []float64, o [4]int) float64 {
	return scatterAxpyDot4Go(a, g, dst, s, q, o)
}
func gemmNN(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	gemmNNGo(add, n, k, m, A, lda, B, ldb, C, ldc)
}
func gemmNT(add bool, n, k, m int, A []float64, lda int, B []float64, ldb int, C []float64, ldc int) {
	gemmNTGo(add, n, k, m, A, lda, B, ldb, C, ldc)
}
func comb4(dst, a []float64, b float64, x, y []float64)     { comb4Go(dst, a, b, x, y) }
func bernBasis4(n int, up, xy, start, tmp, b []float64)     { bernBasis4Go(n, up, xy, start, tmp, b) }
func logv(dst, x []float64)                                 { logGo(dst, x) }
func gather4(dst, src []float64, s int, lane []float64)     { gather4Go(dst, src, s, lane) }
func scatter4Add(dst []float64, s int, src, lane []float64) { scatter4AddGo(dst, s, src, lane) }
func spread(dst, src []float64, nl int)                     { spreadGo(dst, src, nl) }
func combCompact(dst []float64, nl int, a []float64, b float64, x, y []float64) {
	combCompactGo(dst, nl, a, b, x, y)
}
func tanhv(dst, x []float64) { tanhGo(dst, x) }
