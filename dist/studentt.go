package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// StudentT is Student's t distribution with Nu degrees of freedom, location Mu and scale
// Sigma:
//
//	log p(x) = lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ log(νπ) − log σ − (ν+1)/2 · log(1 + z²/ν),
//	z = (x−μ)/σ.
type StudentT struct{ Nu, Mu, Sigma float64 }

// studentTConst returns lnΓ((ν+1)/2) − lnΓ(ν/2) − ½ log(νπ).
func studentTConst(nu float64) float64 {
	return mathx.Lgamma(0.5*(nu+1)) - mathx.Lgamma(0.5*nu) - 0.5*(math.Log(nu)+mathx.LogPi)
}

// LogProb returns log p(x); NaN if ν ≤ 0 or σ ≤ 0. Cost: two lgammas and two logs.
func (d StudentT) LogProb(x float64) float64 {
	if !(d.Nu > 0) || !(d.Sigma > 0) {
		return math.NaN()
	}
	z := (x - d.Mu) / d.Sigma
	return studentTConst(d.Nu) - math.Log(d.Sigma) - 0.5*(d.Nu+1)*math.Log1p(z*z/d.Nu)
}

// LogProbGrad returns log p(x) and its partials. With z = (x−μ)/σ and w = (ν+1)/(ν+z²):
// ∂/∂x = −zw/σ, ∂/∂μ = zw/σ, ∂/∂σ = (z²w − 1)/σ,
// ∂/∂ν = ½ψ((ν+1)/2) − ½ψ(ν/2) − 1/(2ν) − ½ log(1+z²/ν) + z²w/(2ν).
func (d StudentT) LogProbGrad(x float64) (lp, dx, dnu, dmu, dsigma float64) {
	if !(d.Nu > 0) || !(d.Sigma > 0) {
		n := math.NaN()
		return n, n, n, n, n
	}
	nu := d.Nu
	s := 1 / d.Sigma
	z := (x - d.Mu) * s
	z2 := z * z
	l1p := math.Log1p(z2 / nu)
	w := (nu + 1) / (nu + z2)
	lp = studentTConst(nu) - math.Log(d.Sigma) - 0.5*(nu+1)*l1p
	dx = -z * w * s
	dnu = 0.5*(mathx.Digamma(0.5*(nu+1))-mathx.Digamma(0.5*nu)-1/nu-l1p) + 0.5*z2*w/nu
	return lp, dx, dnu, -dx, (z2*w - 1) * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂ν, ∂μ, ∂σ}).
func (d StudentT) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dn, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dn, dm, ds}
}

// studentTail returns, for the standard t with ν degrees of freedom, log I and log(1 − I)
// where I = P(|T| > |t|) = I_{ν/(ν+t²)}(ν/2, ½) (A&S 26.7.1), and their ν-derivatives
// (through both the shape ν/2 and the argument ν/(ν+t²)).
func studentTail(nu, t float64) (lI, lJ, dI, dJ float64) {
	t2 := t * t
	x := nu / (nu + t2)
	y := t2 / (nu + t2)
	if math.IsInf(t2, 1) {
		x, y = 0, 1
	}
	g := mathx.LogRegIncBeta(0.5*nu, 0.5, x, y)
	// ∂I/∂x · ∂x/∂ν / I with ∂I/∂x = x^{a−1}y^{b−1}/B(a,b), ∂x/∂ν = xy/ν.
	lk := 0.5*nu*math.Log(x) + 0.5*math.Log(y) - mathx.LogBeta(0.5*nu, 0.5) - math.Log(nu)
	dI, dJ = 0.5*g.DLogIda, 0.5*g.DLogJda
	if y > 0 && x > 0 {
		dI += math.Exp(lk - g.LogI)
		dJ -= math.Exp(lk - g.LogJ)
	}
	return g.LogI, g.LogJ, dI, dJ
}

