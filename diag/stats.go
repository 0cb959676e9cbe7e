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

// madSorted returns R's mad: 1.4826·median(|x − median(x)|), given x sorted; buf has len(x).
func madSorted(s, buf []float64) float64 {
	med := quantileSorted(s, 0.5)
	for i, v := range s {
		buf[i] = math.Abs(v - med)
	}
	slices.Sort(buf)
	return 1.4826 * quantileSorted(buf, 0.5)
}

// weightedQuantileSorted returns the quantile at p of sorted values s with normalised weights
// w (same order). Each value sits at the midpoint of its weight interval, mᵢ = Cᵢ − wᵢ/2
// (Cᵢ the cumulative weight), rescaled so the first value is at 0 and the last at 1, and the
// quantile function interpolates linearly between these points. With equal weights the
// points are (i−1)/(n−1) and this is R's type-7 quantile. Values of weight exactly 0 are
// dropped; a tiny positive weight still makes its value an interpolation node, which moves
// the result by at most the gap between neighbouring values.
func weightedQuantileSorted(s, w []float64, p float64) float64 {
	if slices.Contains(w, 0) {
		var s2, w2 []float64
		for i := range s {
			if w[i] != 0 {
				s2, w2 = append(s2, s[i]), append(w2, w[i])
			}
		}
		s, w = s2, w2
	}
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n == 1 {
		return s[0]
	}
	m1 := w[0] / 2
	var total float64
	for _, v := range w {
		total += v
	}
	mn := total - w[n-1]/2
	span := mn - m1
	if span <= 0 {
		return s[0]
	}
	target := m1 + p*span
	var c float64
	prev := m1
	for i := range n - 1 {
		c += w[i]
		next := c + w[i+1]/2 // midpoint of value i+1
		if target <= next {
			if next == prev {
				return s[i+1]
			}
			f := (target - prev) / (next - prev)
			return (1-f)*s[i] + f*s[i+1]
		}
		prev = next
	}
	return s[n-1]
}
