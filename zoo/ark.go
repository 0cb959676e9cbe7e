package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// arKEntry is the zoo entry of this file's model.
func arKEntry() entry {
	return entry{
		Info: Info{
			Name:      "arK",
			Posterior: "arK-arK",
			Data:      "arK",
			Description: "Autoregression of order K = 5 on T = 200 simulated points: y_t ~ N(alpha + " +
				"Σ_k beta_k y_{t−k}, sigma) for t > K, alpha, beta ~ N(0, 10), sigma ~ half-Cauchy(0, " +
				"2.5). 7 parameters, close to Gaussian with correlated neighbouring coefficients.",
		},
		build: newArK,
	}
}

// newArK builds arK: z = (alpha, beta[1..K], log sigma). The lagged design (row k holds
// y_{t−k} for t = K+1…T) is built once here, feature-major, so the likelihood is one GLM node
// over the T − K modelled observations.
func newArK(d *model.Data) (impl, error) {
	k, err := positiveCount(d, "K", 1)
	if err != nil {
		return nil, err
	}
	tt, err := positiveCount(d, "T", 1)
	if err != nil {
		return nil, err
	}
	if tt <= k {
		return nil, fmt.Errorf("data %s: field \"T\": %d, want > K = %d", d.Name, tt, k)
	}
	y, err := d.Vector("y", tt)
	if err != nil {
		return nil, err
	}
	n := tt - k
	xt := make([]float64, k*n)
	for j := range k { // feature j+1: lag j+1
		for s := range n {
			xt[j*n+s] = y[k+s-j-1]
		}
	}
	m := &glm{
		lay: mustLayout(
			model.Param{Name: "alpha"},
			model.Param{Name: "beta", Dims: []int{k}},
			model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)},
		),
		xt: ad.Mat{Rows: k, Cols: n, Data: xt}, y: y[k:],
		split: func(_ *ad.Tape, p []ad.Var) (alpha, beta, sigma ad.Var) { return p[0], p[1], p[2] },
	}
	m.prior = func(t *ad.Tape, alpha, beta, sigma ad.Var) ad.Var {
		zero, ten := t.Const(0), t.Const(10)
		lp := t.Add(density.Normal(t, alpha, zero, ten), density.Normal(t, beta, zero, ten))
		return t.Add(lp, density.Cauchy(t, sigma, zero, t.Const(2.5)))
	}
	return m, nil
}
