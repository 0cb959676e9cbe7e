package zoo

import (
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// FromModel makes any model.Model a posterior: the reported quantities may be derived ones
// (picked from Row by Constrain), Unconstrain works only when they are the parameters, and a
// name that is not a column is an error naming it.
func TestFromModel(t *testing.T) {
	lay, err := model.NewLayout(model.Param{Name: "mu"}, model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	m := &model.Model{Layout: lay,
		Density: func(tp *ad.Tape, p []ad.Var) ad.Var {
			return tp.Add(density.Normal(tp, p[0], tp.Const(0), tp.Const(1)), density.HalfNormal(tp, p[1], tp.Const(1)))
		},
		Derived: []model.Quantity{{Name: "spread"}},
		Derive:  func(p, out [][]float64) { out[0][0] = 2 * p[1][0] },
	}
	info := Info{Name: "p", Posterior: "d-p", Data: "d"}
	zm, err := FromModel(info, m, []string{"spread", "mu"})
	if err != nil {
		t.Fatal(err)
	}
	z := []float64{0.5, 0} // mu = 0.5, sigma = e⁰ = 1
	if got := zm.Constrain(nil, z); got[0] != 2 || got[1] != 0.5 {
		t.Errorf("Constrain = %v, want [2 0.5] (spread, mu)", got)
	}
	if _, err := zm.Unconstrain(nil, []float64{2, 0.5}); err == nil {
		t.Error("Unconstrain of derived quantities: no error")
	}
	own, err := FromModel(info, m, []string{"mu", "sigma"})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := own.Unconstrain(nil, []float64{0.5, 1}); err != nil || u[0] != 0.5 || u[1] != 0 {
		t.Errorf("Unconstrain(parameters) = %v, %v; want [0.5 0]", u, err)
	}
	if _, err := FromModel(info, m, []string{"nosuch"}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown reported name: %v", err)
	}
}
