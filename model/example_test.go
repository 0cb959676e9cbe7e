package model_test

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// A hierarchical model written in Go: eight schools, non-centred (the README's example).
func Example() {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	layout, err := model.NewLayout(
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "theta_trans", Dims: []int{8}},
	)
	if err != nil {
		panic(err)
	}
	m := &model.Model{Layout: layout, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		mu, tau, tt := p[0], p[1], p[2]
		theta := t.Add(mu, t.Mul(tau, tt))                               // scalar–vector broadcasting
		lp := density.Normal(t, t.ConstRef(y), theta, t.ConstRef(sigma)) // one node for all 8
		lp = t.Add(lp, density.Normal(t, tt, t.Const(0), t.Const(1)))
		lp = t.Add(lp, density.Normal(t, mu, t.Const(0), t.Const(5)))
		return t.Add(lp, density.Cauchy(t, tau, t.Const(0), t.Const(5)))
	}}
	var tape ad.Tape // reuse it: evaluations after the first allocate nothing
	z := make([]float64, m.Dim())
	grad := make([]float64, m.Dim())
	lp := model.Gradient(&tape, m, z, grad)
	fmt.Println(layout.Names()[:3])
	fmt.Printf("log p(z=0) = %.4f, ∂/∂mu = %.4f, ∂/∂log tau = %.4f\n", lp, grad[0], grad[1])
	// Values checked with SciPy: at z = 0 (mu = 0, tau = 1, theta = 0)
	// /usr/bin/python3 -c "from scipy import stats; import numpy as np; y=np.array([28,8,-3,7,-1,1,18,12.]); s=np.array([15,10,16,11,9,11,10,18.]); print(stats.norm.logpdf(y,0,s).sum()+8*stats.norm.logpdf(0)+stats.norm.logpdf(0,0,5)+stats.cauchy.logpdf(1,0,5), (y/s**2).sum(), 1-2/26)"
	// → -44.12878445770807 0.4635327549484747 0.9230769230769231

	// Output:
	// [mu tau theta_trans[1]]
	// log p(z=0) = -44.1288, ∂/∂mu = 0.4635, ∂/∂log tau = 0.9231
}

// A model that describes its outputs: the transformed parameter theta = mu + tau·theta_trans
// as a derived quantity, and the per-school log-likelihood. Row writes one draw's row of
// Columns: the parameters, then theta.
func ExampleModel_Row() {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	layout, err := model.NewLayout(
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "theta_trans", Dims: []int{8}},
	)
	if err != nil {
		panic(err)
	}
	m := &model.Model{
		Layout: layout,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			mu, tau, tt := p[0], p[1], p[2]
			lp := density.Normal(t, t.ConstRef(y), t.Add(mu, t.Mul(tau, tt)), t.ConstRef(sigma))
			lp = t.Add(lp, density.Normal(t, tt, t.Const(0), t.Const(1)))
			lp = t.Add(lp, density.Normal(t, mu, t.Const(0), t.Const(5)))
			return t.Add(lp, density.Cauchy(t, tau, t.Const(0), t.Const(5)))
		},
		Derived: []model.Quantity{{Name: "theta", Dims: []int{8}}},
		Derive: func(p, out [][]float64) {
			mu, tau := p[0][0], p[1][0]
			for j, v := range p[2] {
				out[0][j] = mu + tau*v
			}
		},
		NumObs: len(y),
		LogLik: func(p [][]float64, out []float64) {
			mu, tau := p[0][0], p[1][0]
			for j, v := range p[2] {
				r := (y[j] - mu - tau*v) / sigma[j]
				out[j] = -0.5*r*r - math.Log(sigma[j]) - 0.5*math.Log(2*math.Pi)
			}
		},
	}
	if err := m.Check(); err != nil {
		panic(err)
	}
	z := []float64{1, 0, 1, -1, 0, 0, 0, 0, 0, 0} // mu = 1, tau = 1
	cols, row := m.Columns(), m.Row(nil, z)
	fmt.Println(len(cols), cols[10], cols[11], row[10], row[11])
	ll, _ := m.PointwiseLogLik(nil, z)
	fmt.Printf("log p(y_1 | theta_1 = 2) = %.4f\n", ll[0])
	// Checked with Python: r = 26/15; -r*r/2 - log(15) - log(2π)/2 = -5.129210956529105.

	// Output:
	// 18 theta[1] theta[2] 2 0
	// log p(y_1 | theta_1 = 2) = -5.1292
}
