package bfvi_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/zoo"
)

// stdNormalBatch is stdNormal with a batched log density: one node for the S rows.
type stdNormalBatch int

func (s stdNormalBatch) Dim() int { return int(s) }

func (stdNormalBatch) LogDensity(t *ad.Tape, z ad.Var) ad.Var { return t.MulC(t.Dot(z, z), -0.5) }

type sqBack struct{}

// Backward: ∂(−½‖z_s‖²)/∂z_s = −z_s.
func (sqBack) Backward(c ad.Custom) {
	t := c.Tape()
	gz := t.Grad(c.Arg(0))
	if gz == nil {
		return
	}
	z := t.Value(c.Arg(0))
	g := c.Grad()
	d := len(z) / len(g)
	for s, lb := range g {
		for i, v := range z[s*d : (s+1)*d] {
			gz[s*d+i] -= lb * v
		}
	}
}

func (s stdNormalBatch) LogDensityBatch(t *ad.Tape, Z ad.Var) (ad.Var, bool) {
	z := t.Value(Z)
	d := int(s)
	S := len(z) / d
	c := t.Custom(sqBack{}, S, 0, Z)
	out := c.Value()
	for r := range S {
		a := 0.0
		for _, v := range z[r*d : (r+1)*d] {
			a += v * v
		}
		out[r] = -0.5 * a
	}
	return c.Var(), true
}

// hide hides a target's LogDensityBatch: the estimator then takes the per-draw path.
type hide struct{ model.Target }

// BenchmarkELBOStepPath is BenchmarkELBOStep's BF-VI step (M = 50, D = 10, S = 10, MADE 2 × 10
// linear) and full-rank step on the per-draw and the batched path of objective.Estimator
// (targets that implement model.BatchTarget; "perdraw" hides it), on the standard normal
// (family cost only) and eight schools; fullrank_stl is fit's default full-rank estimator
// (sticking the landing; batched through family.BatchDensityFamily). Compare ratios within one invocation:
//
//	go test ./x/bfvi -run XXX -bench ELBOStepPath -count 5
func BenchmarkELBOStepPath(b *testing.B) {
	const D, M, S = 10, 50, 10
	fams := []struct {
		name string
		f    family.Family
		o    objective.Options
	}{
		{"fullrank", family.NewFullRank(D), objective.Options{}},
		// fit's default full-rank estimator (STL).
		{"fullrank_stl", family.NewFullRank(D), objective.Options{STL: true}},
		{"bernstein_ar_linear", family.NewFlow(flow.NewBernsteinAR(nn.NewMADE(D, []int{10, 10}, M+1, nn.WithActivation(ad.Linear)))), objective.Options{}},
	}
	es := zoo.EightSchools()
	targets := []struct {
		name string
		t    model.Target
	}{
		{"stdnormal/perdraw", hide{stdNormalBatch(D)}}, {"stdnormal/batched", stdNormalBatch(D)},
		{"eight_schools/perdraw", hide{es}}, {"eight_schools/batched", es},
	}
	for _, tg := range targets {
		for _, c := range fams {
			b.Run(tg.name+"/"+c.name, func(b *testing.B) {
				e, err := objective.New(tg.t, c.f, c.o)
				if err != nil {
					b.Fatal(err)
				}
				p := make([]float64, c.f.NumParams())
				c.f.Init(p, nil, 0.5)
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
