package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
)

func init() {
	register(entry{
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
	})
}

// eightSchools is posteriordb's eight_schools_noncentered. z = (theta_trans[1..8], mu,
// log tau); reported: theta[1..8], mu, tau.
type eightSchools struct {
	y, sigma []float64
	tau      bijector.Bijector
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
	return &eightSchools{y: y, sigma: sigma, tau: bijector.Lower(1, 0)}, nil
}

func (m *eightSchools) dim() int { return 10 }

func (m *eightSchools) names() []string {
	return append(flatNames("theta", 8, false), "mu", "tau")
}

func (m *eightSchools) params() []Param {
	return []Param{{"theta_trans", 8, 8, ""}, {"mu", 1, 1, ""}, {"tau", 1, 1, "lower=0"}}
}

// logDensity: Σ log N(theta_trans | 0, 1) + Σ log N(y | mu + tau·theta_trans, sigma) +
// log N(mu | 0, 5) + log Cauchy(tau | 0, 5) [+ log tau].
func (m *eightSchools) logDensity(t *ad.Tape, z ad.Var, jacobian bool) ad.Var {
	tt, mu := t.Slice(z, 0, 8), t.Index(z, 8)
	tau, lj := m.tau.Forward(t, t.Index(z, 9))
	theta := t.Add(mu, t.Mul(tau, tt))
	zero, one, five := t.Const(0), t.Const(1), t.Const(5)
	lp := t.Add(tmpNormal(t, tt, zero, one), tmpNormal(t, t.ConstRef(m.y), theta, t.ConstRef(m.sigma)))
	lp = t.Add(lp, t.Add(tmpNormal(t, mu, zero, five), tmpCauchy(t, tau, zero, five)))
	if jacobian {
		lp = t.Add(lp, lj)
	}
	return lp
}

func (m *eightSchools) constrain(dst, z []float64) {
	var tau [1]float64
	m.tau.Constrain(z[9:10], tau[:])
	mu := z[8]
	for j := range 8 {
		dst[j] = mu + tau[0]*z[j]
	}
	dst[8], dst[9] = mu, tau[0]
}

func (m *eightSchools) unconstrain(dst, x []float64) error {
	mu, tau := x[8], x[9]
	if err := m.tau.Free(x[9:10], dst[9:10]); err != nil {
		return fmt.Errorf("tau: %w", err)
	}
	for j := range 8 {
		dst[j] = (x[j] - mu) / tau
	}
	dst[8] = mu
	return nil
}
