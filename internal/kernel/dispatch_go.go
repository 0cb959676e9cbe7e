//go:build !amd64 || (purego && !goexperiment.simd)

package kernel

func impl() string { return "go" }

func clearUpper() {}

func axpy(a float64, x, y []float64)             { axpyGo(a, x, y) }
func dot(x, y []float64) float64                 { return dotGo(x, y) }
func gemvN(A []float64, lda int, x, y []float64) { gemvNGo(A, lda, x, y) }
func gemvT(A []float64, lda int, x, y []float64) { gemvTGo(A, lda, x, y) }
func ger(x, y, A []float64, lda int)             { gerGo(x, y, A, lda) }
func gemvTGer(A []float64, lda int, x, w, y, B []float64) {
	gemvTGo(A, lda, x, y)
	gerGo(x, w, B, lda)
}
func expv(dst, x []float64)                        { expGo(dst, x) }
func log1pv(dst, x []float64)                      { log1pGo(dst, x) }
func softplusv(sp, sg, r []float64)                { softplusGo(sp, sg, r) }
func positiveBits(bits []uint64, y []float64)      { positiveBitsGo(bits, y) }
func reluBackBits(g, adj []float64, bits []uint64) { reluBackBitsGo(g, adj, bits) }
func reluBack(g, adj, y []float64)                 { reluBackGo(g, adj, y) }
func colSums(s, G []float64, n, m int)             { colSumsGo(s, G, n, m) }
func bernoulliLogit(eta []float64, y []int) (lp, sum float64, ok bool) {
	return bernoulliLogitGo(eta, y)
}
func dense(Y, X []float64, n, k int, W []float64, m int, b []float64, relu bool) {
	denseGo(Y, X, n, k, W, m, b, relu)
}
func denseBackW(Wadj, X []float64, n, k int, G []float64, m int) {
	denseBackWGo(Wadj, X, n, k, G, m)
}
func denseBackX(Xadj []float64, n, k int, G []float64, m int, W []float64) {
	denseBackXGo(Xadj, n, k, G, m, W)
}
func axpy4(a0, a1, a2, a3 float64, x, y []float64) { axpy4Go(a0, a1, a2, a3, x, y) }
func axpy2(a0, a1 float64, x, y []float64)         { axpy2Go(a0, a1, x, y) }
func bernElev4(m int, xy, b2, tds, b1, dzdl, res []float64) {
	bernElev4Go(m, xy, b2, tds, b1, dzdl, res)
}
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
