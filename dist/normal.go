package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// nanPartials is the result of a CDF method at an invalid parameter.
func nanPartials() (float64, float64, Partials) {
	n := math.NaN()
	return n, n, Partials{n, n, n}
}

// locScale converts log F₀(t) = v and g = d/dt log F₀(t) at t = (x−μ)/σ into the partials of
// log F₀((x−μ)/σ) in x, μ and σ.
func locScale(v, g, t, sigma float64) (float64, float64, Partials) {
	g /= sigma
	return v, g, Partials{-g, -g * t}
}

// Normal is the normal distribution N(Mu, Sigma²).
//
//	log p(x) = −½((x−μ)/σ)² − log σ − ½ log 2π
type Normal struct{ Mu, Sigma float64 }

// LogProb returns log p(x). Cost: one log.
func (d Normal) LogProb(x float64) float64 {
	z := (x - d.Mu) / d.Sigma
	return -0.5*z*z - math.Log(d.Sigma) - mathx.LogSqrt2Pi
}

// LogProbGrad returns log p(x) and its partials: ∂/∂x = −z/σ, ∂/∂μ = z/σ,
// ∂/∂σ = (z²−1)/σ with z = (x−μ)/σ.
func (d Normal) LogProbGrad(x float64) (lp, dx, dmu, dsigma float64) {
	s := 1 / d.Sigma
	z := (x - d.Mu) * s
	dx = -z * s
	return -0.5*z*z - math.Log(d.Sigma) - mathx.LogSqrt2Pi, dx, -dx, (z*z - 1) * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂μ, ∂σ}).
func (d Normal) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dm, ds}
}

// LogCDF returns log Φ((x−μ)/σ), accurate far into both tails (mathx.LogNormCDF).
func (d Normal) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − Φ((x−μ)/σ)) = log Φ((μ−x)/σ).
func (d Normal) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, μ, σ.
func (d Normal) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := mathx.LogNormCDF(t)
	return locScale(v, g, t, d.Sigma)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, μ, σ.
func (d Normal) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := mathx.LogNormCDF(-t)
	return locScale(v, -g, t, d.Sigma)
}

// Rand draws μ + σZ with Z from r.NormFloat64.
func (d Normal) Rand(r *rand.Rand) float64 { return d.Mu + d.Sigma*r.NormFloat64() }

// Mean returns μ.
func (d Normal) Mean() float64 { return d.Mu }

// Variance returns σ².
func (d Normal) Variance() float64 { return d.Sigma * d.Sigma }

// HalfNormal is the normal N(0, Sigma²) folded onto x ≥ 0 (what Stan users get from
// `real<lower=0> x; x ~ normal(0, σ)` with the normaliser kept):
//
//	log p(x) = log 2 − ½(x/σ)² − log σ − ½ log 2π,  x ≥ 0
type HalfNormal struct{ Sigma float64 }

// LogProb returns log p(x); −Inf for x < 0.
func (d HalfNormal) LogProb(x float64) float64 {
	if x < 0 {
		return math.Inf(-1)
	}
	z := x / d.Sigma
	return mathx.Log2 - 0.5*z*z - math.Log(d.Sigma) - mathx.LogSqrt2Pi
}

// LogProbGrad returns log p(x), ∂/∂x = −x/σ² and ∂/∂σ = (z²−1)/σ.
func (d HalfNormal) LogProbGrad(x float64) (lp, dx, dsigma float64) {
	if x < 0 {
		return math.Inf(-1), 0, 0
	}
	lp, dx, _, dsigma = Normal{0, d.Sigma}.LogProbGrad(x)
	return lp + mathx.Log2, dx, dsigma
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂σ}).
func (d HalfNormal) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, ds := d.LogProbGrad(x)
	return lp, dx, Partials{ds}
}

