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
			Name:      "hmm_example",
			Posterior: "hmm_example-hmm_example",
			Data:      "hmm_example",
			Description: "Two-state Gaussian hidden Markov model on N = 100 simulated points: " +
				"transition rows theta1, theta2 (uniform on the simplex), emission N(y_t | mu_k, 1) with " +
				"mu positive-ordered, mu1 ~ N(3, 1), mu2 ~ N(10, 1); the likelihood marginalises the " +
				"states by the forward algorithm. 6 reported values (4 free coordinates); theta1 is " +
				"wide and skewed.",
		},
		build: newHMMExample,
	})
}

// hmmExample is hmm_example: z = (simplex-free theta1, simplex-free theta2,
// positive-ordered-free mu[1..2]); reported: theta1[1..2], theta2[1..2], mu[1..2].
type hmmExample struct {
	y       []float64
	simplex bijector.Bijector
	mu      bijector.Bijector
}

func newHMMExample(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	k, err := d.Int("K")
	if err != nil {
		return nil, err
	}
	if k != 2 {
		return nil, fmt.Errorf("data %s: field \"K\": %d states, want 2 (hmm_example has two transition rows)", d.Name, k)
	}
	y, err := d.Vector("y", n)
	if err != nil {
		return nil, err
	}
	return &hmmExample{y: y, simplex: bijector.Simplex(2), mu: bijector.PositiveOrdered(2)}, nil
}

func (m *hmmExample) dim() int { return 4 }
func (m *hmmExample) names() []string {
	return []string{"theta1[1]", "theta1[2]", "theta2[1]", "theta2[2]", "mu[1]", "mu[2]"}
}
func (m *hmmExample) params() []Param {
	return []Param{{"theta1", 2, 1, "simplex"}, {"theta2", 2, 1, "simplex"}, {"mu", 2, 2, "positive_ordered"}}
}

// logDensity: log N(mu1 | 3, 1) + log N(mu2 | 10, 1) + the forward-algorithm log-likelihood
// (one fused node) [+ log-Jacobians of the two simplex and the positive-ordered transforms].
// theta1 and theta2 are flat on the simplex.
func (m *hmmExample) logDensity(t *ad.Tape, z ad.Var, jacobian bool) ad.Var {
	th1, lj1 := m.simplex.Forward(t, t.Index(z, 0))
	th2, lj2 := m.simplex.Forward(t, t.Index(z, 1))
	mu, ljm := m.mu.Forward(t, t.Slice(z, 2, 4))
	lp := t.Add(tmpNormal(t, mu, t.Const(3, 10), t.Const(1)), hmm2LogLik(t, m.y, th1, th2, mu))
	if jacobian {
		lp = t.Add(lp, t.Add(lj1, t.Add(lj2, ljm)))
	}
	return lp
}

func (m *hmmExample) constrain(dst, z []float64) {
	m.simplex.Constrain(z[0:1], dst[0:2])
	m.simplex.Constrain(z[1:2], dst[2:4])
	m.mu.Constrain(z[2:4], dst[4:6])
}

func (m *hmmExample) unconstrain(dst, x []float64) error {
	if err := m.simplex.Free(x[0:2], dst[0:1]); err != nil {
		return fmt.Errorf("theta1: %w", err)
	}
	if err := m.simplex.Free(x[2:4], dst[1:2]); err != nil {
		return fmt.Errorf("theta2: %w", err)
	}
	if err := m.mu.Free(x[4:6], dst[2:4]); err != nil {
		return fmt.Errorf("mu: %w", err)
	}
	return nil
}
