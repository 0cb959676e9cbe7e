package diag

import (
	"math"
	"testing"
)

// TestEBFMI checks the estimator on hand-computable energies and on the 26 energies of a
// 10-D Cauchy run used by MCMCDiagnosticTools.jl's tests, where ArviZ's bfmi gives
// 0.2406937229 (the value their test states).
func TestEBFMI(t *testing.T) {
	// Σ diff² = 3, Σ (E − Ē)² = 5.
	if got := EBFMI([]float64{1, 2, 3, 4}); math.Abs(got-0.6) > 1e-15 {
		t.Errorf("EBFMI(1,2,3,4) = %v, want 0.6", got)
	}
	cauchy := []float64{42, 44, 45, 46, 42, 43, 36, 36, 31, 36, 36, 32, 36, 31, 31, 29, 29, 30, 25, 26, 29, 29, 27, 30, 31, 29}
	// Ten digits are given; the sums are exact in float64 up to rounding at 1e-16.
	if got := EBFMI(cauchy); math.Abs(got-0.2406937229) > 1e-10 {
		t.Errorf("EBFMI(cauchy) = %.10f, want 0.2406937229", got)
	}
	for _, e := range [][]float64{nil, {1}, {2, 2, 2}} {
		if got := EBFMI(e); !math.IsNaN(got) {
			t.Errorf("EBFMI(%v) = %v, want NaN", e, got)
		}
	}
}
