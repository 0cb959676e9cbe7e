// Command usermodel is a Go user's own program with the whole vigo command line for their own
// model: a Poisson regression of counts y on a covariate x,
//
//	y_n ~ Poisson(exp(α + β·x_n)),  α ~ N(0, 5),  β ~ N(0, 2),
//
// with the rate at each x_n as a derived quantity (Stan's generated quantities) and the
// per-observation log-likelihood (for PSIS-LOO later). Its data are built in; --data FILE
// (CmdStan JSON with N, x, y) fits other data.
//
//	go run ./examples/usermodel fit counts            # draws.csv, summary.*, fit.json, elbo.png, marginals.png
//	go run ./examples/usermodel fit counts --family fullrank --out out
//	go run ./examples/usermodel sample counts         # NUTS, one Stan CSV per chain
//	go run ./examples/usermodel draw out/fit.json     # more draws from the saved fit
//	go run ./examples/usermodel zoo                   # the zoo's models and this one
//
// Every vigo command works, for the zoo's models too.
package main

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/cli"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// builtin are the example's counts: 12 observations of a rate that grows with x.
const builtin = `{"N": 12, "x": [-1.5, -1.2, -0.9, -0.6, -0.3, 0, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8],
 "y": [1, 0, 2, 1, 3, 2, 4, 3, 6, 7, 9, 12]}`

// counts is the model as the command line sees it.
func counts() cli.Model {
	d, err := model.ParseData("built-in", strings.NewReader(builtin))
	if err != nil {
		panic(err) // the constant above is valid JSON
	}
	return cli.Model{Name: "counts", About: "Poisson regression of counts on one covariate (examples/usermodel)", New: newCounts, Data: d}
}

// newCounts builds the model from data with N, x and y.
func newCounts(d *model.Data) (*model.Model, error) {
	if d == nil {
		return nil, fmt.Errorf("counts: no data")
	}
	n, err := d.Int("N")
	if err != nil {
		return nil, err
	}
	x, err := d.Vector("x", n)
	if err != nil {
		return nil, err
	}
	y, err := d.IntVector("y", n)
	if err != nil {
		return nil, err
	}
	for i, k := range y {
		if k < 0 {
			return nil, fmt.Errorf("counts: y[%d] = %d, want a count ≥ 0", i+1, k)
		}
	}
	lay, err := model.NewLayout(model.Param{Name: "alpha"}, model.Param{Name: "beta"})
	if err != nil {
		return nil, err
	}
	rate := func(alpha, beta, x float64) float64 { return math.Exp(alpha + beta*x) }
	return &model.Model{
		Layout: lay,
		// Density only reads x and y, so it is safe to call from several goroutines at once,
		// as the fit's workers do (each with its own tape).
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			alpha, beta := p[0], p[1]
			eta := t.Add(alpha, t.Mul(beta, t.ConstRef(x)))
			lp := density.PoissonLog(t, y, eta)
			lp = t.Add(lp, density.Normal(t, alpha, t.Const(0), t.Const(5)))
			return t.Add(lp, density.Normal(t, beta, t.Const(0), t.Const(2)))
		},
		Derived: []model.Quantity{{Name: "rate", Dims: []int{n}}},
		Derive: func(p, out [][]float64) {
			for i, xi := range x {
				out[0][i] = rate(p[0][0], p[1][0], xi)
			}
		},
		NumObs: n,
		LogLik: func(p [][]float64, out []float64) {
			for i, xi := range x {
				eta := p[0][0] + p[1][0]*xi
				lg, _ := math.Lgamma(float64(y[i]) + 1)
				out[i] = float64(y[i])*eta - math.Exp(eta) - lg
			}
		},
	}, nil
}

func main() { os.Exit(cli.Main(os.Args[1:], counts())) }
