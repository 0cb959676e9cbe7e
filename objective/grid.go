// Package objective holds vigo's variational objectives: the evidence lower bound (ELBO), the
// importance-weighted ELBO (IWELBO) and the multiple-importance-sampling ELBO of an ensemble
// (MISELBO), as functions of a grid of log weights log w = log p(z) − log q(z), and an
// Estimator that records one on an ad.Tape and returns its value and its gradient with respect
// to the variational parameters (DESIGN.md §2).
//
// With S groups of K draws z_sℓ ~ q and log weights ℓ_sℓ = log p(z_sℓ) − log q(z_sℓ):
//
//	ELBO    = (1/S) Σ_s ℓ_s1                                              (K = 1)
//	IWELBO  = (1/S) Σ_s log((1/K) Σ_ℓ exp ℓ_sℓ)    (Burda, Grosse & Salakhutdinov 2016)
//	MISELBO = (1/A) Σ_a IWELBO_a with q replaced, in every weight, by the balance-heuristic
//	          mixture (1/A) Σ_j q_j(z)            (Kviman et al. 2022, AISTATS, eq. 3)
//
// IWELBO with K = 1 is the ELBO, by the same code. All three are lower bounds on log Z, with
// equality when q is the normalised target; IWELBO increases with K, and MISELBO with K = 1
// exceeds the average member ELBO by the Jensen–Shannon divergence of the members (Kviman
// et al. 2022, Theorem 1).
package objective

import (
	"fmt"
	"math"
)

// ELBO returns the mean of the log weights.
func ELBO(logw []float64) float64 {
	s := 0.0
	for _, v := range logw {
		s += v
	}
	return s / float64(len(logw))
}

// IWELBO returns the mean over the S = len(logw)/K rows of the row-major S×K grid logw of
// log((1/K) Σ_ℓ exp logw_sℓ). With K = 1 it is ELBO(logw). It panics if K does not divide
// len(logw).
func IWELBO(logw []float64, K int) float64 {
	if K < 1 || len(logw)%K != 0 || len(logw) == 0 {
		panic(fmt.Sprintf("objective: IWELBO: len(logw)=%d is not a positive multiple of K=%d", len(logw), K))
	}
	if K == 1 {
		return ELBO(logw)
	}
	s := 0.0
	S := len(logw) / K
	for g := range S {
		s += logMeanExp(logw[g*K : (g+1)*K])
	}
	return s / float64(S)
}

// MixtureLogWeights writes dst_n = logp_n − log((1/A) Σ_j exp logq_{n,j}) for each draw n,
// where logq is row-major N×A: the log densities of draw n under each of the A ensemble
// members. The result is the MISELBO log-weight grid: pass it to IWELBO (rows of K draws of
// one member; member-major order) to get MISELBO. With A = 1, dst = logp − logq exactly.
func MixtureLogWeights(dst, logp, logq []float64, A int) {
	if A < 1 || len(dst) != len(logp) || len(logq) != len(logp)*A {
		panic(fmt.Sprintf("objective: MixtureLogWeights: len(dst)=%d, len(logp)=%d, len(logq)=%d, A=%d", len(dst), len(logp), len(logq), A))
	}
	for n, lp := range logp {
		if A == 1 {
			dst[n] = lp - logq[n]
			continue
		}
		dst[n] = lp - (logSumExp(logq[n*A:(n+1)*A]) - math.Log(float64(A)))
	}
}

// logSumExp returns log Σ exp x_i, computed stably (−Inf for an empty or all −Inf x).
func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	if math.IsInf(m, 0) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// logMeanExp returns log((1/n) Σ exp x_i).
func logMeanExp(x []float64) float64 { return logSumExp(x) - math.Log(float64(len(x))) }
