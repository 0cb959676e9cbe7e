//go:build !(goexperiment.simd && amd64)

package kernel

// The kernels that run the pure-Go code in every build without the archsimd kernels: the
// default build (with or without its assembly, asm_amd64.go) and -tags purego or other
// architectures (dispatch_go.go).

func gemvN(A []float64, lda int, x, y []float64) { gemvNGo(A, lda, x, y) }
func gemvT(A []float64, lda int, x, y []float64) { gemvTGo(A, lda, x, y) }
func ger(x, y, A []float64, lda int)             { gerGo(x, y, A, lda) }
func gemvTGer(A []float64, lda int, x, w, y, B []float64) {
	gemvTGo(A, lda, x, y)
	gerGo(x, w, B, lda)
}
func log1pv(dst, x []float64)                      { log1pGo(dst, x) }
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
