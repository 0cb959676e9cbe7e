package diag

import (
	"fmt"
	"math"
	"slices"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// PSISResult is the outcome of Pareto smoothing one vector of log importance ratios.
type PSISResult struct {
	// LogWeights are the smoothed log weights, unnormalised and on the scale of the input
	// (the largest tail weight is truncated at the largest raw ratio). loo's weights().
	LogWeights []float64
	// K is the Pareto shape estimate k̂. −Inf when the weights are equal (see Equal): the
	// best case, a weight distribution with no tail at all (the limit k → −∞ of a generalized
	// Pareto whose support shrinks to a point). +Inf when the tail is too short (< 5 draws),
	// constant while the other weights are not (loo's "all tail values are the same"), or the
	// fit fails.
	K float64
	// Equal reports that the log ratios are equal up to rounding (EqualLogRatios): q is
	// proportional to the target on these draws, so there is nothing to smooth and every
	// importance-weighted estimate equals the unweighted one. K is then −Inf.
	Equal bool
	// Sigma is the fitted generalized Pareto scale (on exp(log ratio − max) − cutoff).
	Sigma float64
	// TailLen is M = ⌈min(0.2·S, 3·√S)⌉, the number of draws smoothed.
	TailLen int
	// ESS is the PSIS effective sample size 1/Σw̃ᵢ² of the normalised smoothed weights w̃.
	ESS float64
	// Threshold is the sample-size-aware k̂ limit min(1 − 1/log₁₀ S, 0.7).
	Threshold float64
}

// Weights returns the self-normalised smoothed weights exp(LogWeights − logsumexp).
func (r *PSISResult) Weights() []float64 {
	w := make([]float64, len(r.LogWeights))
	normalise(w, r.LogWeights)
	return w
}

// Reliable reports K ≤ Threshold: importance-weighted estimates can be trusted.
func (r *PSISResult) Reliable() bool { return r.K <= r.Threshold }

// normalise writes exp(lw − logsumexp(lw)) to w and returns logsumexp(lw).
func normalise(w, lw []float64) float64 {
	lse := mathx.LogSumExp(lw)
	for i, v := range lw {
		w[i] = math.Exp(v - lse)
	}
	return lse
}

// TailLength returns the PSIS tail length M = ⌈min(0.2·S, 3·√S)⌉ for S draws
// (loo's n_pareto with relative efficiency 1).
func TailLength(s int) int {
	return int(math.Ceil(math.Min(0.2*float64(s), 3*math.Sqrt(float64(s)))))
}

// KhatThreshold returns min(1 − 1/log₁₀ S, 0.7), the largest k̂ for which PSIS with S draws
// has practically useful convergence (Vehtari et al. 2024, §3.2.4).
func KhatThreshold(s int) float64 {
	return math.Min(1-1/math.Log10(float64(s)), 0.7)
}

// EqualLogRatios reports whether the log ratios lr are equal up to rounding: all finite and
// max − min ≤ 256·ε·max(1, |max|), ε the float64 machine epsilon — a few hundred units in the
// last place of the ratios themselves, what evaluating log p − log q in floating point leaves
// when q equals the target up to a constant. Cost O(S).
func EqualLogRatios(lr []float64) bool {
	if len(lr) == 0 {
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range lr {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi-lo <= 256*2.220446049250313e-16*math.Max(1, math.Abs(hi))
}

// PSIS Pareto-smooths the log importance ratios log p(θₛ) − log q(θₛ) of S independent draws
// exactly as R's loo::psis (loo ≥ 2.4, r_eff = 1) does, except for equal ratios:
//
//  0. if the ratios are equal up to rounding (EqualLogRatios: q equals the target up to a
//     constant, e.g. a full-rank Gaussian fitted to a Gaussian), K = −Inf and Equal is set,
//     nothing is smoothed and Reliable holds. loo (and posterior, ArviZ) return k̂ = Inf
//     (or NA) with the warning "all tail values are the same", which reads as the worst
//     verdict for the best possible approximation; vigo departs from them here only;
//  1. shift the ratios by their maximum and sort them;
//  2. take the M = ⌈min(0.2·S, 3·√S)⌉ largest as the tail, the next one as the cutoff u;
//  3. fit a generalized Pareto distribution to exp(tail) − exp(u) by FitGPD
//     (Zhang & Stephens with the weakly informative prior);
//  4. if k̂ is finite, replace the tail, in order, by log(exp(u) + F⁻¹((i − ½)/M)), i = 1…M;
//  5. truncate every log weight at 0 (the largest raw ratio) and shift back.
//
// With M < 5, or a tail that is constant (or whose spread vanishes when exponentiated) while
// the other ratios are not, nothing is smoothed and K = +Inf, as in loo. The ratios must not
// be NaN or +Inf; −Inf (zero weight) is allowed. Cost O(S log S).
func PSIS(logRatios []float64) (*PSISResult, error) {
	s := len(logRatios)
	if s < 2 {
		return nil, fmt.Errorf("diag: PSIS: need at least 2 log ratios (S=%d)", s)
	}
	mx := math.Inf(-1)
	for i, v := range logRatios {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("diag: PSIS: log ratio %d is %v", i, v)
		}
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, -1) {
		return nil, fmt.Errorf("diag: PSIS: all log ratios are -Inf (S=%d)", s)
	}
	lw := make([]float64, s)
	for i, v := range logRatios {
		lw[i] = v - mx
	}
	res := &PSISResult{K: math.Inf(1), Sigma: math.NaN(), TailLen: TailLength(s), Threshold: KhatThreshold(s)}
	m := res.TailLen
	if EqualLogRatios(logRatios) {
		res.K, res.Equal = math.Inf(-1), true
	} else if m >= 5 && m < s {
		// Stable ordering, as R's radix sort.int(index.return = TRUE).
		idx := make([]int, s)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case lw[a] < lw[b]:
				return -1
			case lw[a] > lw[b]:
				return 1
			}
			return 0
		})
		tail := idx[s-m:]
		cutoff := lw[idx[s-m-1]]
		lo, hi := lw[tail[0]], lw[tail[m-1]]
		if math.Abs(hi-lo) >= 2.220446049250313e-16/100 {
			ec := math.Exp(cutoff)
			x := make([]float64, m)
			for i, j := range tail {
				x[i] = math.Exp(lw[j]) - ec
			}
			// FitGPD guards x[m−1] ≤ 0 (tail values that differ in log space but not
			// once exponentiated) and returns k = +Inf for it.
			k, sigma := FitGPD(x)
			res.K, res.Sigma = k, sigma
			if !math.IsInf(k, 0) && !math.IsNaN(k) {
				for i, j := range tail {
					p := (float64(i+1) - 0.5) / float64(m)
					lw[j] = math.Log(gpdQuantile(p, k, sigma) + ec)
				}
			}
		}
	}
	for i, v := range lw {
		lw[i] = math.Min(v, 0) + mx
	}
	res.LogWeights = lw
	w := make([]float64, s)
	normalise(w, lw)
	var ss float64
	for _, v := range w {
		ss += v * v
	}
	res.ESS = 1 / ss
	return res, nil
}

