package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
)

func init() {
	register(entry{
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
	})
}

// garch is garch11: z = (mu, log alpha0, logit alpha1, u) with beta1 = (1 − alpha1)·σ(u),
// alpha1 transformed first (MODELS.md §4). Reported: mu, alpha0, alpha1, beta1.
type garch struct {
	y      []float64
	sigma1 float64
	alpha0 bijector.Bijector
	alpha1 bijector.Bijector
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
	return &garch{y: y, sigma1: s1, alpha0: bijector.Lower(1, 0), alpha1: bijector.Interval(1, 0, 1)}, nil
}

func (m *garch) dim() int        { return 4 }
func (m *garch) names() []string { return []string{"mu", "alpha0", "alpha1", "beta1"} }
func (m *garch) params() []Param {
	return []Param{{"mu", 1, 1, ""}, {"alpha0", 1, 1, "lower=0"}, {"alpha1", 1, 1, "lower=0, upper=1"},
		{"beta1", 1, 1, "lower=0, upper=1-alpha1"}}
}

// logDensity: Σ_t log N(y_t | mu, s_t) (one fused node carrying the volatility recursion)
// [+ log-Jacobians of alpha0, alpha1 and beta1 | alpha1]. The priors are flat.
func (m *garch) logDensity(t *ad.Tape, z ad.Var, jacobian bool) ad.Var {
	mu := t.Index(z, 0)
	a0, lj0 := m.alpha0.Forward(t, t.Index(z, 1))
	a1, lj1 := m.alpha1.Forward(t, t.Index(z, 2))
	b1, lj2 := bijector.VarInterval(t, t.Index(z, 3), t.Const(0), t.AddC(t.Neg(a1), 1))
	lp := garchLogLik(t, m.y, m.sigma1, mu, a0, a1, b1)
	if jacobian {
		lp = t.Add(lp, t.Add(lj0, t.Add(lj1, lj2)))
	}
	return lp
}

func (m *garch) constrain(dst, z []float64) {
	dst[0] = z[0]
	m.alpha0.Constrain(z[1:2], dst[1:2])
	m.alpha1.Constrain(z[2:3], dst[2:3])
	bijector.VarIntervalConstrain(z[3:4], []float64{0}, []float64{1 - dst[2]}, dst[3:4])
}

func (m *garch) unconstrain(dst, x []float64) error {
	if math.IsNaN(x[0]) || math.IsInf(x[0], 0) {
		return fmt.Errorf("mu = %g, want finite", x[0])
	}
	dst[0] = x[0]
	if err := m.alpha0.Free(x[1:2], dst[1:2]); err != nil {
		return fmt.Errorf("alpha0: %w", err)
	}
	if err := m.alpha1.Free(x[2:3], dst[2:3]); err != nil {
		return fmt.Errorf("alpha1: %w", err)
	}
	if err := bijector.VarIntervalFree(x[3:4], []float64{0}, []float64{1 - x[2]}, dst[3:4]); err != nil {
		return fmt.Errorf("beta1: %w", err)
	}
	return nil
}
