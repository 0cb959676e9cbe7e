package bfvi_test

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/x/bfvi"
	"github.com/vigo-bayes/vigo/zoo"
)

// stdNormal is log p(z) = −½‖z‖², the cheapest target: a step then costs the family alone.
type stdNormal int

func (s stdNormal) Dim() int { return int(s) }

func (stdNormal) LogDensity(t *ad.Tape, z ad.Var) ad.Var { return t.MulC(t.Dot(z, z), -0.5) }

// threadCPU returns the CPU time the calling thread has used, in nanoseconds (Linux
// RUSAGE_THREAD; 0 elsewhere). On a shared machine CPU time per operation is far steadier than
// wall time, which also counts the time the thread waits for a core.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkELBOStep times one reparameterised ELBO gradient step of BF-VI at M = 50, D = 10,
// S = 10: S = 10 draws in dimension D = 10, Bernstein polynomials of degree M = 50, MADE
// conditioner 2 × 10 hidden units (its "M = 50" output layer has (M+1)·D = 510 outputs),
// against the full-rank Gaussian at the same S, on the standard normal (family cost only) and
// on eight schools (non-centred, D = 10) and on E4's NN regression (D = 10). The bar: the multivariate Bernstein step at
// most 5× the full-rank step at equal S. Besides ns/op it reports cpu-ns/op, the thread's CPU
// time per step (the estimator runs on one goroutine), which a loaded machine disturbs far
// less; run the cases in one invocation and compare ratios.
//
//	go test ./x/bfvi -run XXX -bench ELBOStep -benchtime 200x
func BenchmarkELBOStep(b *testing.B) {
	const D, M, S = 10, 50, 10
	made := func(act ad.Activation) *nn.MADE {
		return nn.NewMADE(D, []int{10, 10}, M+1, nn.WithActivation(act))
	}
	fams := []struct {
		name string
		f    objective.Family
		init func(p []float64)
	}{
		{"fullrank", family.NewFullRank(D), nil},
		{"bernstein_ar_linear", family.NewFlow(flow.NewBernsteinAR(made(ad.Linear))), nil},
		{"bernstein_ar_tanh", family.NewFlow(flow.NewBernsteinAR(made(ad.Tanh))), nil},
		{"bernstein_ar_lineartails", family.NewFlow(flow.NewBernsteinAR(made(ad.Linear), flow.BernsteinTails(flow.LinearTails))), nil},
		{"bernstein_elementwise", family.NewFlow(flow.NewBernstein(D, M)), nil},
		{"maf_10x10", family.NewFlow(flow.NewMAF(nn.NewMADE(D, []int{10, 10}, 2))), nil},
	}
	targets := []struct {
		name string
		t    model.Target
	}{{"stdnormal", stdNormal(D)}, {"eight_schools", zoo.EightSchools()}, {"nn_regression", bfvi.NNRegression{}}}
	for _, tg := range targets {
		for _, c := range fams {
			b.Run(tg.name+"/"+c.name, func(b *testing.B) {
				e, err := objective.New(tg.t, c.f, objective.Options{})
				if err != nil {
					b.Fatal(err)
				}
				p := make([]float64, c.f.NumParams())
				c.f.(family.Family).Init(p, nil, 0.5)
				r := rand.New(rand.NewPCG(1, 2))
				eps := make([]float64, e.NoiseLen(S))
				for i := range eps {
					eps[i] = r.NormFloat64()
				}
				g := make([]float64, len(p))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0, n := threadCPU(), 0
				for b.Loop() {
					e.Evaluate(p, eps, g)
					n++
				}
				b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
			})
		}
	}
}
