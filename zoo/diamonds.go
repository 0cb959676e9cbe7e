package zoo

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// diamondsEntry is the zoo entry of this file's model.
func diamondsEntry() entry {
	return entry{
		Info: Info{
			Name:      "diamonds",
			Posterior: "diamonds-diamonds",
			Data:      "diamonds",
			Description: "brms regression of log price on carat, log x/y/z, cut, color, clarity and " +
				"carat interactions for 5,000 diamonds (ggplot2): Y ~ N(Intercept + Xc·b, sigma) with " +
				"the design centred, b ~ N(0, 1), Intercept ~ t3(8, 10), sigma ~ half-t3(0, 10). 26 " +
				"parameters, badly conditioned (posterior condition number ≈ 3e3, sd from 0.0017 to 0.33).",
		},
		build: newDiamonds,
	}
}

// newDiamonds builds diamonds: z = (b[1..24], Intercept, log sigma). brms's transformed data
// is done once here: the intercept column X[:,1] is dropped, every other column is centred at
// its sample mean (Xc = X[:, 2:K] − m) and stored feature-major. prior_only must be 0.
func newDiamonds(d *model.Data) (impl, error) {
	n, err := positiveCount(d, "N", 1)
	if err != nil {
		return nil, err
	}
	k, err := positiveCount(d, "K", 2)
	if err != nil {
		return nil, err
	}
	x, err := d.Matrix("X", n, k)
	if err != nil {
		return nil, err
	}
	y, err := d.Vector("Y", n)
	if err != nil {
		return nil, err
	}
	if d.Has("prior_only") {
		po, err := d.Int("prior_only")
		if err != nil {
			return nil, err
		}
		if po != 0 {
			return nil, fmt.Errorf("data %s: field \"prior_only\": %d, only the posterior (0) is supported", d.Name, po)
		}
	}
	dd := k - 1
	xt := make([]float64, dd*n)
	for j := range dd {
		col := xt[j*n : (j+1)*n]
		s := 0.0
		for i := range n {
			col[i] = x[i*k+j+1]
			s += col[i]
		}
		mean := s / float64(n)
		for i := range col {
			col[i] -= mean
		}
	}
	m := &glm{
		lay: mustLayout(
			model.Param{Name: "b", Dims: []int{dd}},
			model.Param{Name: "Intercept"},
			model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)},
		),
		xt: ad.Mat{Rows: dd, Cols: n, Data: xt}, y: y,
		split: func(_ *ad.Tape, p []ad.Var) (alpha, beta, sigma ad.Var) { return p[1], p[0], p[2] },
	}
	m.prior = func(t *ad.Tape, alpha, beta, sigma ad.Var) ad.Var {
		three, ten := t.Const(3), t.Const(10)
		lp := t.Add(density.Normal(t, beta, t.Const(0), t.Const(1)), density.StudentT(t, alpha, three, t.Const(8), ten))
		// sigma ~ student_t(3, 0, 10) on sigma > 0 with brms's explicit truncation
		// normaliser −student_t_lccdf(0 | 3, 0, 10) = log 2: the half-t density.
		return t.Add(lp, density.HalfStudentT(t, sigma, three, ten))
	}
	return m, nil
}
