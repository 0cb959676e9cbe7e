package bfvi

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// paperTauScale is the reference code's τ = exp(paperTauScale·τ′).
const paperTauScale = 0.1

// PaperEightSchools is E5's eight schools in the parameterisation of the BF-VI reference code
// (R/multidimensional_script.R, DATA = '8SCHOOLS' / '8SCHOOLS_CP'; papers.md §1.2): z = (τ′, μ,
// θ_1..θ_8) with τ = exp(0.1·τ′) first, then μ, then θ (Centred) or θ̃ (non-centred, θ_j =
// μ + τ·θ̃_j); μ ~ N(0, 5²), τ ~ half-Cauchy(0, 5), θ_j ~ N(μ, τ²) or θ̃_j ~ N(0, 1), y_j ~
// N(θ_j, σ_j²), with every normalising constant (the code's log densities are TFP's full
// ones, the half-Cauchy's log 2 included), so the ELBO is comparable with the paper's.
// Without Jacobian it is the code's target: the log-Jacobian log(0.1) + 0.1·τ′ of τ′ ↦ τ is
// left out, which makes it improper as τ′ → −∞ (papers.md §1.2); with Jacobian it is the
// proper posterior, whose evidence is the model's. Cost O(J) per evaluation.
type PaperEightSchools struct{ Centred, Jacobian bool }

// Dim is 10.
func (PaperEightSchools) Dim() int { return 10 }

var (
	halfLog2Pi    = 0.5 * math.Log(2*math.Pi)
	esSumLogSigma = func() float64 {
		s := 0.0
		for _, v := range esSigma {
			s += math.Log(v)
		}
		return s
	}()
)

// LogDensity is the log posterior density of z, normalised as the reference code's.
func (m PaperEightSchools) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	tp, mu, th := t.Index(z, 0), t.Index(z, 1), t.Slice(z, 2, 10)
	s := t.MulC(tp, paperTauScale) // log τ
	tau := t.Exp(s)
	// N(μ; 0, 5) and half-Cauchy(τ; 0, 5) = 2/(5π(1 + (τ/5)²)).
	lp := t.AddC(t.MulC(t.Square(mu), -1.0/50), -math.Log(5)-halfLog2Pi)
	lp = t.Add(lp, t.AddC(t.Neg(t.Log1p(t.Square(t.MulC(tau, 0.2)))), math.Log(2)-math.Log(5*math.Pi)))
	if m.Jacobian {
		lp = t.Add(lp, t.AddC(s, math.Log(paperTauScale)))
	}
	const J = 8
	theta := th
	if m.Centred {
		// Σ log N(θ_j; μ, τ) = −Σ(θ_j − μ)²/(2τ²) − J·log τ − J/2·log 2π.
		ss := t.Sum(t.Square(t.Sub(th, mu)))
		lp = t.Sub(lp, t.Add(t.MulC(t.Mul(ss, t.Exp(t.MulC(s, -2))), 0.5), t.MulC(s, J)))
	} else {
		lp = t.Sub(lp, t.MulC(t.Sum(t.Square(th)), 0.5))
		theta = t.Add(mu, t.Mul(tau, th))
	}
	lp = t.AddC(lp, -J*halfLog2Pi)
	r := t.Div(t.Sub(t.ConstRef(esY), theta), t.ConstRef(esSigma))
	return t.AddC(t.Sub(lp, t.MulC(t.Sum(t.Square(r)), 0.5)), -esSumLogSigma-J*halfLog2Pi)
}

// logJacobian is the term the target without Jacobian leaves out at z: log(0.1) + 0.1·τ′.
func (PaperEightSchools) logJacobian(z []float64) float64 {
	return math.Log(paperTauScale) + paperTauScale*z[0]
}

// referenceNames are posteriordb's names of the constrained quantities Constrain writes.
var referenceNames = []string{"theta[1]", "theta[2]", "theta[3]", "theta[4]", "theta[5]", "theta[6]", "theta[7]", "theta[8]", "mu", "tau"}

// Constrain writes posteriordb's eight-schools quantities (θ_1..θ_8, μ, τ) of z into out.
func (m PaperEightSchools) Constrain(z, out []float64) {
	mu, tau := z[1], math.Exp(paperTauScale*z[0])
	for j := range 8 {
		if m.Centred {
			out[j] = z[2+j]
		} else {
			out[j] = mu + tau*z[2+j]
		}
	}
	out[8], out[9] = mu, tau
}
