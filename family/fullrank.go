package family

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// FullRank is the Gaussian N(μ, LLᵀ) with a lower-triangular Cholesky factor L of positive
// diagonal (Kucukelbir et al. 2017, JMLR 18, §2.5; Titsias & Lázaro-Gredilla 2014).
//
// Parameters (2d + d(d−1)/2): φ = [μ (d) | ρ (d) | strictly lower part of L (d(d−1)/2,
// row-major: L_10, L_20, L_21, L_30, …)] with L_ii = exp(ρ_i) (default) or softplus(ρ_i). The
// diagonal is kept positive so that φ ↦ (μ, Σ) is one-to-one and log|det L| is smooth.
// Noise: ε ∈ ℝ^d, z = μ + Lε.
//
//	log q(z) = −½‖L⁻¹(z − μ)‖² − Σ log L_ii − d/2·log 2π
//	H[q]     = Σ log L_ii + d/2·(1 + log 2π)
//
// Cost O(d²) per draw and per log density (one triangular solve).
type FullRank struct {
	d   int
	pos Positivity
	// idx maps element (i,j) of L (row-major d×d) to its position in [diag L | strict lower | 0].
	idx  []int
	pool *bufPool
}

// NewFullRank returns the full-rank Gaussian family on ℝ^d. It panics if d < 1, a
// programmer error: check a user's model with fit.CheckDim, or build the family with
// fit.FamilyRecipe.NewFamily, which returns an error.
func NewFullRank(d int, opts ...Option) *FullRank {
	if d < 1 {
		panic(fmt.Sprintf("family: NewFullRank: d=%d, want ≥ 1", d))
	}
	f := &FullRank{d: d, pos: newConfig(opts).pos, idx: make([]int, d*d), pool: newBufPool(2 * d)}
	zero := d + d*(d-1)/2
	for i := range d {
		for j := range d {
			switch {
			case j < i:
				f.idx[i*d+j] = d + offIndex(i, j)
			case j == i:
				f.idx[i*d+j] = i
			default:
				f.idx[i*d+j] = zero
			}
		}
	}
	return f
}

// offIndex is the position of L_ij (i > j) in the row-major strictly lower part.
func offIndex(i, j int) int { return i*(i-1)/2 + j }

// Dim returns d.
func (f *FullRank) Dim() int { return f.d }

// NumParams returns 2d + d(d−1)/2.
func (f *FullRank) NumParams() int { return 2*f.d + f.d*(f.d-1)/2 }

// NoiseDim returns d.
func (f *FullRank) NoiseDim() int { return f.d }

// Positivity returns the map of the Cholesky diagonal.
func (f *FullRank) Positivity() Positivity { return f.pos }

// lij returns L_ij (i ≥ j) from the parameter vector.
func (f *FullRank) lij(p []float64, i, j int) float64 {
	if i == j {
		return f.pos.scale(p[f.d+i])
	}
	return p[2*f.d+offIndex(i, j)]
}

// Init sets μ = loc (0 when nil) and L = scale·I.
func (f *FullRank) Init(params, loc []float64, scale float64) {
	checkLen("FullRank.Init", "params", len(params), f.NumParams())
	d := f.d
	setLoc(params[:d], loc)
	r := f.pos.inverse(scale)
	for i := range d {
		params[d+i] = r
	}
	clear(params[2*d:])
}

// SetMoments sets μ = mean and L = chol(cov), exactly. It fails if cov is not positive
// definite. Only the lower triangle of cov is read.
func (f *FullRank) SetMoments(params, mean, cov []float64) error {
	d := f.d
	checkLen("FullRank.SetMoments", "params", len(params), f.NumParams())
	checkLen("FullRank.SetMoments", "mean", len(mean), d)
	checkLen("FullRank.SetMoments", "cov", len(cov), d*d)
	l := make([]float64, d*d)
	if !mathx.Cholesky(l, cov, d) {
		return fmt.Errorf("family: FullRank.SetMoments: covariance is not positive definite (d=%d)", d)
	}
	copy(params[:d], mean)
	for i := range d {
		params[d+i] = f.pos.inverse(l[i*d+i])
		for j := range i {
			params[2*d+offIndex(i, j)] = l[i*d+j]
		}
	}
	return nil
}

// Moments writes μ and LLᵀ.
func (f *FullRank) Moments(params, mean, cov []float64) {
	d := f.d
	checkLen("FullRank.Moments", "params", len(params), f.NumParams())
	checkLen("FullRank.Moments", "mean", len(mean), d)
	copy(mean, params[:d])
	if cov == nil {
		return
	}
	checkLen("FullRank.Moments", "cov", len(cov), d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := 0; k <= j; k++ {
				s += f.lij(params, i, k) * f.lij(params, j, k)
			}
			cov[i*d+j], cov[j*d+i] = s, s
		}
	}
}

