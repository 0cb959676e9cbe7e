package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// xlogy returns a·log(x) with the convention 0·log 0 = 0 (densities at a support boundary).
func xlogy(a, x float64) float64 {
	if a == 0 && x == 0 {
		return 0
	}
	return a * math.Log(x)
}

// Gamma is the gamma distribution with shape Shape (α) and rate Rate (β), Stan's gamma(α, β):
//
//	log p(x) = α log β − lnΓ(α) + (α−1) log x − βx,  x ≥ 0.
type Gamma struct{ Shape, Rate float64 }

func (d Gamma) valid() bool {
	return d.Shape > 0 && d.Rate > 0 && !math.IsInf(d.Shape, 1) && !math.IsInf(d.Rate, 1)
}

// LogProb returns log p(x); −Inf for x < 0, NaN for α ≤ 0 or β ≤ 0.
func (d Gamma) LogProb(x float64) float64 {
	if !d.valid() {
		return math.NaN()
	}
	if x < 0 {
		return math.Inf(-1)
	}
	a := d.Shape
	return a*math.Log(d.Rate) - mathx.Lgamma(a) + xlogy(a-1, x) - d.Rate*x
}

// LogProbGrad returns log p(x) and ∂/∂x = (α−1)/x − β, ∂/∂α = log β − ψ(α) + log x,
// ∂/∂β = α/β − x.
func (d Gamma) LogProbGrad(x float64) (lp, dx, dshape, drate float64) {
	lp = d.LogProb(x)
	a, b := d.Shape, d.Rate
	return lp, (a-1)/x - b, math.Log(b) - mathx.Digamma(a) + math.Log(x), a/b - x
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂α, ∂β}).
func (d Gamma) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, da, db := d.LogProbGrad(x)
	return lp, dx, Partials{da, db}
}

// LogCDF returns log P(α, βx), the regularised lower incomplete gamma function.
func (d Gamma) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log Q(α, βx).
func (d Gamma) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

func (d Gamma) cdf(x float64, lower bool) (float64, float64, Partials) {
	if !d.valid() {
		return nanPartials()
	}
	if x <= 0 {
		if lower {
			return math.Inf(-1), 0, Partials{}
		}
		return 0, 0, Partials{}
	}
	lP, lQ, dP, dQ := mathx.LogRegIncGamma(d.Shape, d.Rate*x)
	v, da, sign := lP, dP, 1.0
	if !lower {
		v, da, sign = lQ, dQ, -1
	}
	dx := sign * math.Exp(d.LogProb(x)-v)
	// F depends on β only through βx: ∂/∂β = (x/β)·∂/∂x.
	return v, dx, Partials{da, x / d.Rate * dx}
}

// LogCDFPartials returns log F(x) and its partials in x, α, β.
// Cost: a series or continued fraction of O(√α + βx) steps.
func (d Gamma) LogCDFPartials(x float64) (float64, float64, Partials) { return d.cdf(x, true) }

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, α, β.
func (d Gamma) LogCCDFPartials(x float64) (float64, float64, Partials) { return d.cdf(x, false) }

// Rand draws a variate by Marsaglia & Tsang (2000), "A simple method for generating gamma
// variables", ACM TOMS 26(3), with the α < 1 boost Gamma(α+1)·U^{1/α}.
func (d Gamma) Rand(r *rand.Rand) float64 { return gammaRand(r, d.Shape) / d.Rate }

// Mean returns α/β.
func (d Gamma) Mean() float64 { return d.Shape / d.Rate }

// Variance returns α/β².
func (d Gamma) Variance() float64 { return d.Shape / (d.Rate * d.Rate) }

