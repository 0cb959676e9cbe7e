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
			Name:      "low_dim_gauss_mix",
			Posterior: "low_dim_gauss_mix-low_dim_gauss_mix",
			Data:      "low_dim_gauss_mix",
			Description: "Two-component normal mixture on N = 1000 simulated points: y_n ~ theta·N(mu1, " +
				"sigma1) + (1 − theta)·N(mu2, sigma2) with mu ordered (mu1 < mu2), mu ~ N(0, 2), sigma " +
				"~ half-N(0, 2), theta ~ Beta(5, 5). 5 parameters; well separated components, close " +
				"to Gaussian.",
		},
		build: newLowDimGaussMix,
	})
}

// lowDimGaussMix is low_dim_gauss_mix: z = (ordered-free mu[1..2], log sigma[1..2],
// logit theta); reported: mu[1..2], sigma[1..2], theta.
type lowDimGaussMix struct {
	y     []float64
	mu    bijector.Bijector
	sigma bijector.Bijector
	theta bijector.Bijector
}

func newLowDimGaussMix(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	y, err := d.Vector("y", n)
	if err != nil {
		return nil, err
	}
	return &lowDimGaussMix{y: y, mu: bijector.Ordered(2), sigma: bijector.Lower(2, 0), theta: bijector.Interval(1, 0, 1)}, nil
}

func (m *lowDimGaussMix) dim() int { return 5 }
func (m *lowDimGaussMix) names() []string {
	return []string{"mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "theta"}
}
func (m *lowDimGaussMix) params() []Param {
	return []Param{{"mu", 2, 2, "ordered"}, {"sigma", 2, 2, "lower=0"}, {"theta", 1, 1, "lower=0, upper=1"}}
}

// logDensity: Σ log N(sigma | 0, 2) + Σ log N(mu | 0, 2) + log Beta(theta | 5, 5) +
// Σ_n log[theta N(y_n | mu1, sigma1) + (1 − theta) N(y_n | mu2, sigma2)] (one fused node)
// [+ log-Jacobians of the ordered, lower and interval transforms].
func (m *lowDimGaussMix) logDensity(t *ad.Tape, z ad.Var, jacobian bool) ad.Var {
	mu, ljm := m.mu.Forward(t, t.Slice(z, 0, 2))
	sigma, ljs := m.sigma.Forward(t, t.Slice(z, 2, 4))
	theta, ljt := m.theta.Forward(t, t.Index(z, 4))
	zero, two := t.Const(0), t.Const(2)
	lp := t.Add(tmpNormal(t, sigma, zero, two), tmpNormal(t, mu, zero, two))
	lp = t.Add(lp, t.Add(tmpBeta(t, theta, 5, 5), normalMix2LogLik(t, m.y, mu, sigma, theta)))
	if jacobian {
		lp = t.Add(lp, t.Add(ljm, t.Add(ljs, ljt)))
	}
	return lp
}

func (m *lowDimGaussMix) constrain(dst, z []float64) {
	m.mu.Constrain(z[0:2], dst[0:2])
	m.sigma.Constrain(z[2:4], dst[2:4])
	m.theta.Constrain(z[4:5], dst[4:5])
}

func (m *lowDimGaussMix) unconstrain(dst, x []float64) error {
	if err := m.mu.Free(x[0:2], dst[0:2]); err != nil {
		return fmt.Errorf("mu: %w", err)
	}
	if err := m.sigma.Free(x[2:4], dst[2:4]); err != nil {
		return fmt.Errorf("sigma: %w", err)
	}
	if err := m.theta.Free(x[4:5], dst[4:5]); err != nil {
		return fmt.Errorf("theta: %w", err)
	}
	return nil
}
