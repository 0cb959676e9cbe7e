package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// eightSchoolsEntry is the zoo entry of this file's model.
func eightSchoolsEntry() entry {
	return entry{
		Info: Info{
			Name:      "eight_schools",
			Posterior: "eight_schools-eight_schools_noncentered",
			Data:      "eight_schools",
			Description: "Eight schools (Rubin 1981; BDA3 §5.5), non-centred: coaching effects " +
				"theta_j = mu + tau·theta_trans_j with theta_trans ~ N(0, 1), y_j ~ N(theta_j, sigma_j), " +
				"mu ~ N(0, 5), tau ~ half-Cauchy(0, 5). 10 parameters. A hierarchical funnel: tau has " +
				"mass near 0 and a heavy right tail.",
		},
		build: newEightSchools,
	}
}

// eightSchools is posteriordb's eight_schools_noncentered. Parameters: theta_trans[1..8],
// mu, tau > 0 (z = (theta_trans, mu, log tau)); reported: theta[1..8] = mu + tau·theta_trans,
// mu, tau.
type eightSchools struct {
	y, sigma []float64
	lay      *model.Layout
}

func newEightSchools(d *model.Data) (impl, error) {
	j, err := d.Int("J")
	if err != nil {
		return nil, err
	}
	if j != 8 {
		return nil, fmt.Errorf("data %s: field \"J\": %d schools, want 8 (eight_schools_noncentered)", d.Name, j)
	}
	y, err := d.Vector("y", j)
	if err != nil {
		return nil, err
	}
	sigma, err := d.Vector("sigma", j)
	if err != nil {
		return nil, err
	}
	for i, s := range sigma {
		if !(s > 0) {
			return nil, fmt.Errorf("data %s: field \"sigma[%d]\": %g, want > 0", d.Name, i+1, s)
		}
	}
	return &eightSchools{y: y, sigma: sigma, lay: mustLayout(
		model.Param{Name: "theta_trans", Dims: []int{8}},
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
	)}, nil
}

func (m *eightSchools) layout() *model.Layout { return m.lay }

// density: Σ log N(theta_trans | 0, 1) + Σ log N(y | mu + tau·theta_trans, sigma) +
// log N(mu | 0, 5) + log Cauchy(tau | 0, 5).
func (m *eightSchools) density(t *ad.Tape, p []ad.Var) ad.Var {
	tt, mu, tau := p[0], p[1], p[2]
	theta := t.Add(mu, t.Mul(tau, tt))
	zero, one, five := t.Const(0), t.Const(1), t.Const(5)
	lp := t.Add(density.Normal(t, tt, zero, one), density.Normal(t, t.ConstRef(m.y), theta, t.ConstRef(m.sigma)))
	return t.Add(lp, t.Add(density.Normal(t, mu, zero, five), density.Cauchy(t, tau, zero, five)))
}

func (m *eightSchools) derived() []model.Quantity {
	return []model.Quantity{{Name: "theta", Dims: []int{8}}}
}

// derive: theta = mu + tau·theta_trans (Stan's transformed parameters block).
func (m *eightSchools) derive(p, out [][]float64) {
	tt, mu, tau := p[0], p[1][0], p[2][0]
	for j, v := range tt {
		out[0][j] = mu + tau*v
	}
}

func (m *eightSchools) numObs() int { return len(m.y) }

// logLik: log N(y_j | mu + tau·theta_trans_j, sigma_j), one school per observation.
func (m *eightSchools) logLik(p [][]float64, out []float64) {
	tt, mu, tau := p[0], p[1][0], p[2][0]
	for j, v := range tt {
		out[j] = normalLogPDF(m.y[j], mu+tau*v, m.sigma[j])
	}
}

func (m *eightSchools) referenceNames() []string {
	return append(flatNames("theta", 8), "mu", "tau")
}

// freeReference: theta_trans = (theta − mu)/tau from (theta[1..8], mu, tau).
func (m *eightSchools) freeReference(dst, x []float64) error {
	mu, tau := x[8], x[9]
	if !(tau > 0) {
		return fmt.Errorf("tau = %g, want > 0", tau)
	}
	for j := range 8 {
		dst[j] = (x[j] - mu) / tau
	}
	dst[8], dst[9] = mu, tau
	return nil
}
