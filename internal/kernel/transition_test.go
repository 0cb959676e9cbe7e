package kernel

import (
	"math"
	"testing"
)

// BenchmarkScalarAfterExp times a scalar loop (SSE code: adds, a square root and a
// multiplication per element) right after a short vectorised Exp, as a flow's per-draw code
// runs after a kernel call. In a GOEXPERIMENT=simd build, AVX code that leaves the upper
// halves of the vector registers dirty can slow the SSE code that follows (false
// dependencies on the upper bits, or AVX–SSE transition penalties); the kernels clear them
// (VZEROUPPER) before returning. BenchmarkScalarAlone is the same loop without the Exp call.
func BenchmarkScalarAfterExp(b *testing.B) {
	x, d := benchArgs(-5, 5)
	acc := make([]float64, 4096)
	benchCPU(b, func() {
		Exp(d[:8], x[:8])
		scalarLoop(acc, d[0])
	})
}

func BenchmarkScalarAlone(b *testing.B) {
	_, d := benchArgs(-5, 5)
	acc := make([]float64, 4096)
	benchCPU(b, func() {
		expGo(d[:8], d[:8])
		scalarLoop(acc, d[0])
	})
}

func scalarLoop(acc []float64, v float64) {
	for i := range acc {
		acc[i] = math.Sqrt(acc[i]*0.5+v) + float64(i)
	}
}
