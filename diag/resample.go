package diag

import (
	"fmt"
	"math"
	"sort"
)

// Resample returns n indices drawn with replacement with probabilities equal to the normalised
// smoothed weights w̃ — PSIS importance resampling, as Stan's Pathfinder does by default and
// RStan's vb(importance_resampling = TRUE) does: the resampled draws follow the PSIS-corrected
// q, so their expectations are the self-normalised PSIS estimates. uniform must return
// independent draws from [0, 1) (e.g. a seeded math/rand/v2 Rand's Float64). The draws carry
// about PSISResult.ESS draws' worth of information however large n is, and the correction is
// only trustworthy when Reliable (k̂ below the threshold); Resample does not check that.
//
// Systematic resampling would have lower variance but correlates the picks; independent
// (multinomial) picks keep the output an i.i.d. sample of the weighted empirical distribution.
// Cost O(S + n log S).
func (r *PSISResult) Resample(n int, uniform func() float64) ([]int, error) {
	if n < 0 {
		return nil, fmt.Errorf("diag: PSISResult.Resample: n %d, want ≥ 0", n)
	}
	S := len(r.LogWeights)
	if S == 0 {
		return nil, fmt.Errorf("diag: PSISResult.Resample: no weights")
	}
	w := r.Weights()
	cdf := make([]float64, S)
	acc := 0.0
	for i, v := range w {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("diag: PSISResult.Resample: weight %d is NaN", i)
		}
		acc += v
		cdf[i] = acc
	}
	if !(acc > 0) {
		return nil, fmt.Errorf("diag: PSISResult.Resample: all weights are zero")
	}
	idx := make([]int, n)
	for k := range idx {
		u := uniform() * acc
		i := sort.SearchFloat64s(cdf, u)
		for i < S-1 && (cdf[i] <= u || w[i] == 0) { // cdf[i] == u: u falls in the next bin
			i++
		}
		idx[k] = min(i, S-1)
	}
	return idx, nil
}