// LogCDF returns log(2Φ(x/σ) − 1) = log erf(x/(σ√2)).
func (d HalfNormal) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(2Φ(−x/σ)).
func (d HalfNormal) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x and σ.
func (d HalfNormal) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return math.Inf(-1), 0, Partials{}
	}
	// F = 1 − 2Φ(−t), log F = log1p(−e^{log 2Φ(−t)}); dF/dt = 2φ(t).
	t := x / d.Sigma
	ls, _ := mathx.LogNormCDF(-t)
	ls += mathx.Log2
	v := mathx.Log1mExp(ls)
	g := math.Exp(mathx.Log2 - 0.5*t*t - mathx.LogSqrt2Pi - v)
	v, dx, dp := locScale(v, g, t, d.Sigma)
	return v, dx, Partials{dp[1]}
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x and σ.
func (d HalfNormal) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return 0, 0, Partials{}
	}
	t := x / d.Sigma
	v, g := mathx.LogNormCDF(-t)
	v, dx, dp := locScale(v+mathx.Log2, -g, t, d.Sigma)
	return v, dx, Partials{dp[1]}
}

// Rand draws σ|Z|.
func (d HalfNormal) Rand(r *rand.Rand) float64 { return d.Sigma * math.Abs(r.NormFloat64()) }

// Mean returns σ√(2/π).
func (d HalfNormal) Mean() float64 { return d.Sigma * math.Sqrt(2/math.Pi) }

// Variance returns σ²(1 − 2/π).
func (d HalfNormal) Variance() float64 { return d.Sigma * d.Sigma * (1 - 2/math.Pi) }

// LogNormal is the distribution of exp(Y) for Y ~ N(Mu, Sigma²):
//
//	log p(x) = −log x − ½((log x − μ)/σ)² − log σ − ½ log 2π,  x > 0
type LogNormal struct{ Mu, Sigma float64 }

// LogProb returns log p(x); −Inf for x ≤ 0.
func (d LogNormal) LogProb(x float64) float64 {
	if x <= 0 {
		return math.Inf(-1)
	}
	lx := math.Log(x)
	z := (lx - d.Mu) / d.Sigma
	return -0.5*z*z - lx - math.Log(d.Sigma) - mathx.LogSqrt2Pi
}

// LogProbGrad returns log p(x), ∂/∂x = −(1 + z/σ)/x, ∂/∂μ = z/σ, ∂/∂σ = (z²−1)/σ with
// z = (log x − μ)/σ.
func (d LogNormal) LogProbGrad(x float64) (lp, dx, dmu, dsigma float64) {
	if x <= 0 {
		return math.Inf(-1), 0, 0, 0
	}
	lx := math.Log(x)
	s := 1 / d.Sigma
	z := (lx - d.Mu) * s
	dmu = z * s
	return -0.5*z*z - lx - math.Log(d.Sigma) - mathx.LogSqrt2Pi, -(1 + dmu) / x, dmu, (z*z - 1) * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂μ, ∂σ}).
func (d LogNormal) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dm, ds}
}

// LogCDF returns log Φ((log x − μ)/σ).
func (d LogNormal) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log Φ((μ − log x)/σ).
func (d LogNormal) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, μ, σ.
func (d LogNormal) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return math.Inf(-1), 0, Partials{}
	}
	v, dx, dp := Normal(d).LogCDFPartials(math.Log(x))
	return v, dx / x, dp
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, μ, σ.
func (d LogNormal) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return 0, 0, Partials{}
	}
	v, dx, dp := Normal(d).LogCCDFPartials(math.Log(x))
	return v, dx / x, dp
}

// Rand draws exp(μ + σZ).
func (d LogNormal) Rand(r *rand.Rand) float64 { return math.Exp(d.Mu + d.Sigma*r.NormFloat64()) }

// Mean returns exp(μ + σ²/2).
func (d LogNormal) Mean() float64 { return math.Exp(d.Mu + 0.5*d.Sigma*d.Sigma) }

// Variance returns (exp(σ²) − 1)·exp(2μ + σ²).
func (d LogNormal) Variance() float64 {
	s2 := d.Sigma * d.Sigma
	return math.Expm1(s2) * math.Exp(2*d.Mu+s2)
}
