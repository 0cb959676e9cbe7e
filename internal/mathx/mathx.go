// Package mathx holds stable scalar special functions and log-space helpers shared by the
// numeric packages. Nothing here allocates.
package mathx

import (
	"math"
)

// Constants used by log densities.
const (
	LogSqrt2Pi = 0.91893853320467274178032973640562 // ½·log(2π)
	LogPi      = 1.1447298858494001741434273513531  // log π
	Log2       = math.Ln2
)

// Log1pExp returns log(1+eˣ) without overflow or loss of precision
// (Mächler 2012, "Accurately computing log(1 − exp(−|a|))", eq. 10).
func Log1pExp(x float64) float64 {
	switch {
	case x <= -37:
		return math.Exp(x)
	case x <= 18:
		return math.Log1p(math.Exp(x))
	case x <= 33.3:
		return x + math.Exp(-x)
	default:
		return x
	}
}

// Logistic returns 1/(1+e⁻ˣ), stable for all x.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// LogLogistic returns log(1/(1+e⁻ˣ)) = −log1pexp(−x).
func LogLogistic(x float64) float64 { return -Log1pExp(-x) }

// Log1mExp returns log(1 − eˣ) for x < 0 (Mächler 2012).
func Log1mExp(x float64) float64 {
	if x > -math.Ln2 {
		return math.Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// LogAddExp returns log(eᵃ + eᵇ).
func LogAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// LogSumExp returns log Σ exp(x_i); −Inf for an empty slice.
func LogSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// Lgamma returns log|Γ(x)|.
func Lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// Digamma returns ψ(x) = d/dx log Γ(x), absolute error near 1e-15 (see digamma; gonum's
// mathext.Digamma is off by up to 5e-11).
func Digamma(x float64) float64 { return digamma(x) }

// Trigamma returns ψ'(x), by recurrence to x ≥ 6 and the asymptotic series
// (Abramowitz & Stegun 6.4.12), absolute error below 1e-13 for x > 0.
func Trigamma(x float64) float64 {
	if x <= 0 && x == math.Floor(x) {
		return math.Inf(1)
	}
	if x < 0 {
		// Reflection: ψ'(1−x) + ψ'(x) = π² / sin²(πx).
		s := math.Sin(math.Pi * x)
		return -Trigamma(1-x) + math.Pi*math.Pi/(s*s)
	}
	r := 0.0
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	x2 := 1 / (x * x)
	// 1/x + 1/(2x²) + 1/(6x³) − 1/(30x⁵) + 1/(42x⁷) − 1/(30x⁹) + 5/(66x¹¹)
	r += 1/x + x2/2 + (1.0/6-(1.0/30-(1.0/42-(1.0/30-5.0/66*x2)*x2)*x2)*x2)*x2/x
	return r
}

// LogBeta returns log B(a, b) = lnΓ(a) + lnΓ(b) − lnΓ(a+b).
func LogBeta(a, b float64) float64 { return Lgamma(a) + Lgamma(b) - Lgamma(a+b) }

// LogBinomial returns log C(n, k) for real n ≥ k ≥ 0.
func LogBinomial(n, k float64) float64 {
	return Lgamma(n+1) - Lgamma(k+1) - Lgamma(n-k+1)
}
