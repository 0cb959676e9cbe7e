package bijector_test

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
)

// A simplex[3] parameter: two free coordinates; u = 0 is the uniform simplex.
func ExampleSimplex() {
	b := bijector.Simplex(3)
	x := make([]float64, b.Size())
	logJ := b.Constrain([]float64{0, 0}, x)
	fmt.Printf("x = %.4f, log J = %.4f\n", x, logJ)

	u := make([]float64, b.FreeSize())
	err := b.Free([]float64{0.5, 0.25, 0.25}, u)
	fmt.Printf("u = %.4f, err = %v\n", u, err)
	fmt.Println(b.Free([]float64{0.5, 0.5, 0.2}, u))
	// Output:
	// x = [0.3333 0.3333 0.3333], log J = -3.2958
	// u = [0.6931 0.0000], err = <nil>
	// bijector: Simplex.Free: x sums to 1.2, want 1 (tolerance 1e-08)
}

// On a tape: x and log J are nodes, and gradients flow back to u.
func ExampleLower() {
	var t ad.Tape
	u := t.Input([]float64{0.5})
	x, logJ := bijector.Lower(1, 0).Forward(&t, u) // x = e^u, log J = u
	t.Backward(t.Add(t.Sum(x), logJ))
	fmt.Printf("x = %.4f, d(x + log J)/du = %.4f\n", t.Value(x)[0], t.Grad(u)[0])
	// Output: x = 1.6487, d(x + log J)/du = 2.6487
}
