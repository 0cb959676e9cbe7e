package family

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// LowRank is the Gaussian N(μ, BBᵀ + D²) with a d×r factor B and a positive diagonal D
// (Ong, Nott & Smith 2018, "Gaussian variational approximation with a factor covariance
// structure", JCGS 27(3)): r directions of correlation for O(dr) parameters.
//
// Parameters (2d + dr): φ = [μ (d) | B (d×r, row-major) | ρ (d)] with D_i = exp(ρ_i) (default)
// or softplus(ρ_i). Noise (d + r): ε = [ε₂ (d) | ε₁ (r)], z = μ + D⊙ε₂ + Bε₁.
//
// Log density by the Woodbury identity and the matrix determinant lemma, with W = D⁻¹B,
// C = I_r + WᵀW = L_C L_Cᵀ, x = z − μ, y = D⁻¹x:
//
//	xᵀΣ⁻¹x   = ‖y‖² − ‖L_C⁻¹Wᵀy‖²
//	log|Σ|   = 2Σ log D_i + 2Σ log (L_C)_kk
//	log q(z) = −½xᵀΣ⁻¹x − ½log|Σ| − d/2·log 2π,   H[q] = ½log|Σ| + d/2·(1 + log 2π)
//
// Gradients (a = Σ⁻¹x, Σ⁻¹B = D⁻¹WC⁻¹, (Σ⁻¹)_ii = (1 − w_iᵀC⁻¹w_i)/D_i²): ∂log q/∂z = −a,
// ∂/∂μ = a, ∂/∂B = a(aᵀB) − Σ⁻¹B, ∂/∂D_i = D_i a_i² − D_i(Σ⁻¹)_ii. Cost O(dr² + r³) for a log
// density or the entropy, O(dr) for the draw itself.
//
// Precision: the Woodbury form subtracts nearly equal terms when D is tiny compared with B along
// a direction (‖y‖² ≈ ‖L_C⁻¹Wᵀy‖²); relative accuracy of the quadratic form degrades like
// max_i ‖w_i‖², i.e. (‖B‖/min D)². Keep min D from collapsing (the exp map never reaches 0).
type LowRank struct {
	d, r int
	pos  Positivity
	pool *bufPool
}

// NewLowRank returns the low-rank-plus-diagonal Gaussian family on ℝ^d with rank r (1 ≤ r ≤ d).
// It panics unless 1 ≤ r ≤ d, a programmer error: check a user's model with fit.CheckDim, or
// build the family with fit.FamilyRecipe.NewFamily, which returns an error.
func NewLowRank(d, r int, opts ...Option) *LowRank {
	if d < 1 || r < 1 || r > d {
		panic(fmt.Sprintf("family: NewLowRank: d=%d, r=%d, want 1 ≤ r ≤ d", d, r))
	}
	f := &LowRank{d: d, r: r, pos: newConfig(opts).pos}
	f.pool = newBufPool(f.workLen())
	return f
}

// Dim returns d.
func (f *LowRank) Dim() int { return f.d }

// Rank returns r.
func (f *LowRank) Rank() int { return f.r }

// NumParams returns 2d + dr.
func (f *LowRank) NumParams() int { return 2*f.d + f.d*f.r }

// NoiseDim returns d + r.
func (f *LowRank) NoiseDim() int { return f.d + f.r }

// Positivity returns the map of the diagonal D.
func (f *LowRank) Positivity() Positivity { return f.pos }

// Init sets μ = loc (0 when nil), B_ik = scale/10 when i ≡ k (mod r) and 0 otherwise, and
// D_i = scale·√(1 − 1/100): every marginal standard deviation is scale. B starts away from 0
// because B = 0 is a stationary point of the ELBO in B (the expected gradient vanishes there);
// its columns have disjoint supports, so it has full rank r.
func (f *LowRank) Init(params, loc []float64, scale float64) {
	checkLen("LowRank.Init", "params", len(params), f.NumParams())
	d, r := f.d, f.r
	setLoc(params[:d], loc)
	B := params[d : d+d*r]
	clear(B)
	for i := range d {
		B[i*r+i%r] = scale / 10
	}
	raw := f.pos.inverse(scale * math.Sqrt(0.99))
	for i := range d {
		params[d+d*r+i] = raw
	}
}

