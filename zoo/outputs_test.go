package zoo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
)

// TestOutputs: every model's declaration passes model.Model.Check, its columns are the
// parameters then the derived quantities, and the reported quantities are columns of Row.
func TestOutputs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			mm := f.m.Model()
			if err := mm.Check(); err != nil {
				t.Fatal(err)
			}
			cols := mm.Columns()
			if lay := f.m.Layout().Names(); !slices.Equal(cols[:len(lay)], lay) || len(cols) != len(lay)+len(mm.DerivedNames()) {
				t.Fatalf("columns %v, layout %v, derived %v", cols, lay, mm.DerivedNames())
			}
			z := make([]float64, f.m.Dim())
			for i := range z {
				z[i] = 0.3 * r.NormFloat64()
			}
			row := mm.Row(nil, z)
			ref := f.m.Constrain(nil, z)
			for k, n := range f.m.Names() {
				i := slices.Index(cols, n)
				if i < 0 || math.Float64bits(row[i]) != math.Float64bits(ref[k]) {
					t.Errorf("reported %s = %v, column %d of Row", n, ref[k], i)
				}
			}
		})
	}
	if got := EightSchools().Model().DerivedNames(); !slices.Equal(got, flatNames("theta", 8)) {
		t.Errorf("eight_schools derived %v", got)
	}
}

// TestLogLik: Σ_n LogLik_n + log prior = Density, and with the Jacobian
// LogDensity − log J, at random points, for eight schools (prior written out here) and every
// regression of the glm shape (prior from the model's own prior, likelihood from the
// pointwise hook, not from the GLM kernel the density uses).
func TestLogLik(t *testing.T) {
	names := []string{"eight_schools"}
	for _, n := range Names() {
		f := load(t, n)
		if _, ok := f.m.impl.(*glm); ok {
			names = append(names, n)
		}
	}
	if len(names) < 5 {
		t.Fatalf("only %v have a log-likelihood", names)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			f := load(t, name)
			mm := f.m.Model()
			if mm.NumObs < 1 {
				t.Fatalf("NumObs = %d", mm.NumObs)
			}
			lay := mm.Layout
			for range 3 {
				z := make([]float64, lay.Dim())
				for i := range z {
					z[i] = 0.2 * r.NormFloat64()
				}
				if name != "eight_schools" {
					// Start at a reference draw so that the regressions' likelihoods are of
					// moderate size; perturb it.
					z0, err := f.m.Unconstrain(nil, f.draw(t, 0, 0))
					if err != nil {
						t.Fatal(err)
					}
					for i := range z {
						z[i] += z0[i]
					}
				}
				ll, err := mm.PointwiseLogLik(nil, z)
				if err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for _, v := range ll {
					sum += v
				}
				var tp ad.Tape
				p := make([]ad.Var, lay.NumParams())
				logJ := tp.Float(lay.Constrain(&tp, tp.Const(z...), p))
				var prior float64
				if g, ok := f.m.impl.(*glm); ok {
					if g.prior != nil {
						a, b, s := g.split(&tp, p)
						prior = tp.Float(g.prior(&tp, a, b, s))
					}
				} else {
					zero, one, five := tp.Const(0), tp.Const(1), tp.Const(5)
					prior = tp.Float(tp.Add(tp.Add(density.Normal(&tp, p[0], zero, one), density.Normal(&tp, p[1], zero, five)),
						density.Cauchy(&tp, p[2], zero, five)))
				}
				tp.Reset()
				noJ := tp.Float(f.m.WithJacobian(false).LogDensity(&tp, tp.Const(z...)))
				tp.Reset()
				withJ := tp.Float(f.m.LogDensity(&tp, tp.Const(z...)))
				tol := 1e-10 * math.Max(1, math.Abs(noJ))
				if d := sum + prior - noJ; math.Abs(d) > tol {
					t.Errorf("Σ log-lik %.12g + log prior %.12g − density %.12g = %.3g", sum, prior, noJ, d)
				}
				if d := sum + prior + logJ - withJ; math.Abs(d) > tol {
					t.Errorf("with the Jacobian: difference %.3g", d)
				}
			}
		})
	}
}
