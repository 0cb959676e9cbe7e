package flow_test

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// The multivariate BF-VI flow as configured in the paper's reference code: 50 coefficients
// (degree 49) per coordinate from a masked conditioner with two hidden layers of 10 units and
// no activation, the sigmoid input map, on ℝ^4.
func ExampleNewBernsteinAR() {
	const d, M = 4, 49
	cond := nn.NewMADE(d, []int{10, 10}, M+1, nn.WithActivation(ad.Linear))
	f := flow.NewBernsteinAR(cond)
	params := make([]float64, f.NumParams())
	f.Init(params, nil)

	var t ad.Tape
	z, logdet := f.Forward(&t, t.Const(params...), t.Const(0.5, -1, 2, 0.25))
	u := make([]float64, d)
	ld, err := f.Inverse(params, t.Value(z), u)
	fmt.Printf("degree %d, %d parameters\n", f.Degree(), f.NumParams())
	fmt.Printf("z = %.3f, log-det %.3f\n", t.Value(z), t.Float(logdet))
	fmt.Printf("u = %.3f, log-det %.3f, err %v\n", u, ld, err)
	// Output:
	// degree 49, 2368 parameters
	// z = [0.512 -1.017 1.981 0.257], log-det -0.040
	// u = [0.500 -1.000 2.000 0.250], log-det -0.040, err <nil>
}
