package dist

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// BernoulliLogit is the Bernoulli distribution with success probability logistic(Eta),
// Stan's bernoulli_logit(η):
//
//	log p(1) = −log(1 + e^{−η}),  log p(0) = −log(1 + e^{η}).
//
// Eta must be finite.
type BernoulliLogit struct{ Eta float64 }

// LogProb returns log p(y); −Inf for y ∉ {0, 1}.
func (d BernoulliLogit) LogProb(y int) float64 {
	switch y {
	case 1:
		return mathx.LogLogistic(d.Eta)
	case 0:
		return mathx.LogLogistic(-d.Eta)
	}
	return math.Inf(-1)
}

// LogProbGrad returns log p(y) and ∂/∂η = y − logistic(η).
func (d BernoulliLogit) LogProbGrad(y int) (lp, deta float64) {
	return d.LogProb(y), float64(y) - mathx.Logistic(d.Eta)
}

// Rand draws 1 with probability logistic(η), else 0.
func (d BernoulliLogit) Rand(r *rand.Rand) int {
	if r.Float64() < mathx.Logistic(d.Eta) {
		return 1
	}
	return 0
}

// BinomialLogit is the binomial distribution with N trials and success probability
// logistic(Eta), Stan's binomial_logit(N, η):
//
//	log p(k) = log C(N, k) − k·log(1 + e^{−η}) − (N−k)·log(1 + e^{η}).
//
// Eta must be finite.
type BinomialLogit struct {
	N   int
	Eta float64
}

// LogProb returns log p(k); −Inf for k ∉ {0,…,N}, NaN for N < 0.
func (d BinomialLogit) LogProb(k int) float64 {
	if d.N < 0 {
		return math.NaN()
	}
	if k < 0 || k > d.N {
		return math.Inf(-1)
	}
	n, kf := float64(d.N), float64(k)
	return mathx.LogBinomial(n, kf) + kf*mathx.LogLogistic(d.Eta) + (n-kf)*mathx.LogLogistic(-d.Eta)
}

// LogProbGrad returns log p(k) and ∂/∂η = k − N·logistic(η).
func (d BinomialLogit) LogProbGrad(k int) (lp, deta float64) {
	return d.LogProb(k), float64(k) - float64(d.N)*mathx.Logistic(d.Eta)
}

// Rand draws a variate exactly with Knuth's beta splitting (TAOCP vol. 2, 3.4.1 F): a
// Beta(a, N+1−a) order statistic halves N until N ≤ 40, then Bernoulli trials. Cost O(log N)
// gamma draws plus at most 40 uniforms. Returns −1 for N < 0.
func (d BinomialLogit) Rand(r *rand.Rand) int {
	if d.N < 0 {
		return -1
	}
	return binomialRand(r, d.N, mathx.Logistic(d.Eta))
}

func binomialRand(r *rand.Rand, n int, p float64) int {
	k := 0
	for n > 40 {
		a := 1 + n/2
		b := n + 1 - a
		x := betaRand(r, float64(a), float64(b))
		if x >= p {
			n, p = a-1, p/x
		} else {
			k += a
			n, p = b-1, (p-x)/(1-x)
		}
	}
	for ; n > 0; n-- {
		if r.Float64() < p {
			k++
		}
	}
	return k
}

// PoissonLog is the Poisson distribution with log rate Eta, Stan's poisson_log(η):
//
//	log p(k) = kη − e^η − log k!.
type PoissonLog struct{ Eta float64 }

// LogProb returns log p(k); −Inf for k < 0.
func (d PoissonLog) LogProb(k int) float64 {
	if k < 0 {
		return math.Inf(-1)
	}
	if k == 0 {
		return -math.Exp(d.Eta)
	}
	kf := float64(k)
	return kf*d.Eta - math.Exp(d.Eta) - mathx.Lgamma(kf+1)
}

// LogProbGrad returns log p(k) and ∂/∂η = k − e^η.
func (d PoissonLog) LogProbGrad(k int) (lp, deta float64) {
	return d.LogProb(k), float64(k) - math.Exp(d.Eta)
}

// Rand draws a variate exactly: the gamma–binomial recursion of Ahrens & Dieter (Knuth, TAOCP
// vol. 2, 3.4.1 F) reduces λ = e^η below 16, then Knuth's product-of-uniforms method. Cost
// O(log λ) gamma draws plus about 16 uniforms. Returns −1 if λ is NaN or above 2⁶⁰.
func (d PoissonLog) Rand(r *rand.Rand) int { return poissonRand(r, math.Exp(d.Eta)) }

func poissonRand(r *rand.Rand, lam float64) int {
	if !(lam <= 1<<60) {
		return -1
	}
	k := 0
	for lam > 16 {
		m := int(0.875 * lam)
		x := gammaRand(r, float64(m)) // time of the m-th event of a unit-rate process
		if x >= lam {
			// Fewer than m events before λ: the first m−1 are uniform on (0, x).
			return k + binomialRand(r, m-1, lam/x)
		}
		k += m
		lam -= x
	}
	l := math.Exp(-lam)
	p := r.Float64()
	for p > l {
		k++
		p *= r.Float64()
	}
	return k
}

