package family

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// MeanField is the Gaussian with independent coordinates, q(z) = Π_i N(z_i; μ_i, σ_i²)
// (Kucukelbir et al. 2017, "Automatic differentiation variational inference", JMLR 18, §2.5).
//
// Parameters (2d): φ = [μ_1..μ_d, ρ_1..ρ_d] with σ_i = exp(ρ_i) (default) or softplus(ρ_i).
// Noise: ε ∈ ℝ^d, z = μ + σ ⊙ ε.
//
//	log q(z) = −½ Σ u_i² − Σ log σ_i − d/2·log 2π,  u = (z − μ)/σ
//	H[q]     = Σ log σ_i + d/2·(1 + log 2π)
//
// Cost O(d) for every method.
type MeanField struct {
	d   int
	pos Positivity
}

// NewMeanField returns the mean-field Gaussian family on ℝ^d. It panics if d < 1, a
// programmer error: check a user's model with fit.CheckDim, or build the family with
// fit.FamilyRecipe.NewFamily, which returns an error.
func NewMeanField(d int, opts ...Option) *MeanField {
	if d < 1 {
		panic(fmt.Sprintf("family: NewMeanField: d=%d, want ≥ 1", d))
	}
	return &MeanField{d: d, pos: newConfig(opts).pos}
}

// Dim returns d.
func (f *MeanField) Dim() int { return f.d }

// NumParams returns 2d.
func (f *MeanField) NumParams() int { return 2 * f.d }

// NoiseDim returns d.
func (f *MeanField) NoiseDim() int { return f.d }

// Positivity returns the scale map.
func (f *MeanField) Positivity() Positivity { return f.pos }

// Init sets μ = loc (0 when nil) and σ_i = scale.
func (f *MeanField) Init(params, loc []float64, scale float64) {
	checkLen("MeanField.Init", "params", len(params), f.NumParams())
	setLoc(params[:f.d], loc)
	r := f.pos.inverse(scale)
	for i := range f.d {
		params[f.d+i] = r
	}
}

// SetMoments sets μ = mean and σ_i² = cov_ii; off-diagonal covariance is dropped (the
// KL-optimal projection onto independent Gaussians matches the marginals only when cov is
// diagonal). It fails if a diagonal entry is not positive and finite.
func (f *MeanField) SetMoments(params, mean, cov []float64) error {
	d := f.d
	checkLen("MeanField.SetMoments", "params", len(params), f.NumParams())
	checkLen("MeanField.SetMoments", "mean", len(mean), d)
	checkLen("MeanField.SetMoments", "cov", len(cov), d*d)
	for i := range d {
		v := cov[i*d+i]
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("family: MeanField.SetMoments: variance not positive (i=%d, var=%g)", i, v)
		}
	}
	copy(params[:d], mean)
	for i := range d {
		params[d+i] = f.pos.inverse(math.Sqrt(cov[i*d+i]))
	}
	return nil
}

// Moments writes μ and diag(σ²).
func (f *MeanField) Moments(params, mean, cov []float64) {
	d := f.d
	checkLen("MeanField.Moments", "params", len(params), f.NumParams())
	checkLen("MeanField.Moments", "mean", len(mean), d)
	copy(mean, params[:d])
	if cov == nil {
		return
	}
	checkLen("MeanField.Moments", "cov", len(cov), d*d)
	clear(cov)
	for i := range d {
		s := f.pos.scale(params[d+i])
		cov[i*d+i] = s * s
	}
}

// Draw records z = μ + σ⊙ε and log q(z) = −Σ log σ_i − ½‖ε‖² − d/2·log 2π (9 nodes).
func (f *MeanField) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	d := f.d
	checkLen("MeanField.Draw", "params", t.Size(params), f.NumParams())
	checkLen("MeanField.Draw", "eps", len(eps), d)
	mu := t.Slice(params, 0, d)
	raw := t.Slice(params, d, 2*d)
	sigma := f.pos.tapeScale(t, raw)
	z = t.Add(mu, t.Mul(sigma, t.ConstRef(eps)))
	logq = t.AddC(t.Neg(f.pos.tapeSumLog(t, raw, sigma)), -halfSq(eps)-logNormConst(d))
	return z, logq
}

// LogDensity records log q(z) as one fused node. Partials: ∂/∂z = −u/σ, ∂/∂μ = u/σ,
// ∂/∂ρ_i = (u_i² − 1)·σ'(ρ_i)/σ_i.
func (f *MeanField) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	d := f.d
	checkLen("MeanField.LogDensity", "params", t.Size(params), f.NumParams())
	checkLen("MeanField.LogDensity", "z", t.Size(z), d)
	p, x := t.Value(params), t.Value(z)
	fb := t.Fused()
	dz := fb.Partial(z)
	dp := fb.Partial(params)
	val := -logNormConst(d)
	for i := range d {
		r := p[d+i]
		s := f.pos.scale(r)
		u := (x[i] - p[i]) / s
		val -= 0.5*u*u + f.pos.logScale(r)
		g := u / s
		if dz != nil {
			dz[i] = -g
		}
		if dp != nil {
			dp[i] = g
			dp[d+i] = (u*u - 1) * f.pos.dScale(r, s) / s
		}
	}
	return fb.Done(val)
}

// Entropy records H[q] = Σ log σ_i + d/2·(1 + log 2π).
func (f *MeanField) Entropy(t *ad.Tape, params ad.Var) ad.Var {
	d := f.d
	checkLen("MeanField.Entropy", "params", t.Size(params), f.NumParams())
	raw := t.Slice(params, d, 2*d)
	var sigma ad.Var
	if f.pos != Exp {
		sigma = f.pos.tapeScale(t, raw)
	}
	return t.AddC(f.pos.tapeSumLog(t, raw, sigma), entropyConst(d))
}

// LogProb returns log q(z).
func (f *MeanField) LogProb(params, z []float64) float64 {
	d := f.d
	checkLen("MeanField.LogProb", "params", len(params), f.NumParams())
	checkLen("MeanField.LogProb", "z", len(z), d)
	val := -logNormConst(d)
	for i := range d {
		r := params[d+i]
		u := (z[i] - params[i]) / f.pos.scale(r)
		val -= 0.5*u*u + f.pos.logScale(r)
	}
	return val
}

// Sample writes z = μ + σ⊙ε and returns log q(z).
func (f *MeanField) Sample(params, eps, z []float64) float64 {
	d := f.d
	checkLen("MeanField.Sample", "params", len(params), f.NumParams())
	checkLen("MeanField.Sample", "eps", len(eps), d)
	checkLen("MeanField.Sample", "z", len(z), d)
	lq := -halfSq(eps) - logNormConst(d)
	for i := range d {
		r := params[d+i]
		z[i] = params[i] + f.pos.scale(r)*eps[i]
		lq -= f.pos.logScale(r)
	}
	return lq
}

// setLoc copies loc into mu, or zeroes mu when loc is nil.
func setLoc(mu, loc []float64) {
	if loc == nil {
		clear(mu)
		return
	}
	checkLen("Init", "loc", len(loc), len(mu))
	copy(mu, loc)
}
