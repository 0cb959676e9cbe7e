package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
)

// garchEntry is the zoo entry of this file's model.
func garchEntry() entry {
	return entry{
		Info: Info{
			Name:      "garch",
			Posterior: "garch-garch11",
			Data:      "garch",
			Description: "GARCH(1,1) on T = 200 simulated returns: y_t ~ N(mu, s_t), s_1 = sigma1, " +
				"s_t² = alpha0 + alpha1 (y_{t−1} − mu)² + beta1 s_{t−1}², flat priors on mu, " +
				"alpha0 > 0 and the triangle 0 < alpha1 < 1, 0 < beta1 < 1 − alpha1. 4 parameters; " +
				"beta1's bound depends on alpha1, beta1 has a long tail towards 0 and alpha0 an improper " +
				"flat prior.",
		},
		build: newGarch,
	}
}

// garch is garch11. Parameters: mu, alpha0 > 0, 0 < alpha1 < 1, 0 < beta1 < 1 − alpha1
// (z = (mu, log alpha0, logit alpha1, logit(beta1/(1 − alpha1))), alpha1 transformed first,
// MODELS.md §4).
type garch struct {
	y      []float64
	sigma1 float64
	lay    *model.Layout
}

func newGarch(d *model.Data) (impl, error) {
	tt, err := positiveCount(d, "T", 1)
	if err != nil {
		return nil, err
	}
	y, err := d.Vector("y", tt)
	if err != nil {
		return nil, err
	}
	s1, err := d.Real("sigma1")
	if err != nil {
		return nil, err
	}
	if !(s1 > 0) || math.IsInf(s1, 1) {
		return nil, fmt.Errorf("data %s: field \"sigma1\": %g, want finite and > 0", d.Name, s1)
	}
	return &garch{y: y, sigma1: s1, lay: mustLayout(
		model.Param{Name: "mu"},
		model.Param{Name: "alpha0", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "alpha1", Constraint: bijector.Interval(1, 0, 1)},
		model.Param{Name: "beta1", Bounds: &model.Bounds{ // (0, 1 − alpha1)
			Lower: []model.Affine{{Const: 0}},
			Upper: []model.Affine{{Const: 1, Terms: []model.Term{{Name: "alpha1", Coef: -1}}}},
		}},
	)}, nil
}

func (m *garch) layout() *model.Layout { return m.lay }

// density: Σ_t log N(y_t | mu, s_t), one fused node carrying the volatility recursion. The
// priors are flat.
func (m *garch) density(t *ad.Tape, p []ad.Var) ad.Var {
	return garchLogLik(t, m.y, m.sigma1, p[0], p[1], p[2], p[3])
}