// Mean returns e^η.
func (d PoissonLog) Mean() float64 { return math.Exp(d.Eta) }

// Variance returns e^η.
func (d PoissonLog) Variance() float64 { return math.Exp(d.Eta) }

// NegBinomial2 is the negative binomial with mean Mu and precision Phi, Stan's
// neg_binomial_2(μ, φ), variance μ + μ²/φ:
//
//	log p(k) = log Γ(k+φ) − log Γ(φ) − log k! + k·log(μ/(μ+φ)) − φ·log(1 + μ/φ).
type NegBinomial2 struct{ Mu, Phi float64 }

// digammaDiff returns ψ(x+k) − ψ(x) for integer k ≥ 0: the exact sum Σ 1/(x+j) for small k.
func digammaDiff(x float64, k int) float64 {
	if k < 16 {
		s := 0.0
		for j := range k {
			s += 1 / (x + float64(j))
		}
		return s
	}
	return mathx.Digamma(x+float64(k)) - mathx.Digamma(x)
}

// LogProb returns log p(k); −Inf for k < 0, NaN for μ ≤ 0 or φ ≤ 0. The log Γ difference uses
// Stirling's series for large φ, so the Poisson limit φ → ∞ keeps its accuracy.
func (d NegBinomial2) LogProb(k int) float64 {
	if !(d.Mu > 0) || !(d.Phi > 0) {
		return math.NaN()
	}
	if k < 0 {
		return math.Inf(-1)
	}
	kf := float64(k)
	return mathx.LgammaDiff(d.Phi, kf) - mathx.Lgamma(kf+1) + xlogy(kf, d.Mu/(d.Mu+d.Phi)) -
		d.Phi*math.Log1p(d.Mu/d.Phi)
}

// LogProbGrad returns log p(k) and ∂/∂μ = k/μ − (k+φ)/(μ+φ),
// ∂/∂φ = ψ(k+φ) − ψ(φ) − log(1+μ/φ) + (μ−k)/(μ+φ).
func (d NegBinomial2) LogProbGrad(k int) (lp, dmu, dphi float64) {
	lp = d.LogProb(k)
	mu, phi, kf := d.Mu, d.Phi, float64(k)
	s := 1 / (mu + phi)
	dmu = kf/mu - (kf+phi)*s
	dphi = digammaDiff(phi, k) - math.Log1p(mu/phi) + (mu-kf)*s
	return lp, dmu, dphi
}

// Rand draws Poisson(λ) with λ ~ Gamma(φ, rate φ/μ). Returns −1 for invalid parameters.
func (d NegBinomial2) Rand(r *rand.Rand) int {
	if !(d.Mu > 0) || !(d.Phi > 0) {
		return -1
	}
	return poissonRand(r, d.Mu/d.Phi*gammaRand(r, d.Phi))
}

// Mean returns μ.
func (d NegBinomial2) Mean() float64 { return d.Mu }

// Variance returns μ + μ²/φ.
func (d NegBinomial2) Variance() float64 { return d.Mu + d.Mu*d.Mu/d.Phi }

// NegBinomial2Log is NegBinomial2 with log mean Eta, Stan's neg_binomial_2_log(η, φ):
// μ = e^η, computed without forming e^η where that could overflow.
type NegBinomial2Log struct{ Eta, Phi float64 }

// LogProb returns log p(k); −Inf for k < 0, NaN for φ ≤ 0.
func (d NegBinomial2Log) LogProb(k int) float64 {
	if !(d.Phi > 0) || math.IsNaN(d.Eta) {
		return math.NaN()
	}
	if k < 0 {
		return math.Inf(-1)
	}
	u := d.Eta - math.Log(d.Phi) // log(μ/φ)
	// q = μ/(μ+φ) = logistic(u), log(1+μ/φ) = log1pexp(u); k·log q = −k·log1pexp(−u).
	kf := float64(k)
	return mathx.LgammaDiff(d.Phi, kf) - mathx.Lgamma(kf+1) - kf*mathx.Log1pExp(-u) -
		d.Phi*mathx.Log1pExp(u)
}

// LogProbGrad returns log p(k) and ∂/∂η = k − (k+φ)q, ∂/∂φ = ψ(k+φ) − ψ(φ) − log(1+μ/φ) +
// q − k(1−q)/φ with q = μ/(μ+φ).
func (d NegBinomial2Log) LogProbGrad(k int) (lp, deta, dphi float64) {
	lp = d.LogProb(k)
	u := d.Eta - math.Log(d.Phi)
	q := mathx.Logistic(u)
	kf := float64(k)
	deta = kf - (kf+d.Phi)*q
	dphi = digammaDiff(d.Phi, k) - mathx.Log1pExp(u) + q - kf*mathx.Logistic(-u)/d.Phi
	return lp, deta, dphi
}

// Rand draws like NegBinomial2{e^η, φ}.
func (d NegBinomial2Log) Rand(r *rand.Rand) int {
	return NegBinomial2{math.Exp(d.Eta), d.Phi}.Rand(r)
}
