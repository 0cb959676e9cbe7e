package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Laplace is the Laplace (double exponential) distribution with location Mu and scale Sigma,
// Stan's double_exponential(μ, σ):
//
//	log p(x) = −log 2 − log σ − |x−μ|/σ.
type Laplace struct{ Mu, Sigma float64 }

// LogProb returns log p(x).
func (d Laplace) LogProb(x float64) float64 {
	return -mathx.Log2 - math.Log(d.Sigma) - math.Abs(x-d.Mu)/d.Sigma
}

// LogProbGrad returns log p(x) and ∂/∂x = −sign(z)/σ, ∂/∂μ = sign(z)/σ, ∂/∂σ = (|z|−1)/σ,
// z = (x−μ)/σ (the subgradient 0 is used for sign(0)).
func (d Laplace) LogProbGrad(x float64) (lp, dx, dmu, dsigma float64) {
	s := 1 / d.Sigma
	z := (x - d.Mu) * s
	a := math.Abs(z)
	switch {
	case z > 0:
		dx = -s
	case z < 0:
		dx = s
	}
	return -mathx.Log2 - math.Log(d.Sigma) - a, dx, -dx, (a - 1) * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂μ, ∂σ}).
func (d Laplace) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dm, ds}
}

// laplaceLogCDF returns log F₀(t) for the standard Laplace and its t-derivative.
func laplaceLogCDF(t float64) (v, g float64) {
	if t < 0 {
		return t - mathx.Log2, 1
	}
	v = math.Log1p(-0.5 * math.Exp(-t))
	return v, math.Exp(-t - mathx.Log2 - v)
}

// LogCDF returns log F(x): z − log 2 for z < 0, log(1 − ½e^{−z}) otherwise.
func (d Laplace) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − F(x)).
func (d Laplace) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, μ, σ.
func (d Laplace) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := laplaceLogCDF(t)
	return locScale(v, g, t, d.Sigma)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, μ, σ.
func (d Laplace) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := laplaceLogCDF(-t)
	return locScale(v, -g, t, d.Sigma)
}

// Rand draws μ + σ(E₁ − E₂) with E₁, E₂ standard exponential.
func (d Laplace) Rand(r *rand.Rand) float64 {
	return d.Mu + d.Sigma*(r.ExpFloat64()-r.ExpFloat64())
}

// Mean returns μ.
func (d Laplace) Mean() float64 { return d.Mu }

// Variance returns 2σ².
func (d Laplace) Variance() float64 { return 2 * d.Sigma * d.Sigma }

// Logistic is the logistic distribution with location Mu and scale Sigma:
//
//	log p(x) = −z − 2 log(1 + e^{−z}) − log σ,  z = (x−μ)/σ,
//
// evaluated as −|z| − 2 log1p(e^{−|z|}) − log σ (the density is symmetric).
type Logistic struct{ Mu, Sigma float64 }

// LogProb returns log p(x).
func (d Logistic) LogProb(x float64) float64 {
	a := math.Abs(x-d.Mu) / d.Sigma
	return -a - 2*math.Log1p(math.Exp(-a)) - math.Log(d.Sigma)
}

// LogProbGrad returns log p(x) and ∂/∂x = −tanh(z/2)/σ, ∂/∂μ = −∂/∂x,
// ∂/∂σ = (z·tanh(z/2) − 1)/σ.
func (d Logistic) LogProbGrad(x float64) (lp, dx, dmu, dsigma float64) {
	s := 1 / d.Sigma
	z := (x - d.Mu) * s
	a := math.Abs(z)
	th := math.Tanh(0.5 * z)
	dx = -th * s
	return -a - 2*math.Log1p(math.Exp(-a)) - math.Log(d.Sigma), dx, -dx, (z*th - 1) * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂μ, ∂σ}).
func (d Logistic) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dm, ds}
}

// LogCDF returns log F(x) = −log(1 + e^{−z}).
func (d Logistic) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − F(x)) = −log(1 + e^{z}).
func (d Logistic) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, μ, σ.
func (d Logistic) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	return locScale(mathx.LogLogistic(t), mathx.Logistic(-t), t, d.Sigma)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, μ, σ.
func (d Logistic) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	return locScale(mathx.LogLogistic(-t), -mathx.Logistic(t), t, d.Sigma)
}

// Rand draws μ + σ·log(U/(1−U)).
func (d Logistic) Rand(r *rand.Rand) float64 {
	u := r.Float64()
	return d.Mu + d.Sigma*(math.Log(u)-math.Log1p(-u))
}

// Mean returns μ.
func (d Logistic) Mean() float64 { return d.Mu }

