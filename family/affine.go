package family

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// Affine is a variational family pushed through a fixed affine map: z = Shift + Scale·u with
// u ~ Base. Scale is lower triangular (d×d row-major) or, when Diag is set, a diagonal stored
// as its d entries. The fit loop uses it to whiten: the base family is fitted in coordinates
// where the Laplace approximation (or a warm start's Gaussian) is N(0, I), so every coordinate
// has unit scale for the optimiser whatever the posterior's scales and correlations, and the
// fitted approximation is reported in the target's own coordinates.
//
// Capabilities. Affine is a Family and a LogProber (LogProb is exact for every base; see its
// cost). The other optional capabilities depend on the base and are offered only where the base
// has them: Entropic returns the EntropyFamily view when the base has a closed-form entropy,
// MomentSetter the MomentSetter view when the base can be set from moments. *Affine itself
// implements neither, so a type assertion on it never claims what its base cannot do.
//
//	log q(z) = log q_base(Scale⁻¹(z − Shift)) − log|det Scale|
//
// Cost on top of the base family: O(d²) per draw and log density (O(d) diagonal).
type Affine struct {
	Base  Family
	Shift []float64
	Scale []float64
	Diag  bool

	logDet float64
}

// NewAffine checks the shapes and returns the pushed-forward family.
func NewAffine(base Family, shift, scale []float64, diag bool) (*Affine, error) {
	d := base.Dim()
	if len(shift) != d {
		return nil, fmt.Errorf("family: NewAffine: shift has %d values, family dimension is %d", len(shift), d)
	}
	want := d * d
	if diag {
		want = d
	}
	if len(scale) != want {
		return nil, fmt.Errorf("family: NewAffine: scale has %d values, want %d", len(scale), want)
	}
	a := &Affine{Base: base, Shift: shift, Scale: scale, Diag: diag}
	for i := 0; i < d; i++ {
		s := scale[i]
		if !diag {
			s = scale[i*d+i]
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("family: NewAffine: scale diagonal %d is %g, want finite and > 0", i, s)
		}
		a.logDet += math.Log(s)
	}
	return a, nil
}

// Dim returns d.
func (a *Affine) Dim() int { return a.Base.Dim() }

// NumParams returns the base family's parameter count.
func (a *Affine) NumParams() int { return a.Base.NumParams() }

// NoiseDim returns the base family's noise length.
func (a *Affine) NoiseDim() int { return a.Base.NoiseDim() }

// LogDetScale returns log|det Scale|.
func (a *Affine) LogDetScale() float64 { return a.logDet }

// forward maps u to z on the tape.
func (a *Affine) forward(t *ad.Tape, u ad.Var) ad.Var {
	d := a.Dim()
	var su ad.Var
	if a.Diag {
		su = t.Mul(t.ConstRef(a.Scale), u)
	} else {
		su = t.MatVecC(ad.Mat{Rows: d, Cols: d, Data: a.Scale}, u)
	}
	return t.Add(su, t.ConstRef(a.Shift))
}

// Draw records z = Shift + Scale·u, u from the base family, and log q(z).
func (a *Affine) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	u, lq := a.Base.Draw(t, params, eps)
	return a.forward(t, u), t.AddC(lq, -a.logDet)
}

// LogDensity records log q(z) for z on the tape.
func (a *Affine) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	d := a.Dim()
	x := t.Sub(z, t.ConstRef(a.Shift))
	var u ad.Var
	if a.Diag {
		u = t.Div(x, t.ConstRef(a.Scale))
	} else {
		L := t.AsMatrix(t.ConstRef(a.Scale), d, d)
		u = t.TriSolve(L, x)
	}
	return t.AddC(a.Base.LogDensity(t, params, u), -a.logDet)
}

// Entropic returns a as an EntropyFamily, H[q] = H[q_base] + log|det Scale|, when the base
// family has a closed-form entropy, and false otherwise (flows).
func (a *Affine) Entropic() (EntropyFamily, bool) {
	eb, ok := a.Base.(EntropyFamily)
	if !ok {
		return nil, false
	}
	return affineEntropy{a, eb}, true
}

// affineEntropy is an Affine whose base has a closed-form entropy.
type affineEntropy struct {
	*Affine
	base EntropyFamily
}

// Entropy records H[q] = H[q_base] + log|det Scale|.
func (a affineEntropy) Entropy(t *ad.Tape, params ad.Var) ad.Var {
	return t.AddC(a.base.Entropy(t, params), a.logDet)
}

// Init sets the base family to a Gaussian with mean loc (in z coordinates; nil: at Shift) and
// independent coordinates of standard deviation scale in the whitened coordinates u.
func (a *Affine) Init(params, loc []float64, scale float64) {
	if loc == nil {
		a.Base.Init(params, nil, scale)
		return
	}
	u := make([]float64, a.Dim())
	for i := range u {
		u[i] = loc[i] - a.Shift[i]
	}
	a.solve(u)
	a.Base.Init(params, u, scale)
}

