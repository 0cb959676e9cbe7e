package objective

import (
	"fmt"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/rng"
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
