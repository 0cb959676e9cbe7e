package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// hmmExampleEntry is the zoo entry of this file's model.
func hmmExampleEntry() entry {
	return entry{
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
	}
}

// hmmExample is hmm_example. Parameters: theta1, theta2 simplex[2], mu positive_ordered[2]
// (z = (logit theta1[1], logit theta2[1], log mu1, log(mu2 − mu1))).
type hmmExample struct {
	y   []float64
	lay *model.Layout
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
	return &hmmExample{y: y, lay: mustLayout(
		model.Param{Name: "theta1", Dims: []int{2}, Constraint: bijector.Simplex(2)},
		model.Param{Name: "theta2", Dims: []int{2}, Constraint: bijector.Simplex(2)},
		model.Param{Name: "mu", Dims: []int{2}, Constraint: bijector.PositiveOrdered(2)},
	)}, nil
}

func (m *hmmExample) layout() *model.Layout { return m.lay }

// density: log N(mu1 | 3, 1) + log N(mu2 | 10, 1) + the forward-algorithm log-likelihood
// (one fused node). theta1 and theta2 are flat on the simplex.
func (m *hmmExample) density(t *ad.Tape, p []ad.Var) ad.Var {
	th1, th2, mu := p[0], p[1], p[2]
	return t.Add(density.Normal(t, mu, t.Const(3, 10), t.Const(1)), hmm2LogLik(t, m.y, th1, th2, mu))
}
