package diag

import "math"

// EBFMIThreshold is the E-BFMI below which a chain's momentum resampling is too weak to
// explore the energy distribution (Betancourt 2016; the threshold CmdStan's diagnose, ArviZ
// and MCMCDiagnosticTools use).
const EBFMIThreshold = 0.3

// EBFMI returns the empirical energy Bayesian fraction of missing information of one chain's
// Hamiltonian energies E₁…E_N (Stan's energy__ column):
//
//	Ê-BFMI = Σₙ₌₂ᴺ (Eₙ − Eₙ₋₁)² / Σₙ₌₁ᴺ (Eₙ − Ē)²,
//
// Betancourt (2016, eq. 7; "Diagnosing suboptimal cotangent disintegrations in Hamiltonian
// Monte Carlo", arXiv:1604.00695), the estimator of ArviZ's bfmi. It estimates the ratio of
// the variance of the energy change a momentum resampling achieves to the marginal energy
// variance; values near 1 are ideal, below EBFMIThreshold the chain explores the energy
// levels slowly (heavy tails, poor metric). NaN for fewer than 2 energies or constant ones.
// Cost O(N).
func EBFMI(energy []float64) float64 {
	n := len(energy)
	if n < 2 {
		return math.NaN()
	}
	var m float64
	for _, e := range energy {
		m += e
	}
	m /= float64(n)
	var num, den float64
	for i, e := range energy {
		den += (e - m) * (e - m)
		if i > 0 {
			d := e - energy[i-1]
			num += d * d
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}
