package objective

import (
	"fmt"
	"math"
)

// WeightedMixtureLogWeights is MixtureLogWeights for a mixture with weights w_j (A = len(w),
// normalised, ≥ 0): dst_n = logp_n − log Σ_j w_j exp logq_{n,j}. Members of zero weight are
// left out of the sum (their log density may be anything). With w_j = 1/A it equals
// MixtureLogWeights up to rounding.
func WeightedMixtureLogWeights(dst, logp, logq, w []float64) {
	A := len(w)
	if A < 1 || len(dst) != len(logp) || len(logq) != len(logp)*A {
		panic(fmt.Sprintf("objective: WeightedMixtureLogWeights: len(dst)=%d, len(logp)=%d, len(logq)=%d, len(w)=%d", len(dst), len(logp), len(logq), A))
	}
	buf := make([]float64, 0, A)
	for n, lp := range logp {
		buf = buf[:0]
		for j, wj := range w {
			if wj > 0 {
				buf = append(buf, math.Log(wj)+logq[n*A+j])
			}
		}
		dst[n] = lp - logSumExp(buf)
	}
}

// Bounds are an ensemble's lower bounds on log Z from one set of stratified draws: N = G·L
// draws of each member a, grouped in G groups of L. With mixture weights w_a (uniform: the
// paper's balance heuristic) and q_w = Σ_j w_j q_j (Kviman et al. 2022, AISTATS, eqs. 1–3 and
// Theorem 1, the weighted form of their uniform one):
//
//	MISELBO_L   = Σ_a w_a E_{q_a} log (1/L) Σ_ℓ p(z_aℓ)/q_w(z_aℓ)
//	MeanIWELBO  = Σ_a w_a IWELBO_L(q_a)          (L = 1: MeanELBO = Σ_a w_a ELBO(q_a))
//	JSD         = MISELBO_1 − MeanELBO = Σ_a w_a E_{q_a} log q_a/q_w = H[q_w] − Σ_a w_a H[q_a]
//
// The JSD lies in [0, H(w)] ⊆ [0, log A] (H(w) the entropy of the weights); its estimate here
// is the mean over the same draws, so the identity holds exactly for the estimates and the
// estimate itself can fall slightly outside the interval by Monte Carlo error. Standard errors
// (…SE) are over the G groups (N draws for the L = 1 quantities) of each member, combined as
// √(Σ_a w_a² var_a / G).
type Bounds struct {
	L                     int
	MISELBO, MISELBOSE    float64
	MeanIWELBO, IWELBOSE  float64
	MISELBO1, MISELBO1SE  float64
	MeanELBO, MeanELBOSE  float64
	JSD, JSDSE            float64
	ELBO, ELBOSE, IWELBOs []float64 // per member: ELBO(q_a), its SE, IWELBO_L(q_a)
	Weights               []float64
}

// EnsembleBounds computes Bounds from the log target densities logp of A·N member-major draws
// (draws a·N … a·N+N−1 come from member a, N a multiple of L) and their log densities under
// every member, logq (A·N × A, row-major: logq[n·A+j] = log q_j(z_n)). weights are the
// mixture weights (nil: uniform). Cost O(A²·N).
func EnsembleBounds(logp, logq []float64, A, L int, weights []float64) (Bounds, error) {
	switch {
	case A < 1:
		return Bounds{}, fmt.Errorf("objective: EnsembleBounds: %d members, want ≥ 1", A)
	case L < 1:
		return Bounds{}, fmt.Errorf("objective: EnsembleBounds: L = %d, want ≥ 1", L)
	case len(logp) == 0 || len(logp)%(A*L) != 0:
		return Bounds{}, fmt.Errorf("objective: EnsembleBounds: %d draws is not a positive multiple of A·L = %d", len(logp), A*L)
	case len(logq) != len(logp)*A:
		return Bounds{}, fmt.Errorf("objective: EnsembleBounds: len(logq) = %d, want %d (draws × members)", len(logq), len(logp)*A)
	case weights != nil && len(weights) != A:
		return Bounds{}, fmt.Errorf("objective: EnsembleBounds: %d weights for %d members", len(weights), A)
	}
	w := weights
	if w == nil {
		w = make([]float64, A)
		for a := range w {
			w[a] = 1 / float64(A)
		}
	}
	N := len(logp) / A
	G := N / L
	mix := make([]float64, len(logp))
	WeightedMixtureLogWeights(mix, logp, logq, w)
	own := make([]float64, len(logp))
	for n := range own {
		own[n] = logp[n] - logq[n*A+n/N]
	}
	b := Bounds{L: L, Weights: append([]float64(nil), w...),
		ELBO: make([]float64, A), ELBOSE: make([]float64, A), IWELBOs: make([]float64, A)}
	var vMis, vIW, vMis1, vELBO, vJSD float64
	gm, gi := make([]float64, G), make([]float64, G)
	diff := make([]float64, N)
	for a := range A {
		m, o := mix[a*N:(a+1)*N], own[a*N:(a+1)*N]
		for g := range G {
			gm[g] = logMeanExp(m[g*L : (g+1)*L])
			gi[g] = logMeanExp(o[g*L : (g+1)*L])
		}
		for n := range diff {
			diff[n] = m[n] - o[n]
		}
		mm, vm := meanVar(gm)
		mi, vi := meanVar(gi)
		m1, v1 := meanVar(m)
		e, ve := meanVar(o)
		j, vj := meanVar(diff)
		b.ELBO[a], b.ELBOSE[a], b.IWELBOs[a] = e, math.Sqrt(ve/float64(N)), mi
		if w[a] == 0 {
			continue
		}
		wa := w[a]
		b.MISELBO += wa * mm
		b.MeanIWELBO += wa * mi
		b.MISELBO1 += wa * m1
		b.MeanELBO += wa * e
		b.JSD += wa * j
		vMis += wa * wa * vm / float64(G)
		vIW += wa * wa * vi / float64(G)
		vMis1 += wa * wa * v1 / float64(N)
		vELBO += wa * wa * ve / float64(N)
		vJSD += wa * wa * vj / float64(N)
	}
	b.MISELBOSE, b.IWELBOSE, b.MISELBO1SE = math.Sqrt(vMis), math.Sqrt(vIW), math.Sqrt(vMis1)
	b.MeanELBOSE, b.JSDSE = math.Sqrt(vELBO), math.Sqrt(vJSD)
	return b, nil
}

// meanVar returns the mean and the sample variance (n − 1; NaN for one value).
func meanVar(x []float64) (m, v float64) {
	for _, u := range x {
		m += u
	}
	m /= float64(len(x))
	if len(x) < 2 || math.IsInf(m, 0) || math.IsNaN(m) {
		return m, math.NaN()
	}
	for _, u := range x {
		v += (u - m) * (u - m)
	}
	return m, v / float64(len(x)-1)
}
