package optim

import (
	"math"
	"testing"
)

// Hand-computed Adagrad steps (PyTorch semantics) on θ₀ = (1, −2), η = 0.1, ε = 1e-10,
// G₀ = 0, gradients (0.5, 0) then (−1, 2):
//
//	t=1: G = (0.25, 0),   θ₁ = (1 − 0.1·0.5/(0.5+1e-10), −2 − 0)          = (0.90000000002, −2)
//	t=2: G = (1.25, 4),   θ₂ = (θ₁₀ + 0.1/(√1.25+1e-10), −2 − 0.1·2/(2+1e-10))
//	                           = (0.98944271911, −2.099999999995)
//
// Full-precision values from mpmath (mp.dps = 40) running the same recursion:
// θ₁₀ = 0.9000000000199999999960, θ₂₀ = 0.9894427191119915878531, θ₂₁ = −2.0999999999950000000002.
// The second coordinate's zero first gradient checks that a zero G gives a zero step, not
// 0/0. Tolerance 1e-14 relative: a few roundings of a well-conditioned recursion.
func TestAdagradFirstSteps(t *testing.T) {
	a := NewAdagrad(2, AdagradConfig{LR: 0.1})
	th := []float64{1, -2}
	a.Step(th, []float64{0.5, 0})
	w1 := 1 - 0.1*0.5/(0.5+1e-10)
	if !closeTo(th[0], w1, 1e-14) || th[1] != -2 {
		t.Errorf("step 1: θ = %.17g, want (%.17g, -2)", th, w1)
	}
	a.Step(th, []float64{-1, 2})
	w20 := w1 + 0.1/(math.Sqrt(1.25)+1e-10)
	w21 := -2 - 0.1*2/(2+1e-10)
	if !closeTo(th[0], w20, 1e-14) || !closeTo(th[1], w21, 1e-14) {
		t.Errorf("step 2: θ = %.17g, want (%.17g, %.17g)", th, w20, w21)
	}
	// The same numbers written out (mpmath), so that a change of the formula above and in
	// Step together would still be caught.
	if !closeTo(th[0], 0.9894427191119915878531, 1e-14) || !closeTo(th[1], -2.0999999999950000000002, 1e-14) {
		t.Errorf("step 2: θ = %.17g, want (0.98944271911199159, -2.099999999995)", th)
	}
}

// InitialAccumulator enters the first step, and Reset restores it.
func TestAdagradInitialAccumulator(t *testing.T) {
	a := NewAdagrad(1, AdagradConfig{LR: 1, InitialAccumulator: 3})
	th := []float64{0}
	a.Step(th, []float64{1}) // G = 4: θ = −1/(2 + 1e-10)
	if want := -1 / (2 + 1e-10); !closeTo(th[0], want, 1e-15) {
		t.Errorf("θ = %.17g, want %.17g", th[0], want)
	}
	a.Reset()
	th[0] = 0
	a.Step(th, []float64{1})
	if want := -1 / (2 + 1e-10); !closeTo(th[0], want, 1e-15) || a.Steps() != 1 {
		t.Errorf("after Reset: θ = %.17g (steps %d), want %.17g (1)", th[0], a.Steps(), want)
	}
}
