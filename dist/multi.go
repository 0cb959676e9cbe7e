package dist

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// checkLen panics with a message naming the function and argument when a slice has the wrong
// length (programmer error, gonum's rule).
func checkLen(fn, arg string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("dist: %s: len(%s)=%d, want %d", fn, arg, got, want))
	}
}

// CategoricalLogit is the categorical distribution over {0, …, K−1} with probabilities
// softmax(Eta), Stan's categorical_logit (0-based here):
//
//	log p(y) = η_y − log Σ_j e^{η_j}.
type CategoricalLogit struct{ Eta []float64 }

// LogProb returns log p(y); −Inf for y outside {0, …, K−1}. Cost: K exps.
func (d CategoricalLogit) LogProb(y int) float64 {
	if y < 0 || y >= len(d.Eta) {
		return math.Inf(-1)
	}
	return d.Eta[y] - mathx.LogSumExp(d.Eta)
}

// LogProbGrad returns log p(y) and writes ∂/∂η_j = 1{j = y} − softmax(η)_j into deta
// (length K).
func (d CategoricalLogit) LogProbGrad(deta []float64, y int) float64 {
	checkLen("CategoricalLogit.LogProbGrad", "deta", len(deta), len(d.Eta))
	if y < 0 || y >= len(d.Eta) {
		clear(deta)
		return math.Inf(-1)
	}
	lse := mathx.LogSumExp(d.Eta)
	for j, e := range d.Eta {
		deta[j] = -math.Exp(e - lse)
	}
	deta[y]++
	return d.Eta[y] - lse
}

// Rand draws argmax_j (η_j + G_j) with G_j standard Gumbel (the Gumbel-max trick): exact, one
// exponential draw per category, no normalisation. Returns −1 when K = 0.
func (d CategoricalLogit) Rand(r *rand.Rand) int {
	best, bi := math.Inf(-1), -1
	for j, e := range d.Eta {
		if g := e - math.Log(r.ExpFloat64()); g > best || bi < 0 {
			best, bi = g, j
		}
	}
	return bi
}

// Dirichlet is the Dirichlet distribution on the simplex with concentrations Alpha:
//
//	log p(θ) = log Γ(Σα) − Σ log Γ(α_i) + Σ (α_i − 1) log θ_i.
//
// The simplex constraint Σθ = 1 is not checked (it is the constraint transform's job);
// θ_i outside [0, 1] gives −Inf, α_i ≤ 0 gives NaN.
type Dirichlet struct{ Alpha []float64 }

// LogProb returns log p(θ). It panics if len(theta) ≠ len(Alpha).
func (d Dirichlet) LogProb(theta []float64) float64 {
	return d.LogProbGrad(nil, nil, theta)
}

// LogProbGrad returns log p(θ) and writes ∂/∂θ_i = (α_i − 1)/θ_i into dtheta and
// ∂/∂α_i = ψ(Σα) − ψ(α_i) + log θ_i into dalpha (either may be nil).
func (d Dirichlet) LogProbGrad(dtheta, dalpha, theta []float64) float64 {
	const fn = "Dirichlet.LogProbGrad"
	checkLen(fn, "theta", len(theta), len(d.Alpha))
	if dtheta != nil {
		checkLen(fn, "dtheta", len(dtheta), len(d.Alpha))
	}
	if dalpha != nil {
		checkLen(fn, "dalpha", len(dalpha), len(d.Alpha))
	}
	sum, lp := 0.0, 0.0
	for i, a := range d.Alpha {
		if !(a > 0) || math.IsInf(a, 1) {
			return math.NaN()
		}
		th := theta[i]
		if th < 0 || th > 1 {
			return math.Inf(-1)
		}
		sum += a
		lp += xlogy(a-1, th) - mathx.Lgamma(a)
		if dtheta != nil {
			dtheta[i] = (a - 1) / th
		}
	}
	lp += mathx.Lgamma(sum)
	if dalpha != nil {
		ps := mathx.Digamma(sum)
		for i, a := range d.Alpha {
			dalpha[i] = ps - mathx.Digamma(a) + math.Log(theta[i])
		}
	}
	return lp
}

