package apovi

import (
	"math"
	"testing"
)

// TestGramTIgnoresLeftovers: the layer nodes take C from reused (uninitialised) tape memory;
// gonum's Dsyrk (lower, transposed) multiplies C by beta = 0 instead of zeroing it, so a NaN
// left there by an earlier node poisoned every later Gram matrix (found by meta-training E1:
// once one draw failed, every later loss on the tape was NaN).
func TestGramTIgnoresLeftovers(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6} // 3×2
	c := []float64{math.NaN(), math.Inf(1), math.NaN(), 7}
	gramT(3, 2, a, c)
	// AᵀA = [[35, 44], [44, 56]]; the lower triangle is set.
	if c[0] != 35 || c[2] != 44 || c[3] != 56 {
		t.Errorf("lower triangle of AᵀA = %v, want 35, 44, 56", c)
	}
}
