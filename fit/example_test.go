package fit_test

import (
	"context"
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
)

// normalModel is y_i ~ N(mu, sigma) with mu ~ N(0, 10), sigma ~ half-normal(0, 5).
func normalModel() *model.Model {
	y := []float64{2.1, 1.4, 3.3, 2.8, 1.9, 2.5, 3.0, 2.2}
	lay, err := model.NewLayout(model.Param{Name: "mu"}, model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)})
	if err != nil {
		panic(err)
	}
	return &model.Model{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		lp := density.Normal(t, t.ConstRef(y), p[0], p[1])
		lp = t.Add(lp, density.Normal(t, p[0], t.Const(0), t.Const(10)))
		return t.Add(lp, density.HalfNormal(t, p[1], t.Const(5)))
	}}
}

// Fitting a model by a recipe: start from the kind's defaults, change what you need, Run.
func ExampleRun() {
	r := fit.DefaultRecipe(fit.KindFullRank)
	r.Seed = 7
	res, err := fit.Run(context.Background(), normalModel(), r)
	if err != nil {
		panic(err)
	}
	mean, cov := make([]float64, 2), make([]float64, 4)
	res.Family.Moments(res.Params, mean, cov)
	fmt.Printf("status: %s\n", res.Status)
	fmt.Printf("mu: posterior mean ≈ %.1f\n", mean[0])
	fmt.Printf("k̂ below its threshold: %v\n", res.KHat < res.KHatThreshold)
	// Output:
	// status: converged
	// mu: posterior mean ≈ 2.4
	// k̂ below its threshold: true
}

// Choosing the family automatically: mean field first, then full rank; the flows are not
// needed here because a Gaussian already passes k̂.
func ExampleAuto() {
	a, err := fit.Auto(context.Background(), normalModel(), fit.AutoConfig{})
	if err != nil {
		panic(err)
	}
	for _, s := range a.Stages {
		fmt.Println(s.Family)
	}
	fmt.Println("chosen:", a.Stages[a.Chosen].Family != "")
	// Output:
	// meanfield
	// fullrank
	// chosen: true
}
