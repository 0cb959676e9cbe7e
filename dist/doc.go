// Package dist holds probability distributions as plain float64 code: log densities with
// their full normalising constants, analytic partial derivatives, log CDFs for truncation, and
// samplers that take a *rand.Rand (math/rand/v2). Package density puts the same formulas on
// the AD tape.
//
// Distributions are value structs with exported parameters, gonum style:
//
//	d := dist.Normal{Mu: 0, Sigma: 2}
//	lp := d.LogProb(1.5)
//	lp, dx, dmu, dsigma := d.LogProbGrad(1.5)
//	x := d.Rand(r)
//
// Parameterisations follow Stan: Gamma(shape α, rate β), InverseGamma(shape α, scale β),
// Laplace = Stan's double_exponential(μ, σ), NegBinomial2(μ, φ) with variance μ + μ²/φ,
// *Logit / *Log forms take the linear predictor.
//
// Conventions for bad input (never a panic):
//   - an invalid parameter (σ ≤ 0, ν ≤ 0, shape ≤ 0, Min ≥ Max, η ≤ 0 for LKJ, N < 0, NaN)
//     gives a NaN log density: the point is not in the model's domain, and a sampler or
//     optimiser must reject it rather than treat it as a legitimate zero;
//   - a valid parameter with an outcome outside the support (x < 0 for Gamma, x ∉ [0,1] for
//     Beta, k ∉ {0,…,N} for Binomial) gives −Inf: probability zero;
//   - the partials returned with a NaN or −Inf value are unspecified.
//
// Multivariate distributions take slices and write gradients into caller-owned slices
// ("dst first" in spirit: a nil destination is skipped, a wrong length panics with the
// function and argument named). Matrices are dense row-major K×K slices; Cholesky factors are
// lower triangular and their upper part is never read.
//
// Continuous univariate distributions implement Continuous, which is what Truncated needs.
// Every method is allocation free.
package dist

import "math/rand/v2"

// Partials holds the partial derivatives of a log density or log CDF with respect to the
// parameters of a univariate distribution, in the order of the struct's fields (StudentT has
// three: Nu, Mu, Sigma; unused entries are zero).
type Partials [3]float64

// Continuous is a univariate continuous distribution with log CDFs and parameter partials in
// a uniform shape, as generic code (Truncated, package density) needs them.
type Continuous interface {
	// LogProb returns log p(x).
	LogProb(x float64) float64
	// LogCDF returns log F(x) = log P(X ≤ x).
	LogCDF(x float64) float64
	// LogCCDF returns log(1 − F(x)) = log P(X > x).
	LogCCDF(x float64) float64
	// LogProbPartials returns log p(x), ∂/∂x and the parameter partials.
	LogProbPartials(x float64) (lp, dx float64, dp Partials)
	// LogCDFPartials returns log F(x), ∂/∂x and the parameter partials.
	LogCDFPartials(x float64) (v, dx float64, dp Partials)
	// LogCCDFPartials returns log(1 − F(x)), ∂/∂x and the parameter partials.
	LogCCDFPartials(x float64) (v, dx float64, dp Partials)
	// Rand draws a variate.
	Rand(r *rand.Rand) float64
}