// SetMoments sets μ = mean and a probabilistic-PCA projection of cov (Tipping & Bishop 1999,
// JRSS-B 61(3), eq. 8): with the eigenpairs (λ_k, v_k) of cov in decreasing order and σ² the
// mean of the d − r smallest eigenvalues (λ_d/2 when r = d), B = [v_1 … v_r]·diag(λ_k − σ²)^½
// and D_i² = cov_ii − (BBᵀ)_ii, so the marginal variances are matched exactly and cov itself
// whenever it has the form BBᵀ + σ²I. It fails if cov is not positive definite. Cost O(d³).
func (f *LowRank) SetMoments(params, mean, cov []float64) error {
	d, r := f.d, f.r
	checkLen("LowRank.SetMoments", "params", len(params), f.NumParams())
	checkLen("LowRank.SetMoments", "mean", len(mean), d)
	checkLen("LowRank.SetMoments", "cov", len(cov), d*d)
	sym := mat.NewSymDense(d, nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, cov[i*d+j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return fmt.Errorf("family: LowRank.SetMoments: eigendecomposition failed (d=%d)", d)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	if lmin := vals[order[d-1]]; !(lmin > 0) || math.IsInf(vals[order[0]], 0) {
		return fmt.Errorf("family: LowRank.SetMoments: covariance is not positive definite (smallest eigenvalue %g)", lmin)
	}
	s2 := vals[order[d-1]] / 2
	if r < d {
		s2 = 0
		for _, k := range order[r:] {
			s2 += vals[k]
		}
		s2 /= float64(d - r)
	}
	copy(params[:d], mean)
	B := params[d : d+d*r]
	for k, col := range order[:r] {
		c := math.Sqrt(max(vals[col]-s2, 0))
		for i := range d {
			B[i*r+k] = vecs.At(i, col) * c
		}
	}
	for i := range d {
		bb := 0.0
		for _, b := range B[i*r : (i+1)*r] {
			bb += b * b
		}
		v := cov[i*d+i] - bb
		if !(v > 0) {
			return fmt.Errorf("family: LowRank.SetMoments: residual variance not positive (i=%d, var=%g)", i, v)
		}
		params[d+d*r+i] = f.pos.inverse(math.Sqrt(v))
	}
	return nil
}

// Moments writes μ and BBᵀ + D².
func (f *LowRank) Moments(params, mean, cov []float64) {
	d, r := f.d, f.r
	checkLen("LowRank.Moments", "params", len(params), f.NumParams())
	checkLen("LowRank.Moments", "mean", len(mean), d)
	copy(mean, params[:d])
	if cov == nil {
		return
	}
	checkLen("LowRank.Moments", "cov", len(cov), d*d)
	B := params[d : d+d*r]
	for i := range d {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := range r {
				s += B[i*r+k] * B[j*r+k]
			}
			if i == j {
				di := f.pos.scale(params[d+d*r+i])
				s += di * di
			}
			cov[i*d+j], cov[j*d+i] = s, s
		}
	}
}

// Draw records z = μ + D⊙ε₂ + Bε₁ (O(dr)) and log q(z) through LogDensity (O(dr² + r³)).
func (f *LowRank) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	d, r := f.d, f.r
	checkLen("LowRank.Draw", "params", t.Size(params), f.NumParams())
	checkLen("LowRank.Draw", "eps", len(eps), d+r)
	mu := t.Slice(params, 0, d)
	B := t.AsMatrix(t.Slice(params, d, d+d*r), d, r)
	D := f.pos.tapeScale(t, t.Slice(params, d+d*r, 2*d+d*r))
	z = t.Add(t.Add(mu, t.Mul(D, t.ConstRef(eps[:d]))), t.MatVec(B, t.ConstRef(eps[d:])))
	return z, f.LogDensity(t, params, z)
}