// Variance returns σ²π²/3.
func (d Logistic) Variance() float64 { return d.Sigma * d.Sigma * math.Pi * math.Pi / 3 }

// Exponential is the exponential distribution with rate Rate:
//
//	log p(x) = log λ − λx,  x ≥ 0.
type Exponential struct{ Rate float64 }

// LogProb returns log p(x); −Inf for x < 0, NaN for λ ≤ 0.
func (d Exponential) LogProb(x float64) float64 {
	if !(d.Rate > 0) {
		return math.NaN()
	}
	if x < 0 {
		return math.Inf(-1)
	}
	return math.Log(d.Rate) - d.Rate*x
}

// LogProbGrad returns log p(x), ∂/∂x = −λ and ∂/∂λ = 1/λ − x.
func (d Exponential) LogProbGrad(x float64) (lp, dx, drate float64) {
	return d.LogProb(x), -d.Rate, 1/d.Rate - x
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂λ}).
func (d Exponential) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dr := d.LogProbGrad(x)
	return lp, dx, Partials{dr}
}

// LogCDF returns log(1 − e^{−λx}).
func (d Exponential) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns −λx for x ≥ 0.
func (d Exponential) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x and λ.
func (d Exponential) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Rate > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return math.Inf(-1), 0, Partials{}
	}
	v := mathx.Log1mExp(-d.Rate * x)
	w := math.Exp(-d.Rate*x - v) // e^{−λx}/F
	return v, d.Rate * w, Partials{x * w}
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x and λ.
func (d Exponential) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Rate > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return 0, 0, Partials{}
	}
	return -d.Rate * x, -d.Rate, Partials{-x}
}

// Rand draws E/λ with E from r.ExpFloat64.
func (d Exponential) Rand(r *rand.Rand) float64 { return r.ExpFloat64() / d.Rate }

// Mean returns 1/λ.
func (d Exponential) Mean() float64 { return 1 / d.Rate }

// Variance returns 1/λ².
func (d Exponential) Variance() float64 { return 1 / (d.Rate * d.Rate) }

// Uniform is the uniform distribution on [Min, Max]: log p(x) = −log(Max − Min).
type Uniform struct{ Min, Max float64 }

// LogProb returns log p(x); −Inf outside [Min, Max], NaN if Min ≥ Max.
func (d Uniform) LogProb(x float64) float64 {
	if !(d.Min < d.Max) {
		return math.NaN()
	}
	if x < d.Min || x > d.Max {
		return math.Inf(-1)
	}
	return -math.Log(d.Max - d.Min)
}

// LogProbGrad returns log p(x), ∂/∂x = 0, ∂/∂Min = 1/(Max−Min), ∂/∂Max = −1/(Max−Min).
func (d Uniform) LogProbGrad(x float64) (lp, dx, dmin, dmax float64) {
	w := 1 / (d.Max - d.Min)
	return d.LogProb(x), 0, w, -w
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂Min, ∂Max}).
func (d Uniform) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, da, db := d.LogProbGrad(x)
	return lp, dx, Partials{da, db}
}

// LogCDF returns log((x − Min)/(Max − Min)) clamped to [−Inf, 0].
func (d Uniform) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log((Max − x)/(Max − Min)) clamped to [−Inf, 0].
func (d Uniform) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, Min, Max.
func (d Uniform) LogCDFPartials(x float64) (float64, float64, Partials) {
	switch {
	case !(d.Min < d.Max):
		return nanPartials()
	case x <= d.Min:
		return math.Inf(-1), 0, Partials{}
	case x >= d.Max:
		return 0, 0, Partials{}
	}
	w, u := 1/(d.Max-d.Min), 1/(x-d.Min)
	return math.Log((x - d.Min) * w), u, Partials{w - u, -w}
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, Min, Max.
func (d Uniform) LogCCDFPartials(x float64) (float64, float64, Partials) {
	switch {
	case !(d.Min < d.Max):
		return nanPartials()
	case x <= d.Min:
		return 0, 0, Partials{}
	case x >= d.Max:
		return math.Inf(-1), 0, Partials{}
	}
	w, u := 1/(d.Max-d.Min), 1/(d.Max-x)
	return math.Log((d.Max - x) * w), -u, Partials{w, u - w}
}

// Rand draws Min + (Max − Min)·U.
func (d Uniform) Rand(r *rand.Rand) float64 { return d.Min + (d.Max-d.Min)*r.Float64() }

// Mean returns (Min + Max)/2.
func (d Uniform) Mean() float64 { return 0.5 * (d.Min + d.Max) }

// Variance returns (Max − Min)²/12.
func (d Uniform) Variance() float64 { return (d.Max - d.Min) * (d.Max - d.Min) / 12 }
