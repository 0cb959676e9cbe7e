package bfvi_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
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
// linear), fit's default bernstein structure's step and the full-rank step on the per-draw and the batched path of objective.Estimator
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
		// fit's default bernstein structure (degree 20, MADE 2 × 10 tanh, linear tails).
		{"bernstein_fit", family.NewFlow(flow.NewBernsteinAR(nn.NewMADE(D, []int{10, 10}, 21), flow.BernsteinTails(flow.LinearTails))), objective.Options{}},
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

// BenchmarkELBOStepRatio measures, in one process and interleaved, the ELBO gradient step of
// the BF-VI flows and of the full-rank Gaussian on eight schools and on the standard normal
// (family cost only; D = 10, S = 10 draws, the batched path of objective.Estimator): rounds of every case one after the other, each round
// timing n steps of a case by the thread's CPU time, so that a change of the machine's load
// falls on all cases alike (thread CPU time from clock_gettime on Linux). It reports each case's median over the rounds (…-ns/step) and
// the medians of the per-round ratios of the BF-VI step to fit's default full-rank step (STL)
// and to the plain one, per target. The cases: bernstein_paper is BenchmarkELBOStepPath's flow (M = 50
// coefficients, MADE 2 × 10 linear, bounded tails), bernstein_fit fit's default bernstein
// structure (degree 20, MADE 2 × 10 tanh, linear tails), each also on the per-draw path
// ("_perdraw"). The campaign runs once whatever b.N is:
//
//	go test ./x/bfvi -run XXX -bench ELBOStepRatio -benchtime 1x
func BenchmarkELBOStepRatio(b *testing.B) {
	const D, S, rounds, steps = 10, 10, 15, 200
	es := zoo.EightSchools()
	paper := func() family.Family {
		return family.NewFlow(flow.NewBernsteinAR(nn.NewMADE(D, []int{10, 10}, 50, nn.WithActivation(ad.Linear))))
	}
	fitFlow := func() family.Family {
		return family.NewFlow(flow.NewBernsteinAR(nn.NewMADE(D, []int{10, 10}, 21), flow.BernsteinTails(flow.LinearTails)))
	}
	type bcase struct {
		name string
		t    model.Target
		f    family.Family
		o    objective.Options
	}
	var cases []bcase
	for _, tg := range []struct {
		name string
		t    model.Target
	}{{"eight_schools", es}, {"stdnormal", stdNormalBatch(D)}} {
		cases = append(cases,
			bcase{tg.name + "/fullrank", tg.t, family.NewFullRank(D), objective.Options{}},
			bcase{tg.name + "/fullrank_stl", tg.t, family.NewFullRank(D), objective.Options{STL: true}},
			bcase{tg.name + "/bernstein_paper", tg.t, paper(), objective.Options{}},
			bcase{tg.name + "/bernstein_paper_perdraw", hide{tg.t}, paper(), objective.Options{}},
			bcase{tg.name + "/bernstein_fit", tg.t, fitFlow(), objective.Options{}},
			bcase{tg.name + "/bernstein_fit_perdraw", hide{tg.t}, fitFlow(), objective.Options{}},
		)
	}
	type runner struct {
		e         *objective.Estimator
		p, eps, g []float64
	}
	rs := make([]runner, len(cases))
	for i, c := range cases {
		e, err := objective.New(c.t, c.f, c.o)
		if err != nil {
			b.Fatal(err)
		}
		p := make([]float64, c.f.NumParams())
		c.f.Init(p, nil, 0.5)
		r := rand.New(rand.NewPCG(1, 2))
		eps := make([]float64, e.NoiseLen(S))
		for j := range eps {
			eps[j] = r.NormFloat64()
		}
		rs[i] = runner{e, p, eps, make([]float64, len(p))}
		e.Evaluate(p, eps, rs[i].g) // warm the tape
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	per := make([][]float64, len(cases)) // per case, the ns per step of each round
	for range rounds {
		for i := range cases {
			r := rs[i]
			t0 := threadClock()
			for range steps {
				r.e.Evaluate(r.p, r.eps, r.g)
			}
			per[i] = append(per[i], float64(threadClock()-t0)/steps)
		}
	}
	for b.Loop() {
	}
	median := func(x []float64) float64 {
		y := append([]float64(nil), x...)
		slices.Sort(y)
		n := len(y)
		return (y[(n-1)/2] + y[n/2]) / 2
	}
	ratio := func(a, c int) float64 {
		q := make([]float64, rounds)
		for k := range q {
			q[k] = per[a][k] / per[c][k]
		}
		return median(q)
	}
	for i, c := range cases {
		b.ReportMetric(median(per[i]), c.name+"-ns/step")
	}
	for i, c := range cases {
		if i%6 >= 2 { // the flows, against their target's two full-rank steps
			base := i - i%6
			b.ReportMetric(ratio(i, base+1), c.name+"/fullrank_stl")
			b.ReportMetric(ratio(i, base), c.name+"/fullrank")
		}
	}
}