// lrWork is the scratch of one log-density or entropy evaluation.
type lrWork struct {
	D, W, Lc, Cinv, y, a, v, u, g, aB, cw []float64
}

func (f *LowRank) workLen() int { d, r := f.d, f.r; return 3*d + d*r + 2*r*r + 5*r }

func (f *LowRank) work(buf []float64) lrWork {
	d, r := f.d, f.r
	take := func(n int) []float64 { s := buf[:n:n]; buf = buf[n:]; return s }
	return lrWork{D: take(d), W: take(d * r), Lc: take(r * r), Cinv: take(r * r), y: take(d),
		a: take(d), v: take(r), u: take(r), g: take(r), aB: take(r), cw: take(r)}
}

// factor fills D, W = D⁻¹B, L_C = chol(I + WᵀW) and C⁻¹, and returns ½log|Σ|.
func (f *LowRank) factor(p []float64, w lrWork) float64 {
	d, r := f.d, f.r
	B := p[d : d+d*r]
	half := 0.0
	for i := range d {
		raw := p[d+d*r+i]
		w.D[i] = f.pos.scale(raw)
		half += f.pos.logScale(raw)
		for k := range r {
			w.W[i*r+k] = B[i*r+k] / w.D[i]
		}
	}
	C := w.Cinv // C is built in Cinv's storage, then replaced by its inverse
	clear(C)
	for i := range d {
		row := w.W[i*r : (i+1)*r]
		for k := range r {
			for l := 0; l <= k; l++ {
				C[k*r+l] += row[k] * row[l]
			}
		}
	}
	for k := range r {
		C[k*r+k]++
	}
	if !mathx.Cholesky(w.Lc, C, r) {
		for i := range w.Lc {
			w.Lc[i] = math.NaN()
		}
	}
	for k := range r {
		half += math.Log(w.Lc[k*r+k])
	}
	// C⁻¹ column by column: solve L_C L_Cᵀ c_j = e_j.
	col := w.g
	for j := range r {
		clear(col)
		col[j] = 1
		forwardSolve(w.Lc, col, r)
		backSolveT(w.Lc, col, r)
		for k := range r {
			w.Cinv[k*r+j] = col[k]
		}
	}
	return half
}

// forwardSolve solves L x = x in place (L lower triangular n×n).
func forwardSolve(l, x []float64, n int) {
	for i := range n {
		s := x[i]
		for k := range i {
			s -= l[i*n+k] * x[k]
		}
		x[i] = s / l[i*n+i]
	}
}

// backSolveT solves Lᵀ x = x in place (L lower triangular n×n).
func backSolveT(l, x []float64, n int) {
	for i := n - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * x[k]
		}
		x[i] = s / l[i*n+i]
	}
}

// logProb returns log q(z) after factor, leaving a = Σ⁻¹(z − μ) in w.a.
func (f *LowRank) logProb(p, z []float64, w lrWork, half float64) float64 {
	d, r := f.d, f.r
	yy := 0.0
	for i := range d {
		w.y[i] = (z[i] - p[i]) / w.D[i]
		yy += w.y[i] * w.y[i]
	}
	clear(w.v)
	for i := range d {
		yi := w.y[i]
		for k, wik := range w.W[i*r : (i+1)*r] {
			w.v[k] += wik * yi
		}
	}
	copy(w.u, w.v)
	forwardSolve(w.Lc, w.u, r)
	uu := 0.0
	for _, uk := range w.u {
		uu += uk * uk
	}
	copy(w.g, w.u)
	backSolveT(w.Lc, w.g, r)
	for i := range d {
		s := w.y[i]
		for k, wik := range w.W[i*r : (i+1)*r] {
			s -= wik * w.g[k]
		}
		w.a[i] = s / w.D[i]
	}
	return -0.5*(yy-uu) - half - logNormConst(d)
}