// studentTLogCDF returns log F(t) of the standard t, d/dt log F and ∂/∂ν log F; lower selects
// F (true) or 1 − F (false).
func studentTLogCDF(nu, t float64, lower bool) (v, g, dnu float64) {
	lI, _, dI, _ := studentTail(nu, t)
	lpdf := studentTConst(nu) - 0.5*(nu+1)*math.Log1p(t*t/nu)
	if (t < 0) == lower {
		// The tail beyond |t| on this side: ½I.
		v = lI - mathx.Log2
		dnu = dI
	} else {
		v = math.Log1p(-0.5 * math.Exp(lI))
		dnu = -0.5 * math.Exp(lI-v) * dI
	}
	g = math.Exp(lpdf - v)
	if !lower {
		g = -g
	}
	return v, g, dnu
}

// LogCDF returns log F(x) via the regularised incomplete beta function (A&S 26.7.1).
func (d StudentT) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − F(x)).
func (d StudentT) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

func (d StudentT) cdf(x float64, lower bool) (float64, float64, Partials) {
	if !(d.Nu > 0) || !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g, dn := studentTLogCDF(d.Nu, t, lower)
	v, dx, dp := locScale(v, g, t, d.Sigma)
	return v, dx, Partials{dn, dp[0], dp[1]}
}

// LogCDFPartials returns log F(x) and its partials in x, ν, μ, σ. Cost: an incomplete beta
// continued fraction, O(√ν) steps.
func (d StudentT) LogCDFPartials(x float64) (float64, float64, Partials) { return d.cdf(x, true) }

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, ν, μ, σ.
func (d StudentT) LogCCDFPartials(x float64) (float64, float64, Partials) {
	return d.cdf(x, false)
}

// Rand draws μ + σZ/√(W/ν) with Z standard normal and W ~ χ²_ν = 2·Gamma(ν/2).
func (d StudentT) Rand(r *rand.Rand) float64 {
	w := 2 * gammaRand(r, 0.5*d.Nu)
	return d.Mu + d.Sigma*r.NormFloat64()*math.Sqrt(d.Nu/w)
}

// Mean returns μ for ν > 1 (NaN otherwise).
func (d StudentT) Mean() float64 {
	if d.Nu > 1 {
		return d.Mu
	}
	return math.NaN()
}

// Variance returns σ²ν/(ν−2) for ν > 2, +Inf for 1 < ν ≤ 2, NaN otherwise.
func (d StudentT) Variance() float64 {
	switch {
	case d.Nu > 2:
		return d.Sigma * d.Sigma * d.Nu / (d.Nu - 2)
	case d.Nu > 1:
		return math.Inf(1)
	}
	return math.NaN()
}

// HalfStudentT is StudentT{Nu, 0, Sigma} folded onto x ≥ 0: log p = log 2 + the t density.
type HalfStudentT struct{ Nu, Sigma float64 }

// LogProb returns log p(x); −Inf for x < 0.
func (d HalfStudentT) LogProb(x float64) float64 {
	if x < 0 {
		return math.Inf(-1)
	}
	return mathx.Log2 + StudentT{d.Nu, 0, d.Sigma}.LogProb(x)
}

// LogProbGrad returns log p(x) and its partials in x, ν and σ (as StudentT's).
func (d HalfStudentT) LogProbGrad(x float64) (lp, dx, dnu, dsigma float64) {
	if x < 0 {
		return math.Inf(-1), 0, 0, 0
	}
	lp, dx, dnu, _, dsigma = StudentT{d.Nu, 0, d.Sigma}.LogProbGrad(x)
	return lp + mathx.Log2, dx, dnu, dsigma
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂ν, ∂σ}).
func (d HalfStudentT) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dn, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dn, ds}
}

// LogCDF returns log F(x) = log(1 − I_{ν/(ν+t²)}(ν/2, ½)), t = x/σ.
func (d HalfStudentT) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(1 − F(x)) = log I_{ν/(ν+t²)}(ν/2, ½).
func (d HalfStudentT) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

