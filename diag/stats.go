package diag

import (
	"math"
	"slices"
)

// mean returns the arithmetic mean with one refinement pass (Σ(xᵢ − m)/n added to the first
// estimate), as R's mean does, so that results agree with R to a few ulps.
func mean(x []float64) float64 {
	n := float64(len(x))
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / n
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	var c float64
	for _, v := range x {
		c += v - m
	}
	return m + c/n
}

// variance returns the sample variance Σ(xᵢ − x̄)²/(n−1); NaN for n < 2.
func variance(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := mean(x)
	var s, c float64
	for _, v := range x {
		d := v - m
		s += d * d
		c += d
	}
	n := float64(len(x))
	return (s - c*c/n) / (n - 1)
}

func sd(x []float64) float64 { return math.Sqrt(variance(x)) }

// quantileSorted returns R's type-7 quantile of the sorted sample s at probability p:
// with h = (n−1)p, lo = ⌊h⌋, (1−f)·s[lo] + f·s[lo+1] where f = h − lo (0-based).
func quantileSorted(s []float64, p float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	// R computes the 1-based index 1 + (n−1)p and its fractional part; doing the same
	// keeps the interpolation weight bit-identical to R's.
	idx := 1 + float64(n-1)*p
	fl := math.Floor(idx)
	lo := int(fl) - 1
	if lo >= n-1 {
		return s[n-1]
	}
	if lo < 0 {
		return s[0]
	}
	f := idx - fl
	if f == 0 || s[lo+1] == s[lo] {
		return s[lo]
	}
	return (1-f)*s[lo] + f*s[lo+1]
}

// Quantile returns R's default (type 7) sample quantile of x at probability p ∈ [0, 1].
// It sorts a copy of x: O(n log n).
func Quantile(x []float64, p float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, p)
}
