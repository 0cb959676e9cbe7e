package flow

import (
	"math"
	"runtime"
	"testing"

	"github.com/vigo-bayes/vigo/internal/kernel"
)

func BenchmarkTmpParts(b *testing.B) {
	r := newRand(9)
	E := randVec(r, 500, 1)
	D := make([]float64, 500)
	X := make([]float64, 500)
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, n := threadCPU(), 0
			for b.Loop() {
				f()
				n++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
		})
	}
	run("mathexp", func() {
		for i, x := range E {
			X[i] = math.Exp(-math.Abs(x))
		}
	})
	run("kexp", func() {
		for i, x := range E {
			X[i] = -math.Abs(x)
		}
		kernel.Exp(X, X)
	})
	run("klog1p", func() { kernel.Log1p(D, X) })
	run("mathlog1p", func() {
		for i, x := range X {
			D[i] = math.Log1p(x)
		}
	})
	p := newBernPoly(50, BoundedTails)
	ws := make([]float64, 6*51)
	p.prep(ws, E[:51])
	dz, dl := make([]float64, 51), make([]float64, 51)
	run("at10", func() {
		for j := range 10 {
			p.at(ws, 0.1*float64(j)-0.5, dz, dl)
		}
	})
}