// MomentSetter returns a as a MomentSetter when the base family is one, and false otherwise.
// Its SetMoments sets q to mean and cov (in z coordinates) by setting the base to the moments
// of the inverse affine map, Scale⁻¹(mean − Shift) and Scale⁻¹ cov Scale⁻ᵀ, with the base's
// exactness or projection (in the whitened coordinates). Cost O(d³) on top of the base's.
func (a *Affine) MomentSetter() (MomentSetter, bool) {
	mb, ok := a.Base.(MomentSetter)
	if !ok {
		return nil, false
	}
	return affineMoments{a, mb}, true
}

// affineMoments is an Affine whose base can be set from moments.
type affineMoments struct {
	*Affine
	base MomentSetter
}

// SetMoments sets q to mean and cov (in z coordinates) through the base family.
func (a affineMoments) SetMoments(params, mean, cov []float64) error {
	d := a.Dim()
	m := make([]float64, d)
	for i := range m {
		m[i] = mean[i] - a.Shift[i]
	}
	a.solve(m)
	// C' = S⁻¹ C S⁻ᵀ: solve column by column, then rows.
	c := append([]float64(nil), cov...)
	col := make([]float64, d)
	for j := 0; j < d; j++ {
		for i := 0; i < d; i++ {
			col[i] = c[i*d+j]
		}
		a.solve(col)
		for i := 0; i < d; i++ {
			c[i*d+j] = col[i]
		}
	}
	for i := 0; i < d; i++ {
		a.solve(c[i*d : (i+1)*d])
	}
	return a.base.SetMoments(params, m, c)
}

// Moments writes the mean and covariance of q in z coordinates.
func (a *Affine) Moments(params, mean, cov []float64) {
	d := a.Dim()
	m := make([]float64, d)
	var c []float64
	if cov != nil {
		c = make([]float64, d*d)
	}
	a.Base.Moments(params, m, c)
	a.apply(mean, m)
	for i := range mean {
		mean[i] += a.Shift[i]
	}
	if cov == nil {
		return
	}
	// S C Sᵀ
	tmp := make([]float64, d*d)
	col, out := make([]float64, d), make([]float64, d)
	for j := 0; j < d; j++ {
		for i := 0; i < d; i++ {
			col[i] = c[i*d+j]
		}
		a.apply(out, col)
		for i := 0; i < d; i++ {
			tmp[i*d+j] = out[i]
		}
	}
	for i := 0; i < d; i++ {
		a.apply(cov[i*d:(i+1)*d], tmp[i*d:(i+1)*d])
	}
}

// LogProb returns log q(z) = log q_base(Scale⁻¹(z − Shift)) − log|det Scale|. The base's
// log density comes from its LogProb when it is a LogProber (cost: the base's LogProb plus an
// O(d²) triangular solve), and otherwise from its tape LogDensity recorded on a fresh tape with
// constant parameters (the same value; it allocates the tape's nodes on every call).
func (a *Affine) LogProb(params, z []float64) float64 {
	u := make([]float64, len(z))
	for i := range u {
		u[i] = z[i] - a.Shift[i]
	}
	a.solve(u)
	if lb, ok := a.Base.(LogProber); ok {
		return lb.LogProb(params, u) - a.logDet
	}
	var t ad.Tape
	return t.Float(a.Base.LogDensity(&t, t.ConstRef(params), t.ConstRef(u))) - a.logDet
}

// Sample writes z for base noise eps and returns log q(z).
func (a *Affine) Sample(params, eps, z []float64) float64 {
	u := make([]float64, len(z))
	lq := a.Base.Sample(params, eps, u)
	a.apply(z, u)
	for i := range z {
		z[i] += a.Shift[i]
	}
	return lq - a.logDet
}

// apply writes dst = Scale·u.
func (a *Affine) apply(dst, u []float64) {
	d := len(u)
	if a.Diag {
		for i := range u {
			dst[i] = a.Scale[i] * u[i]
		}
		return
	}
	for i := d - 1; i >= 0; i-- { // lower triangular: row i uses u[0..i]; go backwards so dst may alias u
		s := 0.0
		for k := 0; k <= i; k++ {
			s += a.Scale[i*d+k] * u[k]
		}
		dst[i] = s
	}
}

// solve overwrites x with Scale⁻¹x.
func (a *Affine) solve(x []float64) {
	d := len(x)
	if a.Diag {
		for i := range x {
			x[i] /= a.Scale[i]
		}
		return
	}
	for i := 0; i < d; i++ {
		s := x[i]
		for k := 0; k < i; k++ {
			s -= a.Scale[i*d+k] * x[k]
		}
		x[i] = s / a.Scale[i*d+i]
	}
}