// rowTerms returns cw = C⁻¹w_i (in w.cw) and w_iᵀC⁻¹w_i.
func (f *LowRank) rowTerms(w lrWork, i int) float64 {
	r := f.r
	row := w.W[i*r : (i+1)*r]
	q := 0.0
	for k := range r {
		s := 0.0
		for l, wl := range row {
			s += w.Cinv[k*r+l] * wl
		}
		w.cw[k] = s
		q += row[k] * s
	}
	return q
}

// LogDensity records log q(z) as one fused node (partials in the type comment).
func (f *LowRank) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	d, r := f.d, f.r
	checkLen("LowRank.LogDensity", "params", t.Size(params), f.NumParams())
	checkLen("LowRank.LogDensity", "z", t.Size(z), d)
	p, x := t.Value(params), t.Value(z)
	fb := t.Fused()
	dz := fb.Partial(z)
	dp := fb.Partial(params)
	w := f.work(t.Scratch(f.workLen()))
	half := f.factor(p, w)
	val := f.logProb(p, x, w, half)
	if dz != nil {
		for i, ai := range w.a {
			dz[i] = -ai
		}
	}
	if dp != nil {
		B := p[d : d+d*r]
		clear(w.aB)
		for i, ai := range w.a {
			dp[i] = ai
			for k := range r {
				w.aB[k] += ai * B[i*r+k]
			}
		}
		dB := dp[d : d+d*r]
		for i, ai := range w.a {
			q := f.rowTerms(w, i)
			Di := w.D[i]
			for k := range r {
				dB[i*r+k] = ai*w.aB[k] - w.cw[k]/Di
			}
			raw := p[d+d*r+i]
			dp[d+d*r+i] = (Di*ai*ai - (1-q)/Di) * f.pos.dScale(raw, Di)
		}
	}
	return fb.Done(val)
}

// Entropy records H[q] = ½log|Σ| + d/2·(1 + log 2π) as one fused node, with ∂H/∂B = Σ⁻¹B and
// ∂H/∂D_i = D_i(Σ⁻¹)_ii. Cost O(dr² + r³).
func (f *LowRank) Entropy(t *ad.Tape, params ad.Var) ad.Var {
	d, r := f.d, f.r
	checkLen("LowRank.Entropy", "params", t.Size(params), f.NumParams())
	p := t.Value(params)
	fb := t.Fused()
	dp := fb.Partial(params)
	w := f.work(t.Scratch(f.workLen()))
	half := f.factor(p, w)
	if dp != nil {
		dB := dp[d : d+d*r]
		for i := range d {
			q := f.rowTerms(w, i)
			Di := w.D[i]
			for k := range r {
				dB[i*r+k] = w.cw[k] / Di
			}
			dp[d+d*r+i] = (1 - q) / Di * f.pos.dScale(p[d+d*r+i], Di)
		}
	}
	return fb.Done(half + entropyConst(d))
}

// LogProb returns log q(z).
func (f *LowRank) LogProb(params, z []float64) float64 {
	checkLen("LowRank.LogProb", "params", len(params), f.NumParams())
	checkLen("LowRank.LogProb", "z", len(z), f.d)
	b := f.pool.get()
	w := f.work(*b)
	v := f.logProb(params, z, w, f.factor(params, w))
	f.pool.put(b)
	return v
}

// Sample writes z = μ + D⊙ε₂ + Bε₁ and returns log q(z) (O(dr² + r³)).
func (f *LowRank) Sample(params, eps, z []float64) float64 {
	d, r := f.d, f.r
	checkLen("LowRank.Sample", "params", len(params), f.NumParams())
	checkLen("LowRank.Sample", "eps", len(eps), d+r)
	checkLen("LowRank.Sample", "z", len(z), d)
	B := params[d : d+d*r]
	e1 := eps[d:]
	for i := range d {
		s := params[i] + f.pos.scale(params[d+d*r+i])*eps[i]
		for k, b := range B[i*r : (i+1)*r] {
			s += b * e1[k]
		}
		z[i] = s
	}
	return f.LogProb(params, z)
}