// gammaRand draws Gamma(a, 1) (Marsaglia & Tsang 2000). Expected cost for a ≥ 1: about 1.05
// normal and uniform draws.
func gammaRand(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return math.Exp(logGammaRand(r, a))
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// logGammaRand draws log G for G ~ Gamma(a, 1). For a < 1 it uses
// log G = log Gamma(a+1) + log(U)/a, which stays finite when G itself underflows (tiny a).
func logGammaRand(r *rand.Rand, a float64) float64 {
	if a >= 1 {
		return math.Log(gammaRand(r, a))
	}
	u := 1 - r.Float64() // (0, 1]
	return math.Log(gammaRand(r, a+1)) + math.Log(u)/a
}

// betaRand draws Beta(a, b) as X/(X+Y) with X ~ Gamma(a), Y ~ Gamma(b), in log space when a
// shape is below 1.
func betaRand(r *rand.Rand, a, b float64) float64 {
	if a >= 1 && b >= 1 {
		x := gammaRand(r, a)
		return x / (x + gammaRand(r, b))
	}
	lx, ly := logGammaRand(r, a), logGammaRand(r, b)
	return math.Exp(lx - mathx.LogAddExp(lx, ly))
}

// InverseGamma is the distribution of 1/X for X ~ Gamma(Shape, Scale), Stan's
// inv_gamma(α, β):
//
//	log p(x) = α log β − lnΓ(α) − (α+1) log x − β/x,  x > 0.
type InverseGamma struct{ Shape, Scale float64 }

func (d InverseGamma) valid() bool {
	return d.Shape > 0 && d.Scale > 0 && !math.IsInf(d.Shape, 1) && !math.IsInf(d.Scale, 1)
}

// LogProb returns log p(x); −Inf for x ≤ 0, NaN for α ≤ 0 or β ≤ 0.
func (d InverseGamma) LogProb(x float64) float64 {
	if !d.valid() {
		return math.NaN()
	}
	if x <= 0 {
		return math.Inf(-1)
	}
	a := d.Shape
	return a*math.Log(d.Scale) - mathx.Lgamma(a) - (a+1)*math.Log(x) - d.Scale/x
}

// LogProbGrad returns log p(x) and ∂/∂x = −(α+1)/x + β/x², ∂/∂α = log β − ψ(α) − log x,
// ∂/∂β = α/β − 1/x.
func (d InverseGamma) LogProbGrad(x float64) (lp, dx, dshape, dscale float64) {
	lp = d.LogProb(x)
	a, b := d.Shape, d.Scale
	ix := 1 / x
	return lp, (b*ix - a - 1) * ix, math.Log(b) - mathx.Digamma(a) - math.Log(x), a/b - ix
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂α, ∂β}).
func (d InverseGamma) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, da, db := d.LogProbGrad(x)
	return lp, dx, Partials{da, db}
}

// LogCDF returns log Q(α, β/x).
func (d InverseGamma) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log P(α, β/x).
func (d InverseGamma) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

func (d InverseGamma) cdf(x float64, lower bool) (float64, float64, Partials) {
	if !d.valid() {
		return nanPartials()
	}
	if x <= 0 {
		if lower {
			return math.Inf(-1), 0, Partials{}
		}
		return 0, 0, Partials{}
	}
	lP, lQ, dP, dQ := mathx.LogRegIncGamma(d.Shape, d.Scale/x)
	v, da, sign := lQ, dQ, 1.0
	if !lower {
		v, da, sign = lP, dP, -1
	}
	dx := sign * math.Exp(d.LogProb(x)-v)
	// F depends on β only through β/x: ∂/∂β = −(x/β)·∂/∂x.
	return v, dx, Partials{da, -x / d.Scale * dx}
}

