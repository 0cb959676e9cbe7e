package zoo

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// lowDimGaussMixEntry is the zoo entry of this file's model.
func lowDimGaussMixEntry() entry {
	return entry{
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
	}
}

// lowDimGaussMix is low_dim_gauss_mix. Parameters: mu ordered[2], sigma[2] > 0,
// 0 < theta < 1 (z = (mu1, log(mu2 − mu1), log sigma, logit theta)).
type lowDimGaussMix struct {
	y   []float64
	lay *model.Layout
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
	return &lowDimGaussMix{y: y, lay: mustLayout(
		model.Param{Name: "mu", Dims: []int{2}, Constraint: bijector.Ordered(2)},
		model.Param{Name: "sigma", Dims: []int{2}, Constraint: bijector.Lower(2, 0)},
		model.Param{Name: "theta", Constraint: bijector.Interval(1, 0, 1)},
	)}, nil
}

func (m *lowDimGaussMix) layout() *model.Layout { return m.lay }

// density: Σ log N(sigma | 0, 2) + Σ log N(mu | 0, 2) + log Beta(theta | 5, 5) +
// Σ_n log[theta N(y_n | mu1, sigma1) + (1 − theta) N(y_n | mu2, sigma2)] (one fused node).
func (m *lowDimGaussMix) density(t *ad.Tape, p []ad.Var) ad.Var {
	mu, sigma, theta := p[0], p[1], p[2]
	zero, two := t.Const(0), t.Const(2)
	lp := t.Add(density.Normal(t, sigma, zero, two), density.Normal(t, mu, zero, two))
	five := t.Const(5)
	return t.Add(lp, t.Add(density.Beta(t, theta, five, five), normalMix2LogLik(t, m.y, mu, sigma, theta)))
}
