package zoo

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// fdGrad returns the gradient of f at x by the five-point central stencil
// [8(f(x+h)−f(x−h)) − (f(x+2h)−f(x−2h))]/(12h), h = fdStep·max(0.1, |x_i|), evaluating f on
// the tape without Backward. Its truncation error is O(h⁴·f⁽⁵⁾), negligible here; its
// round-off error is about ε·|f|/h.
func fdGrad(tp *ad.Tape, f ad.Func, x []float64) []float64 {
	eval := func(x []float64) float64 {
		tp.Reset()
		return tp.Float(f(tp, tp.Input(x)))
	}
	g := make([]float64, len(x))
	xx := append([]float64(nil), x...)
	for i := range x {
		h := fdStep * math.Max(0.1, math.Abs(x[i]))
		at := func(s float64) float64 {
			xx[i] = x[i] + s*h
			v := eval(xx)
			xx[i] = x[i]
			return v
		}
		g[i] = (8*(at(1)-at(-1)) - (at(2) - at(-2))) / (12 * h)
	}
	return g
}

// fdStep is the relative step of fdGrad. The step follows |x_i| (floored at 0.1) because the
// kernels are tested at constrained values as small as 0.01 (garch's alpha0), where a fixed
// step of 1e-3 already moves the function out of its Taylor range; 1e-4 keeps h⁴·|f⁽⁵⁾|
// negligible while round-off stays ε·|f|/h ≤ 2e-11·|f|.
const fdStep = 1e-4

// checkGrad compares the tape gradient of f at x with fdGrad. The tolerance is 1e-6 relative
// to max(1, |g_i|) — far above the stencil's truncation error, small enough to catch any
// sign, factor or missing-term bug — plus 100 times the stencil's round-off ε·|f|/h, for log
// densities whose value (thousands of terms) is large against their gradient.
func checkGrad(t *testing.T, name string, f ad.Func, x []float64) {
	t.Helper()
	var tp ad.Tape
	g := make([]float64, len(x))
	val := ad.Gradient(&tp, f, x, g)
	fd := fdGrad(&tp, f, x)
	for i := range x {
		h := fdStep * math.Max(0.1, math.Abs(x[i]))
		tol := 1e-6*math.Max(1, math.Abs(g[i])) + 100*2.2e-16*math.Abs(val)/h
		if d := math.Abs(g[i] - fd[i]); !(d <= tol) {
			t.Errorf("%s at %v: ∂/∂x[%d] = %.12g, finite differences %.12g (|diff| %.3g > tol %.3g)", name, x, i, g[i], fd[i], d, tol)
		}
	}
}