// LogCDFPartials returns log F(x) and its partials in x, α, β.
func (d InverseGamma) LogCDFPartials(x float64) (float64, float64, Partials) {
	return d.cdf(x, true)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, α, β.
func (d InverseGamma) LogCCDFPartials(x float64) (float64, float64, Partials) {
	return d.cdf(x, false)
}

// Rand draws β/G with G ~ Gamma(α, 1).
func (d InverseGamma) Rand(r *rand.Rand) float64 { return d.Scale / gammaRand(r, d.Shape) }

// Mean returns β/(α−1) for α > 1, +Inf otherwise.
func (d InverseGamma) Mean() float64 {
	if d.Shape > 1 {
		return d.Scale / (d.Shape - 1)
	}
	return math.Inf(1)
}

// Variance returns β²/((α−1)²(α−2)) for α > 2, +Inf otherwise.
func (d InverseGamma) Variance() float64 {
	if d.Shape > 2 {
		a1 := d.Shape - 1
		return d.Scale * d.Scale / (a1 * a1 * (d.Shape - 2))
	}
	return math.Inf(1)
}

// Beta is the beta distribution with shapes Alpha and Beta:
//
//	log p(x) = (α−1) log x + (β−1) log(1−x) − log B(α, β),  x ∈ [0, 1].
type Beta struct{ Alpha, Beta float64 }

func (d Beta) valid() bool {
	return d.Alpha > 0 && d.Beta > 0 && !math.IsInf(d.Alpha, 1) && !math.IsInf(d.Beta, 1)
}

// LogProb returns log p(x); −Inf outside [0, 1], NaN for α ≤ 0 or β ≤ 0.
func (d Beta) LogProb(x float64) float64 {
	if !d.valid() {
		return math.NaN()
	}
	if x < 0 || x > 1 {
		return math.Inf(-1)
	}
	return xlogy(d.Alpha-1, x) + xlogy(d.Beta-1, 1-x) - mathx.LogBeta(d.Alpha, d.Beta)
}

// LogProbGrad returns log p(x) and ∂/∂x = (α−1)/x − (β−1)/(1−x),
// ∂/∂α = log x − ψ(α) + ψ(α+β), ∂/∂β = log(1−x) − ψ(β) + ψ(α+β).
func (d Beta) LogProbGrad(x float64) (lp, dx, dalpha, dbeta float64) {
	lp = d.LogProb(x)
	a, b := d.Alpha, d.Beta
	pab := mathx.Digamma(a + b)
	return lp, (a-1)/x - (b-1)/(1-x), math.Log(x) - mathx.Digamma(a) + pab,
		math.Log1p(-x) - mathx.Digamma(b) + pab
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂α, ∂β}).
func (d Beta) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, da, db := d.LogProbGrad(x)
	return lp, dx, Partials{da, db}
}

// LogCDF returns log I_x(α, β).
func (d Beta) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − I_x(α, β)).
func (d Beta) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

func (d Beta) cdf(x float64, lower bool) (float64, float64, Partials) {
	switch {
	case !d.valid():
		return nanPartials()
	case x <= 0 && lower, x >= 1 && !lower:
		return math.Inf(-1), 0, Partials{}
	case x <= 0, x >= 1:
		return 0, 0, Partials{}
	}
	g := mathx.LogRegIncBeta(d.Alpha, d.Beta, x, 1-x)
	if lower {
		return g.LogI, math.Exp(d.LogProb(x) - g.LogI), Partials{g.DLogIda, g.DLogIdb}
	}
	return g.LogJ, -math.Exp(d.LogProb(x) - g.LogJ), Partials{g.DLogJda, g.DLogJdb}
}

// LogCDFPartials returns log F(x) and its partials in x, α, β.
// Cost: an incomplete beta continued fraction, O(√max(α, β)) steps.
func (d Beta) LogCDFPartials(x float64) (float64, float64, Partials) { return d.cdf(x, true) }

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, α, β.
func (d Beta) LogCCDFPartials(x float64) (float64, float64, Partials) { return d.cdf(x, false) }

// Rand draws X/(X+Y) with X ~ Gamma(α), Y ~ Gamma(β) (in log space when a shape is below 1,
// so tiny shapes do not return 0/0).
func (d Beta) Rand(r *rand.Rand) float64 { return betaRand(r, d.Alpha, d.Beta) }

// Mean returns α/(α+β).
func (d Beta) Mean() float64 { return d.Alpha / (d.Alpha + d.Beta) }

// Variance returns αβ/((α+β)²(α+β+1)).
func (d Beta) Variance() float64 {
	s := d.Alpha + d.Beta
	return d.Alpha * d.Beta / (s * s * (s + 1))
}