func (d HalfStudentT) cdf(x float64, lower bool) (float64, float64, Partials) {
	if !(d.Nu > 0) || !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		if lower {
			return math.Inf(-1), 0, Partials{}
		}
		return 0, 0, Partials{}
	}
	t := x / d.Sigma
	lI, lJ, dI, dJ := studentTail(d.Nu, t)
	lpdf := mathx.Log2 + studentTConst(d.Nu) - 0.5*(d.Nu+1)*math.Log1p(t*t/d.Nu)
	v, dn, g := lJ, dJ, 0.0
	if lower {
		g = math.Exp(lpdf - v)
	} else {
		v, dn = lI, dI
		g = -math.Exp(lpdf - v)
	}
	v, dx, dp := locScale(v, g, t, d.Sigma)
	return v, dx, Partials{dn, dp[1]}
}

// LogCDFPartials returns log F(x) and its partials in x, ν, σ.
func (d HalfStudentT) LogCDFPartials(x float64) (float64, float64, Partials) {
	return d.cdf(x, true)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, ν, σ.
func (d HalfStudentT) LogCCDFPartials(x float64) (float64, float64, Partials) {
	return d.cdf(x, false)
}

// Rand draws |T| for T ~ StudentT{Nu, 0, Sigma}.
func (d HalfStudentT) Rand(r *rand.Rand) float64 {
	return math.Abs(StudentT{d.Nu, 0, d.Sigma}.Rand(r))
}

// Mean returns 2σ√(ν/π)·Γ((ν+1)/2)/(Γ(ν/2)(ν−1)) for ν > 1, +Inf otherwise.
func (d HalfStudentT) Mean() float64 {
	if !(d.Nu > 1) {
		return math.Inf(1)
	}
	nu := d.Nu
	return 2 * d.Sigma * math.Sqrt(nu/math.Pi) / (nu - 1) *
		math.Exp(mathx.Lgamma(0.5*(nu+1))-mathx.Lgamma(0.5*nu))
}

// Variance returns σ²ν/(ν−2) − Mean² for ν > 2, +Inf otherwise.
func (d HalfStudentT) Variance() float64 {
	if !(d.Nu > 2) {
		return math.Inf(1)
	}
	m := d.Mean()
	return d.Sigma*d.Sigma*d.Nu/(d.Nu-2) - m*m
}

// Cauchy is the Cauchy distribution with location Mu and scale Sigma:
//
//	log p(x) = −log π − log σ − log(1 + z²),  z = (x−μ)/σ.
type Cauchy struct{ Mu, Sigma float64 }

// LogProb returns log p(x).
func (d Cauchy) LogProb(x float64) float64 {
	z := (x - d.Mu) / d.Sigma
	return -mathx.LogPi - math.Log(d.Sigma) - math.Log1p(z*z)
}

// LogProbGrad returns log p(x) and ∂/∂x = −2z/(σ(1+z²)), ∂/∂μ = −∂/∂x,
// ∂/∂σ = (z²−1)/(σ(1+z²)).
func (d Cauchy) LogProbGrad(x float64) (lp, dx, dmu, dsigma float64) {
	s := 1 / d.Sigma
	z := (x - d.Mu) * s
	q := 1 / (1 + z*z)
	dx = -2 * z * q * s
	return -mathx.LogPi - math.Log(d.Sigma) - math.Log1p(z*z), dx, -dx, (z*z - 1) * q * s
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂μ, ∂σ}).
func (d Cauchy) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, dm, ds := d.LogProbGrad(x)
	return lp, dx, Partials{dm, ds}
}

// cauchyLogCDF returns log F₀(t) = log(½ + atan(t)/π) for the standard Cauchy and its
// t-derivative, using atan(−1/t)/π for t < 0 to keep the lower tail accurate.
func cauchyLogCDF(t float64) (v, g float64) {
	switch {
	case t == 0:
		return -mathx.Log2, 2 / math.Pi
	case t < 0:
		v = math.Log(math.Atan(-1/t) / math.Pi)
	default:
		v = math.Log1p(-math.Atan(1/t) / math.Pi)
	}
	return v, math.Exp(-mathx.LogPi - math.Log1p(t*t) - v)
}

