package zoo_test

import (
	"fmt"
	"os"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// The eight-schools model needs no files: its data are embedded. Evaluate the log density
// and its gradient at the origin of the unconstrained space (theta_trans = 0, mu = 0, tau = 1).
func ExampleEightSchools() {
	m := zoo.EightSchools()
	var t ad.Tape
	z := make([]float64, m.Dim())
	grad := make([]float64, m.Dim())
	lp := model.Gradient(&t, m, z, grad)
	fmt.Println(m.Name, m.Dim(), m.Layout().Names()[8:])
	fmt.Printf("log p = %.4f, ∂/∂mu = %.4f\n", lp, grad[8])
	fmt.Println(m.Constrain(nil, z)[8:]) // mu, tau
	// Output:
	// eight_schools 10 [mu tau]
	// log p = -44.1288, ∂/∂mu = 0.4635
	// [0 1]
}

// Models read posteriordb data from a directory the caller names and name their reference
// draws. (Not run as a test: it needs a posteriordb checkout; TestDelta and TestDraws cover the
// same path and skip without one.)
func ExampleLoad() {
	dir := os.Getenv("VIGO_POSTERIORDB") // the root of a posteriordb checkout (holds data/, draws/)
	if dir == "" {
		fmt.Println("VIGO_POSTERIORDB is not set")
		return
	}
	m, err := zoo.Load("garch", dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	draws, err := model.LoadDraws(m.DrawsPath(dir))
	if err != nil {
		fmt.Println(err)
		return
	}
	z, err := m.Unconstrain(nil, draws.Row(0, 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	var t ad.Tape
	grad := make([]float64, m.Dim())
	fmt.Println(m.Posterior, m.Names(), len(z))
	lp := model.Gradient(&t, m.WithJacobian(false), z, grad)
	fmt.Println(lp, grad)
	// Prints garch-garch11 [mu alpha0 alpha1 beta1] 4, then ℓ and its gradient at the first
	// reference draw.
}
