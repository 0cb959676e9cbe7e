package flow_test

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/flow/flowtest"
	"github.com/vigo-bayes/vigo/nn"
)

// BenchmarkBernsteinARBatch times ForwardBatch and its backward pass alone (the family cost
// of a BF-VI step without the base density and the target) at the paper's shape, D = 10,
// M = 49, MADE 2 × 10 linear, S = 10 draws, and at fit's default bernstein shape (M = 20,
// tanh, linear tails, S = 8, and S = 2, the block fit evaluates at once):
//
//	go test ./flow -run XXX -bench BernsteinARBatch
func BenchmarkBernsteinARBatch(b *testing.B) {
	for _, c := range []struct {
		name string
		f    flow.Flow
		S    int
	}{
		{"paper_M49_S10", flow.NewBernsteinAR(nn.NewMADE(10, []int{10, 10}, 50, nn.WithActivation(ad.Linear))), 10},
		{"fitdefault_M20_S8", flow.NewBernsteinAR(nn.NewMADE(10, []int{10, 10}, 21), flow.BernsteinTails(flow.LinearTails)), 8},
		// fit splits a step's draws into up to four blocks, one Evaluate each: S = 2 per call.
		{"fitdefault_M20_S2", flow.NewBernsteinAR(nn.NewMADE(10, []int{10, 10}, 21), flow.BernsteinTails(flow.LinearTails)), 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newRand(40)
			d := c.f.Dim()
			p := flowtest.RandomParams(c.f, r, 0.3)
			u := flowtest.RandVec(r, c.S*d, 1)
			w := flowtest.RandVec(r, c.S*d, 1)
			v := flowtest.RandVec(r, c.S, 1)
			var tp ad.Tape
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, n := threadCPU(), 0
			for b.Loop() {
				tp.Reset()
				P := tp.Input(p)
				tp.Backward(batchObjective(&tp, c.f, P, tp.ConstRef(u), w, v))
				n++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
		})
	}
}

// threadCPU returns the CPU time the calling thread has used, in nanoseconds (Linux
// RUSAGE_THREAD; 0 elsewhere): on a shared machine far steadier than wall time.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