// gpdQuantile is the generalized Pareto quantile σ·((1−p)^(−k) − 1)/k, NaN when σ ≤ 0.
func gpdQuantile(p, k, sigma float64) float64 {
	if !(sigma > 0) {
		return math.NaN()
	}
	return sigma * math.Expm1(-k*math.Log1p(-p)) / k
}

// FitGPD estimates the shape k and scale σ of a generalized Pareto distribution (location 0)
// from the sorted positive sample x, by the empirical-Bayes method of Zhang & Stephens
// (2009) as loo's gpdfit implements it (wip = TRUE, min_grid_pts = 30):
//
//   - grid θⱼ = 1/x₍ₙ₎ + (1 − √(m/(j − ½)))/(3·x*), j = 1…m, m = 30 + ⌊√n⌋, x* the sample
//     value at position ⌊n/4 + ½⌋ (prior parameter 3);
//   - profile log-likelihood ℓ(θ) = n·(log(θ/k(θ)) − k(θ) − 1) with k(θ) = −mean log(1 − θx);
//   - posterior-mean θ̂ = Σθⱼwⱼ, wⱼ ∝ exp ℓ(θⱼ); k = mean log(1 − θ̂x), σ = −k/θ̂;
//   - weakly informative prior shrinking k towards ½: k ← (n·k + 10·½)/(n + 10).
//
// A NaN k becomes +Inf, and so do fewer than 2 values and a sample without spread to fit:
// x₍ₙ₎ or x* not positive and finite (all values 0, as when tail ratios differ by less than
// the rounding of exp, or the first quarter tied at 0), where the grid would divide by zero.
// x must be sorted ascending. Cost O(n·(30 + √n)).
func FitGPD(x []float64) (k, sigma float64) {
	n := len(x)
	if n < 2 {
		return math.Inf(1), math.NaN()
	}
	if hi, xs := x[n-1], x[int(math.Floor(float64(n)/4+0.5))-1]; !(hi > 0) || !(xs > 0) || math.IsInf(hi, 1) {
		return math.Inf(1), math.NaN()
	}
	const prior = 3
	m := 30 + int(math.Floor(math.Sqrt(float64(n))))
	xstar := x[int(math.Floor(float64(n)/4+0.5))-1]
	theta := make([]float64, m)
	ll := make([]float64, m)
	buf := make([]float64, n)
	meanLog1p := func(a float64) float64 { // mean(log1p(a·x))
		for i, v := range x {
			buf[i] = math.Log1p(a * v)
		}
		return mean(buf)
	}
	for j := range m {
		th := 1/x[n-1] + (1-math.Sqrt(float64(m)/(float64(j+1)-0.5)))/prior/xstar
		theta[j] = th
		kk := meanLog1p(-th)
		ll[j] = float64(n) * (math.Log(-th/kk) - kk - 1)
	}
	lse := mathx.LogSumExp(ll)
	var thetaHat float64
	for j := range m {
		thetaHat += theta[j] * math.Exp(ll[j]-lse)
	}
	k = meanLog1p(-thetaHat)
	sigma = -k / thetaHat
	const a = 10
	k = k*float64(n)/float64(n+a) + a*0.5/float64(n+a)
	if math.IsNaN(k) {
		k = math.Inf(1)
	}
	return k, sigma
}
