package zoo

import (
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// TestLogDensityBatch: for every model with a batched form (on its fuzz seed's data, and on
// eight schools' own data), with and without the Jacobian, LogDensityBatch of S = 5 rows
// equals LogDensity row by row up to rounding — sums of the same terms in another order, so a
// few ulps of the largest term: tolerance 1e-10 relative to max(1, |value|) — in value and
// gradient, and its gradient matches finite differences (checkGrad) for a weighted sum of the
// rows. The models without one return ok = false.
func TestLogDensityBatch(t *testing.T) {
	const S, tol = 5, 1e-10
	batched := map[string]bool{"eight_schools": true, "kidiq": true, "mesquite": true, "nes": true, "sblrc": true, "earnings": true, "arK": true, "diamonds": true}
	r := rng.New(41, 0)
	ms := []*Model{EightSchools()}
	for _, n := range Names() {
		d, err := model.ParseData(n, strings.NewReader(fuzzSeeds[n]))
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(n, d)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, m0 := range ms {
		for _, jac := range []bool{true, false} {
			m := m0.WithJacobian(jac)
			D := m.Dim()
			z := make([]float64, S*D)
			for i := range z {
				z[i] = 0.5 * r.NormFloat64()
			}
			var tp ad.Tape
			zc := tp.ConstRef(z)
			n0 := tp.Len()
			_, ok := m.LogDensityBatch(&tp, zc)
			if ok != batched[m.Name] {
				t.Fatalf("%s: LogDensityBatch ok = %v, want %v", m.Name, ok, batched[m.Name])
			}
			if !ok {
				if tp.Len() != n0 {
					t.Errorf("%s: ok = false but %d nodes recorded", m.Name, tp.Len()-n0)
				}
				continue
			}
			// Value and gradient of Σ_s w_s lp_s, batched and row by row.
			w := []float64{1, -0.5, 2, 0.25, 1.5}
			sum := func(batch bool) ad.Func {
				return func(t *ad.Tape, x ad.Var) ad.Var {
					var v ad.Var
					if batch {
						v, _ = m.LogDensityBatch(t, x)
					} else {
						v = model.LogDensityRows(t, m, x)
					}
					return t.Dot(v, t.ConstRef(w))
				}
			}
			gb, gr := make([]float64, len(z)), make([]float64, len(z))
			vb := ad.Gradient(&tp, sum(true), z, gb)
			vr := ad.Gradient(&tp, sum(false), z, gr)
			if math.Abs(vb-vr) > tol*math.Max(1, math.Abs(vr)) || math.IsNaN(vb) {
				t.Errorf("%s jac=%v: batched Σ w·lp = %.17g, rows %.17g", m.Name, jac, vb, vr)
			}
			for i := range gr {
				if math.Abs(gb[i]-gr[i]) > tol*math.Max(1, math.Abs(vr)) {
					t.Errorf("%s jac=%v: ∂/∂z[%d]: batched %.17g, rows %.17g", m.Name, jac, i, gb[i], gr[i])
				}
			}
			checkGrad(t, m.Name+" batched", sum(true), z)
		}
	}
}

// TestLogDensityBatchNoAllocs: the batched forms allocate nothing in steady state (one tape
// reused), as LogDensity does.
func TestLogDensityBatchNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, n := range []string{"eight_schools", "kidiq", "diamonds", "arK"} {
		d, err := model.ParseData(n, strings.NewReader(fuzzSeeds[n]))
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(n, d)
		if err != nil {
			t.Fatal(err)
		}
		z := make([]float64, 8*m.Dim())
		var tp ad.Tape
		f := func() {
			tp.Reset()
			v, _ := m.LogDensityBatch(&tp, tp.Input(z))
			tp.Backward(tp.Sum(v))
		}
		f()
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per LogDensityBatch and backward pass", n, a)
		}
	}
}