// Rand writes a draw into dst (length K): θ_i = G_i/ΣG with G_i ~ Gamma(α_i), normalised in
// log space so that tiny concentrations do not give 0/0.
func (d Dirichlet) Rand(dst []float64, r *rand.Rand) {
	checkLen("Dirichlet.Rand", "dst", len(dst), len(d.Alpha))
	m := math.Inf(-1)
	for i, a := range d.Alpha {
		dst[i] = logGammaRand(r, a)
		m = max(m, dst[i])
	}
	s := 0.0
	for i := range dst {
		dst[i] = math.Exp(dst[i] - m)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
}

// MultiNormalCholesky is the K-variate normal N(Mu, L·Lᵀ) given the lower Cholesky factor L
// (K×K row-major; the strict upper part is not read), Stan's multi_normal_cholesky:
//
//	log p(y) = −K/2·log 2π − Σ log L_ii − ½‖z‖²,  z = L⁻¹(y − μ).
//
// A diagonal entry L_ii ≤ 0 gives NaN.
type MultiNormalCholesky struct {
	Mu []float64
	L  []float64
}

// stackK is the dimension up to which MultiNormalCholesky works in stack scratch; larger K
// allocates two length-K slices per call.
const stackK = 32

func (d MultiNormalCholesky) check(fn string, y []float64) int {
	k := len(d.Mu)
	checkLen(fn, "L", len(d.L), k*k)
	checkLen(fn, "y", len(y), k)
	return k
}

// solveLower writes z = L⁻¹(y − μ) and returns Σ log L_ii, or NaN if some L_ii ≤ 0.
func (d MultiNormalCholesky) solveLower(z, y []float64) float64 {
	k := len(d.Mu)
	ld := 0.0
	for i := range k {
		row := d.L[i*k : i*k+i+1]
		s := y[i] - d.Mu[i]
		for j, l := range row[:i] {
			s -= l * z[j]
		}
		if !(row[i] > 0) {
			return math.NaN()
		}
		z[i] = s / row[i]
		ld += math.Log(row[i])
	}
	return ld
}

// LogProb returns log p(y). Cost: K²/2 multiply-adds and K logs.
func (d MultiNormalCholesky) LogProb(y []float64) float64 {
	k := d.check("MultiNormalCholesky.LogProb", y)
	var buf [stackK]float64
	z := buf[:]
	if k > stackK {
		z = make([]float64, k)
	}
	z = z[:k]
	ld := d.solveLower(z, y)
	ss := 0.0
	for _, v := range z {
		ss += v * v
	}
	return -float64(k)*mathx.LogSqrt2Pi - ld - 0.5*ss
}

// LogProbGrad returns log p(y) and writes the partials (any destination may be nil):
// ∂/∂y = −w, ∂/∂μ = w, ∂/∂L = lower(w·zᵀ) − diag(1/L_ii), with z = L⁻¹(y−μ), w = L⁻ᵀz.
// dL is K×K; its strict upper part is set to zero. Cost: K² multiply-adds.
func (d MultiNormalCholesky) LogProbGrad(dy, dmu, dL, y []float64) float64 {
	const fn = "MultiNormalCholesky.LogProbGrad"
	k := d.check(fn, y)
	if dy != nil {
		checkLen(fn, "dy", len(dy), k)
	}
	if dmu != nil {
		checkLen(fn, "dmu", len(dmu), k)
	}
	if dL != nil {
		checkLen(fn, "dL", len(dL), k*k)
	}
	var buf [2 * stackK]float64
	s := buf[:]
	if k > stackK {
		s = make([]float64, 2*k)
	}
	z, w := s[:k], s[k:2*k]
	ld := d.solveLower(z, y)
	if math.IsNaN(ld) {
		return ld
	}
	ss := 0.0
	for _, v := range z {
		ss += v * v
	}
	// w = L⁻ᵀ z by back substitution, column access L[j][i] for j > i.
	for i := k - 1; i >= 0; i-- {
		t := z[i]
		for j := i + 1; j < k; j++ {
			t -= d.L[j*k+i] * w[j]
		}
		w[i] = t / d.L[i*k+i]
	}
	for i := range k {
		if dy != nil {
			dy[i] = -w[i]
		}
		if dmu != nil {
			dmu[i] = w[i]
		}
		if dL != nil {
			row := dL[i*k : (i+1)*k]
			for j := range i + 1 {
				row[j] = w[i] * z[j]
			}
			row[i] -= 1 / d.L[i*k+i]
			clear(row[i+1:])
		}
	}
	return -float64(k)*mathx.LogSqrt2Pi - ld - 0.5*ss
}

// Rand writes μ + L·z into dst (length K) with z standard normal; no scratch.
func (d MultiNormalCholesky) Rand(dst []float64, r *rand.Rand) {
	k := d.check("MultiNormalCholesky.Rand", dst)
	for i := range dst {
		dst[i] = r.NormFloat64()
	}
	// Overwrite from the last row: row i reads z_0..z_i, which are still in dst.
	for i := k - 1; i >= 0; i-- {
		s := d.Mu[i]
		for j, l := range d.L[i*k : i*k+i+1] {
			s += l * dst[j]
		}
		dst[i] = s
	}
}

// LKJCholesky is the LKJ distribution (Lewandowski, Kurowicka & Joe 2009) on the Cholesky
// factor L of a K×K correlation matrix, Stan's lkj_corr_cholesky(η), as a density over the
// strictly lower entries of L:
//
//	log p(L) = −log c_K(η) + Σ_{i=1}^{K−1} (K − i − 3 + 2η)·log L_ii   (0-based rows i),
//
// which is det(LLᵀ)^{η−1} times the Jacobian Π L_ii^{K−i−1} of LLᵀ ↦ L. Rows of L are
// independent points of balls (row i has i free entries w with ‖w‖ < 1 and L_ii = √(1−‖w‖²)),
// so the normaliser is a product of ball integrals:
//
//	c_K(η) = Π_{i=1}^{K−1} π^{i/2} Γ(s_i + 1)/Γ(s_i + 1 + i/2),  s_i = η + (K − i − 3)/2,
//
// which equals Lewandowski et al.'s constant (eq. 16; for K = 3, η = 1 the volume π²/2 of
// 3×3 correlation matrices). Only the diagonal of L is read: that L is a valid correlation
// Cholesky factor is the constraint transform's job. η ≤ 0 gives NaN.
type LKJCholesky struct{ Eta float64 }

// lkjDim returns K for a K×K slice, panicking otherwise.
func lkjDim(fn string, n int) int {
	k := int(math.Sqrt(float64(n)) + 0.5)
	if k*k != n {
		panic(fmt.Sprintf("dist: %s: len(L)=%d is not a square K×K", fn, n))
	}
	return k
}

// LogNormalizer returns log c_K(η) and its derivative in η,
// Σ_i ψ(s_i + 1) − ψ(s_i + 1 + i/2).
func (d LKJCholesky) LogNormalizer(k int) (lc, deta float64) {
	for i := 1; i < k; i++ {
		s := d.Eta + 0.5*float64(k-i-3)
		h := 0.5 * float64(i)
		lc += h*mathx.LogPi + mathx.Lgamma(s+1) - mathx.Lgamma(s+1+h)
		deta += mathx.Digamma(s+1) - mathx.Digamma(s+1+h)
	}
	return lc, deta
}

// LogProb returns log p(L) for L of length K². Cost: K logs and 2K lgammas.
func (d LKJCholesky) LogProb(L []float64) float64 {
	lp, _ := d.LogProbGrad(nil, L)
	return lp
}

// LogProbGrad returns log p(L) and ∂/∂η = −∂ log c_K/∂η + 2Σ log L_ii, and writes ∂/∂L into
// dL (nil to skip): (K − i − 3 + 2η)/L_ii on the diagonal, zero elsewhere.
func (d LKJCholesky) LogProbGrad(dL, L []float64) (lp, deta float64) {
	const fn = "LKJCholesky.LogProbGrad"
	k := lkjDim(fn, len(L))
	if dL != nil {
		checkLen(fn, "dL", len(dL), len(L))
		clear(dL)
	}
	if !(d.Eta > 0) || math.IsInf(d.Eta, 1) {
		return math.NaN(), math.NaN()
	}
	lc, dc := d.LogNormalizer(k)
	lp, deta = -lc, -dc
	for i := 1; i < k; i++ {
		c := float64(k-i-3) + 2*d.Eta
		l := L[i*k+i]
		ll := math.Log(l)
		lp += c * ll
		deta += 2 * ll
		if dL != nil {
			dL[i*k+i] = c / l
		}
	}
	return lp, deta
}

// Rand writes a draw of L into dst (length K², row-major, zero upper part) by the onion
// method in Cholesky form (Lewandowski et al. 2009, §3.2): row i has squared length
// y ~ Beta(i/2, η + (K−1−i)/2) over its i off-diagonal entries, in a uniform direction, and
// L_ii = √(1−y). Cost: K beta and K²/2 normal draws.
func (d LKJCholesky) Rand(dst []float64, r *rand.Rand) {
	k := lkjDim("LKJCholesky.Rand", len(dst))
	clear(dst)
	if k == 0 {
		return
	}
	dst[0] = 1
	for i := 1; i < k; i++ {
		y := betaRand(r, 0.5*float64(i), d.Eta+0.5*float64(k-1-i))
		row := dst[i*k : i*k+i]
		ss := 0.0
		for j := range row {
			row[j] = r.NormFloat64()
			ss += row[j] * row[j]
		}
		sc := math.Sqrt(y / ss)
		for j := range row {
			row[j] *= sc
		}
		dst[i*k+i] = math.Sqrt(1 - y)
	}
}
