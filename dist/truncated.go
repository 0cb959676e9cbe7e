package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Truncated is the continuous distribution Dist restricted to [Lower, Upper], Stan's
// `y ~ dist(θ) T[L, U]`:
//
//	log p(x) = log p_D(x) − log Z,  Z = F(U) − F(L),  x ∈ [L, U].
//
// Use −Inf/+Inf for a missing bound (Lower = −Inf gives log Z = log F(U), Upper = +Inf gives
// log Z = log(1 − F(L))). Z is formed from the log CDFs on the side where the interval lies
// (F(U) − F(L) when F(U) ≤ 1 − F(L), else (1 − F(L)) − (1 − F(U))), so deep-tail truncation
// keeps its relative accuracy. The partials include those of the normaliser:
// ∂ log Z/∂θ = (F(U)·∂θ log F(U) − F(L)·∂θ log F(L))/Z, ∂ log Z/∂U = p(U)/Z,
// ∂ log Z/∂L = −p(L)/Z. Lower ≥ Upper gives NaN.
type Truncated[D Continuous] struct {
	Dist         D
	Lower, Upper float64
}

// LogNormalizer returns log Z = log(F(U) − F(L)).
func (t Truncated[D]) LogNormalizer() float64 {
	lz, _, _, _ := t.LogNormalizerPartials()
	return lz
}

// LogNormalizerPartials returns log Z and its partials in the parameters of Dist and in the
// bounds. Cost: two or three log-CDF evaluations of Dist.
func (t Truncated[D]) LogNormalizerPartials() (lz float64, dp Partials, dlower, dupper float64) {
	lo, hi := t.Lower, t.Upper
	switch {
	case !(lo < hi):
		n := math.NaN()
		return n, Partials{n, n, n}, n, n
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return 0, Partials{}, 0, 0
	case math.IsInf(lo, -1):
		v, dx, dp := t.Dist.LogCDFPartials(hi)
		return v, dp, 0, dx
	case math.IsInf(hi, 1):
		v, dx, dp := t.Dist.LogCCDFPartials(lo)
		return v, dp, dx, 0
	}
	fu, dxu, dpu := t.Dist.LogCDFPartials(hi)
	sl, dxl, dpl := t.Dist.LogCCDFPartials(lo)
	if fu <= sl {
		// The interval lies toward the lower tail: Z = F(U) − F(L).
		fl, dxl2, dpl2 := t.Dist.LogCDFPartials(lo)
		lz = fu + mathx.Log1mExp(fl-fu)
		wu, wl := math.Exp(fu-lz), math.Exp(fl-lz)
		for i := range dp {
			dp[i] = wu*dpu[i] - wl*dpl2[i]
		}
		return lz, dp, -wl * dxl2, wu * dxu
	}
	// Toward the upper tail: Z = S(L) − S(U) with S = 1 − F.
	su, dxu2, dpu2 := t.Dist.LogCCDFPartials(hi)
	lz = sl + mathx.Log1mExp(su-sl)
	wl, wu := math.Exp(sl-lz), math.Exp(su-lz)
	for i := range dp {
		dp[i] = wl*dpl[i] - wu*dpu2[i]
	}
	return lz, dp, wl * dxl, -wu * dxu2
}

// LogProb returns log p(x); −Inf outside [Lower, Upper].
func (t Truncated[D]) LogProb(x float64) float64 {
	if x < t.Lower || x > t.Upper {
		return math.Inf(-1)
	}
	return t.Dist.LogProb(x) - t.LogNormalizer()
}

// LogProbPartials returns log p(x), ∂/∂x and the partials in Dist's parameters, normaliser
// included. (The bound partials are in LogNormalizerPartials, with the opposite sign.)
func (t Truncated[D]) LogProbPartials(x float64) (lp, dx float64, dp Partials) {
	if x < t.Lower || x > t.Upper {
		return math.Inf(-1), 0, Partials{}
	}
	lp, dx, dp = t.Dist.LogProbPartials(x)
	lz, dz, _, _ := t.LogNormalizerPartials()
	for i := range dp {
		dp[i] -= dz[i]
	}
	return lp - lz, dx, dp
}

// Rand draws from Dist until a draw lands in [Lower, Upper] (rejection). The expected number
// of proposals is 1/Z, so it is meant for truncation that keeps a fair share of the mass.
func (t Truncated[D]) Rand(r *rand.Rand) float64 {
	for {
		x := t.Dist.Rand(r)
		if x >= t.Lower && x <= t.Upper {
			return x
		}
	}
}