// Draw records z = μ + Lε and log q(z) = −Σ log L_ii − ½‖ε‖² − d/2·log 2π. L is assembled
// from the parameter vector by one gather (d² entries), so a draw is 14 nodes and O(d²)
// work.
func (f *FullRank) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	d := f.d
	checkLen("FullRank.Draw", "params", t.Size(params), f.NumParams())
	checkLen("FullRank.Draw", "eps", len(eps), d)
	mu := t.Slice(params, 0, d)
	raw := t.Slice(params, d, 2*d)
	diag := f.pos.tapeScale(t, raw)
	parts := t.Concat(diag, t.Slice(params, 2*d, f.NumParams()), t.Const(0))
	L := t.AsMatrix(t.Gather(parts, f.idx), d, d)
	z = t.Add(mu, t.MatVec(L, t.ConstRef(eps)))
	logq = t.AddC(t.Neg(f.pos.tapeSumLog(t, raw, diag)), -halfSq(eps)-logNormConst(d))
	return z, logq
}

// LogDensity records log q(z) as one fused node. With x = z − μ, u = L⁻¹x and w = L⁻ᵀu:
// ∂/∂z = −w, ∂/∂μ = w, ∂/∂L_ij = w_i u_j (i > j), ∂/∂ρ_i = (w_i u_i − 1/L_ii)·∂L_ii/∂ρ_i.
// Cost two triangular solves, O(d²).
func (f *FullRank) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	d := f.d
	checkLen("FullRank.LogDensity", "params", t.Size(params), f.NumParams())
	checkLen("FullRank.LogDensity", "z", t.Size(z), d)
	p, x := t.Value(params), t.Value(z)
	fb := t.Fused()
	dz := fb.Partial(z)
	dp := fb.Partial(params)
	var val float64
	if dz == nil && dp == nil {
		val = f.logProb(p, x, t.Scratch(d), nil)
		return fb.Done(val)
	}
	buf := t.Scratch(2 * d)
	u, w := buf[:d], buf[d:]
	val = f.logProb(p, x, u, w)
	for i := range d {
		if dz != nil {
			dz[i] = -w[i]
		}
		if dp == nil {
			continue
		}
		dp[i] = w[i]
		for j := range i {
			dp[2*d+offIndex(i, j)] = w[i] * u[j]
		}
		r := p[d+i]
		lii := f.pos.scale(r)
		dp[d+i] = (w[i]*u[i] - 1/lii) * f.pos.dScale(r, lii)
	}
	return fb.Done(val)
}

// logProb returns log q(x) with u = L⁻¹(x − μ) left in u and, when w is not nil, w = L⁻ᵀu.
func (f *FullRank) logProb(p, x, u, w []float64) float64 {
	d := f.d
	val := -logNormConst(d)
	sq := 0.0
	for i := range d {
		s := x[i] - p[i]
		off := p[2*d+offIndex(i, 0) : 2*d+offIndex(i, 0)+i]
		for j, lij := range off {
			s -= lij * u[j]
		}
		r := p[d+i]
		u[i] = s / f.pos.scale(r)
		sq += u[i] * u[i]
		val -= f.pos.logScale(r)
	}
	val -= 0.5 * sq
	if w == nil {
		return val
	}
	for i := d - 1; i >= 0; i-- {
		s := u[i]
		for k := i + 1; k < d; k++ {
			s -= p[2*d+offIndex(k, i)] * w[k]
		}
		w[i] = s / f.pos.scale(p[d+i])
	}
	return val
}

// Entropy records H[q] = Σ log L_ii + d/2·(1 + log 2π).
func (f *FullRank) Entropy(t *ad.Tape, params ad.Var) ad.Var {
	d := f.d
	checkLen("FullRank.Entropy", "params", t.Size(params), f.NumParams())
	raw := t.Slice(params, d, 2*d)
	var diag ad.Var
	if f.pos != Exp {
		diag = f.pos.tapeScale(t, raw)
	}
	return t.AddC(f.pos.tapeSumLog(t, raw, diag), entropyConst(d))
}

// LogProb returns log q(z).
func (f *FullRank) LogProb(params, z []float64) float64 {
	checkLen("FullRank.LogProb", "params", len(params), f.NumParams())
	checkLen("FullRank.LogProb", "z", len(z), f.d)
	b := f.pool.get()
	v := f.logProb(params, z, (*b)[:f.d], nil)
	f.pool.put(b)
	return v
}

// Sample writes z = μ + Lε and returns log q(z).
func (f *FullRank) Sample(params, eps, z []float64) float64 {
	d := f.d
	checkLen("FullRank.Sample", "params", len(params), f.NumParams())
	checkLen("FullRank.Sample", "eps", len(eps), d)
	checkLen("FullRank.Sample", "z", len(z), d)
	lq := -halfSq(eps) - logNormConst(d)
	for i := range d {
		r := params[d+i]
		s := params[i] + f.pos.scale(r)*eps[i]
		off := params[2*d+offIndex(i, 0) : 2*d+offIndex(i, 0)+i]
		for j, lij := range off {
			s += lij * eps[j]
		}
		z[i] = s
		lq -= f.pos.logScale(r)
	}
	return lq
}
