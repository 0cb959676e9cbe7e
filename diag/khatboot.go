package diag

import (
	"math"
	"math/rand/v2"
)

// KhatBootVar returns the bootstrap variance of the PSIS Pareto k̂ of the log weights logw:
// the sample variance (divisor m − 1) of k̂ over b resamples of logw drawn with replacement
// from rnd, skipping resamples whose k̂ is not finite (+Inf: no fit; −Inf: equal weights) or
// where PSIS fails (m is the number kept; 0 when m < 2, as for equal weights). It measures how much k̂ would move with another set of as many draws
// from the same q — large near the tails' boundary, where a q fitted once can read k̂ = 0.6
// on one set of 1,000 draws and 0.7 on the next — and is what the BF-VI paper's evaluation
// computes per run (1,000 resamples with loo::psis; Dürr et al. 2024). Cost: b PSIS fits,
// O(b·S log S) for S = len(logw); it allocates one copy of logw.
func KhatBootVar(logw []float64, b int, rnd *rand.Rand) float64 {
	buf := make([]float64, len(logw))
	var n, mean, m2 float64 // Welford's running mean and sum of squared deviations
	for range b {
		for i := range buf {
			buf[i] = logw[rnd.IntN(len(logw))]
		}
		r, err := PSIS(buf)
		if err != nil || math.IsInf(r.K, 0) || math.IsNaN(r.K) {
			continue
		}
		n++
		d := r.K - mean
		mean += d / n
		m2 += d * (r.K - mean)
	}
	if n < 2 {
		return 0
	}
	return m2 / (n - 1)
}