// LogCDF returns log(½ + atan(z)/π).
func (d Cauchy) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(½ − atan(z)/π).
func (d Cauchy) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x, μ, σ.
func (d Cauchy) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := cauchyLogCDF(t)
	return locScale(v, g, t, d.Sigma)
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x, μ, σ.
func (d Cauchy) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	t := (x - d.Mu) / d.Sigma
	v, g := cauchyLogCDF(-t)
	return locScale(v, -g, t, d.Sigma)
}

// Rand draws μ + σ·tan(π(U − ½)).
func (d Cauchy) Rand(r *rand.Rand) float64 {
	return d.Mu + d.Sigma*math.Tan(math.Pi*(r.Float64()-0.5))
}

// HalfCauchy is Cauchy{0, Sigma} folded onto x ≥ 0: log p = log 2 − log π − log σ − log(1+z²).
type HalfCauchy struct{ Sigma float64 }

// LogProb returns log p(x); −Inf for x < 0.
func (d HalfCauchy) LogProb(x float64) float64 {
	if x < 0 {
		return math.Inf(-1)
	}
	return mathx.Log2 + Cauchy{0, d.Sigma}.LogProb(x)
}

// LogProbGrad returns log p(x) and its partials in x and σ.
func (d HalfCauchy) LogProbGrad(x float64) (lp, dx, dsigma float64) {
	if x < 0 {
		return math.Inf(-1), 0, 0
	}
	lp, dx, _, dsigma = Cauchy{0, d.Sigma}.LogProbGrad(x)
	return lp + mathx.Log2, dx, dsigma
}

// LogProbPartials is LogProbGrad in the Continuous shape (Partials{∂σ}).
func (d HalfCauchy) LogProbPartials(x float64) (float64, float64, Partials) {
	lp, dx, ds := d.LogProbGrad(x)
	return lp, dx, Partials{ds}
}

// LogCDF returns log(2·atan(x/σ)/π).
func (d HalfCauchy) LogCDF(x float64) float64 {
	v, _, _ := d.LogCDFPartials(x)
	return v
}

// LogCCDF returns log(2·atan(σ/x)/π).
func (d HalfCauchy) LogCCDF(x float64) float64 {
	v, _, _ := d.LogCCDFPartials(x)
	return v
}

// LogCDFPartials returns log F(x) and its partials in x and σ.
func (d HalfCauchy) LogCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return math.Inf(-1), 0, Partials{}
	}
	t := x / d.Sigma
	// F = 2 atan(t)/π = 1 − 2 atan(1/t)/π; pick the accurate form.
	var v float64
	if t < 1 {
		v = math.Log(2 * math.Atan(t) / math.Pi)
	} else {
		v = math.Log1p(-2 * math.Atan(1/t) / math.Pi)
	}
	g := math.Exp(mathx.Log2 - mathx.LogPi - math.Log1p(t*t) - v)
	v, dx, dp := locScale(v, g, t, d.Sigma)
	return v, dx, Partials{dp[1]}
}

// LogCCDFPartials returns log(1 − F(x)) and its partials in x and σ.
func (d HalfCauchy) LogCCDFPartials(x float64) (float64, float64, Partials) {
	if !(d.Sigma > 0) {
		return nanPartials()
	}
	if x <= 0 {
		return 0, 0, Partials{}
	}
	t := x / d.Sigma
	v, g := cauchyLogCDF(-t)
	v, dx, dp := locScale(v+mathx.Log2, -g, t, d.Sigma)
	return v, dx, Partials{dp[1]}
}

// Rand draws σ|tan(π(U − ½))|.
func (d HalfCauchy) Rand(r *rand.Rand) float64 {
	return math.Abs(Cauchy{0, d.Sigma}.Rand(r))
}
