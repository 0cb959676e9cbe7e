//go:build !amd64 || (purego && !goexperiment.simd)

package kernel

func impl() string { return "go" }

func clearUpper() {}

func axpy(a float64, x, y []float64) { axpyGo(a, x, y) }
func dot(x, y []float64) float64     { return dotGo(x, y) }
func softplusv(sp, sg, r []float64)  { softplusGo(sp, sg, r) }
func expv(dst, x []float64)          { expGo(dst, x) }
func bernElev4(m int, xy, b2, tds, b1, dzdl, res []float64) {
	bernElev4Go(m, xy, b2, tds, b1, dzdl, res)
}
