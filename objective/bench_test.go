package objective

import (
	"fmt"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/zoo"
)

// stdNormal is log p(z) = −½‖z‖², the cheapest target: the benchmark measures the family and
// estimator overhead.
type stdNormal int

func (s stdNormal) Dim() int { return int(s) }

func (stdNormal) LogDensity(t *ad.Tape, z ad.Var) ad.Var { return t.MulC(t.Dot(z, z), -0.5) }

func BenchmarkEvaluate(b *testing.B) {
	for _, c := range []struct {
		f family.Family
		o Options
	}{
		{family.NewMeanField(100), Options{}},
		{family.NewMeanField(100), Options{K: 10, STL: true}},
		{family.NewFullRank(50), Options{}},
		{family.NewFullRank(50), Options{STL: true}},
		{family.NewLowRank(100, 5), Options{}},
	} {
		b.Run(fmt.Sprintf("%T/d=%d/%+v", c.f, c.f.Dim(), c.o), func(b *testing.B) {
			e, err := New(stdNormal(c.f.Dim()), c.f, c.o)
			if err != nil {
				b.Fatal(err)
			}
			p := make([]float64, c.f.NumParams())
			c.f.Init(p, nil, 0.5)
			eps := randNormal(rng.New(1, 0), e.NoiseLen(10/e.K()))
			g := make([]float64, len(p))
			b.ReportAllocs()
			for b.Loop() {
				e.Evaluate(p, eps, g)
			}
		})
	}
}

// BenchmarkSTLFlowStep times one Evaluate (value and gradient, S = 12 draws) of the STL
// gradient of fit's default flow structures on eight schools (D = 10), with log q's score at
// the draws from DrawScore (what fit uses) against LogDensity at the draws (the flow inverted
// on the tape, the path before family.DrawScorer), and the plain ELBO gradient for scale.
// Parameters at Init plus N(0, 0.1²) noise.
func BenchmarkSTLFlowStep(b *testing.B) {
	tg := zoo.EightSchools()
	D := tg.Dim()
	made := func(hidden []int, k int) *nn.MADE { return nn.NewMADE(D, hidden, k, nn.WithDirect()) }
	fams := []struct {
		name string
		f    family.Family
	}{
		{"maf", family.NewFlow(flow.NewMAFStack(D, 2, []int{32, 32}, []nn.MADEOption{nn.WithDirect()}))},
		{"bernstein", family.NewFlow(flow.Compose(flow.NewBernsteinAR(made([]int{10, 10}, 21), flow.BernsteinTails(flow.LinearTails)),
			flow.NewMAF(made([]int{32, 32}, 2))))},
		{"realnvp", family.NewFlow(flow.NewRealNVP(D, 4, []int{32, 32}))},
	}
	for _, c := range fams {
		p := randParams(c.f, rng.New(36, 0), 0.1)
		for _, path := range []string{"drawscore", "inverse", "plain"} {
			b.Run(c.name+"/"+path, func(b *testing.B) {
				var q Family = c.f
				o := Options{STL: true}
				switch path {
				case "inverse":
					q = noScore{c.f}
				case "plain":
					o = Options{}
				}
				e, err := New(perDraw{tg}, q, o)
				if err != nil {
					b.Fatal(err)
				}
				eps := randNormal(rng.New(1, 0), e.NoiseLen(12))
				g := make([]float64, len(p))
				b.ReportAllocs()
				for b.Loop() {
					e.Evaluate(p, eps, g)
				}
			})
		}
	}
}
