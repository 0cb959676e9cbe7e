package mcmc_test

import (
	"context"
	"fmt"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// Sampling a hand-written target: a 2-D Gaussian with means (1, −2) and sds (1, 3).
func ExampleSample() {
	tg := model.GradFunc{N: 2, F: func(x, grad []float64) float64 {
		a, b := x[0]-1, (x[1]+2)/3
		grad[0], grad[1] = -a, -b/3
		return -0.5 * (a*a + b*b)
	}}
	res, err := mcmc.Sample(context.Background(), tg, mcmc.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	sum, err := diag.Summarize(res.Draws([]string{"x", "y"}, nil), nil)
	if err != nil {
		panic(err)
	}
	for _, r := range sum.Rows {
		fmt.Printf("%s: mean %.0f, sd %.0f, R-hat below 1.01: %v\n", r.Variable, r.Mean, r.SD, r.Rhat < 1.01)
	}
	fmt.Println(res.Diagnostics().Warnings() == nil)
	// Output:
	// x: mean 1, sd 1, R-hat below 1.01: true
	// y: mean -2, sd 3, R-hat below 1.01: true
	// true
}
