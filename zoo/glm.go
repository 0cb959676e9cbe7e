package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
)

// glm is a normal linear regression y ~ N(alpha + X·beta, sigma) with sigma > 0, the shape
// of seven zoo models (diamonds, arK, kidiq, mesquite, nes, sblrc, earnings). The
// unconstrained vector is z = (coef[0..ncoef), log sigma); the intercept alpha is coef[ic]
// (ic = −1: no intercept) and beta is the contiguous rest of coef, so alpha and beta are views
// of z. The design is stored feature-major (xt is D×N) for the GLM kernel; the reported
// quantities are coef (under the model's names) then sigma.
type glm struct {
	ncoef int
	ic    int       // index of the intercept in coef, or −1
	xt    ad.Mat    // D×N feature-major design, D = ncoef − (ic ≥ 0)
	y     []float64 // N outcomes
	name  []string  // reported names: coefficients, then "sigma"
	blk   []Param
	sigma bijector.Bijector
	// prior records the log prior of (alpha, beta, sigma); alpha is an invalid Var when the
	// model has no intercept. nil means flat priors.
	prior func(t *ad.Tape, alpha, beta, sigma ad.Var) ad.Var
}

// newGLM checks the sizes and sets up the reported names: coefNames are the flattened names
// of the coefficients in z order.
func newGLM(ic int, coefNames []string, xt ad.Mat, y []float64, blk []Param) *glm {
	nc := len(coefNames)
	d := nc
	if ic >= 0 {
		d--
	}
	if xt.Rows != d || xt.Cols != len(y) || len(xt.Data) != d*len(y) {
		panic(fmt.Sprintf("zoo: newGLM: design %d×%d (len %d) for %d coefficients and %d outcomes", xt.Rows, xt.Cols, len(xt.Data), nc, len(y)))
	}
	return &glm{
		ncoef: nc, ic: ic, xt: xt, y: y,
		name:  append(append([]string(nil), coefNames...), "sigma"),
		blk:   blk,
		sigma: bijector.Lower(1, 0),
	}
}

func (m *glm) dim() int        { return m.ncoef + 1 }
func (m *glm) names() []string { return m.name }
func (m *glm) params() []Param { return m.blk }
func (m *glm) betaRange() (int, int) {
	switch m.ic {
	case -1:
		return 0, m.ncoef
	case 0:
		return 1, m.ncoef
	default: // intercept last (diamonds)
		return 0, m.ncoef - 1
	}
}

// logDensity: prior(alpha, beta, sigma) + Σ_i log N(y_i | alpha + x_i·beta, sigma)
// [+ log sigma]. The likelihood is one fused GLM node over the feature-major design.
func (m *glm) logDensity(t *ad.Tape, z ad.Var, jacobian bool) ad.Var {
	lo, hi := m.betaRange()
	beta := t.Slice(z, lo, hi)
	var alpha ad.Var
	if m.ic >= 0 {
		alpha = t.Index(z, m.ic)
	}
	sigma, lj := m.sigma.Forward(t, t.Index(z, m.ncoef))
	a := alpha
	if m.ic < 0 {
		a = t.Const(0)
	}
	lp := tmpNormalGLM(t, m.y, m.xt, a, beta, sigma)
	if m.prior != nil {
		lp = t.Add(lp, m.prior(t, alpha, beta, sigma))
	}
	if jacobian {
		lp = t.Add(lp, lj)
	}
	return lp
}

func (m *glm) constrain(dst, z []float64) {
	copy(dst, z[:m.ncoef])
	m.sigma.Constrain(z[m.ncoef:], dst[m.ncoef:])
}

func (m *glm) unconstrain(dst, x []float64) error {
	for i, v := range x[:m.ncoef] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s = %g, want finite", m.name[i], v)
		}
	}
	copy(dst, x[:m.ncoef])
	if err := m.sigma.Free(x[m.ncoef:], dst[m.ncoef:]); err != nil {
		return fmt.Errorf("sigma: %w", err)
	}
	return nil
}

// featureMajor stores columns (each of length n) as a D×N feature-major matrix.
func featureMajor(cols ...[]float64) ad.Mat {
	n := 0
	if len(cols) > 0 {
		n = len(cols[0])
	}
	data := make([]float64, 0, len(cols)*n)
	for _, c := range cols {
		if len(c) != n {
			panic(fmt.Sprintf("zoo: featureMajor: column lengths %d and %d", n, len(c)))
		}
		data = append(data, c...)
	}
	return ad.Mat{Rows: len(cols), Cols: n, Data: data}
}

// vectors reads the named real vectors of length n from d.
func vectors(d *model.Data, n int, names ...string) ([][]float64, error) {
	out := make([][]float64, len(names))
	for i, name := range names {
		v, err := d.Vector(name, n)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// positiveCount reads a scalar integer field that must be ≥ min.
func positiveCount(d *model.Data, name string, min int) (int, error) {
	n, err := d.Int(name)
	if err != nil {
		return 0, err
	}
	if n < min {
		return 0, fmt.Errorf("data %s: field %q: %d, want ≥ %d", d.Name, name, n, min)
	}
	return n, nil
}

// logOf returns the elementwise log of v, failing on a non-positive entry of field name.
func logOf(d *model.Data, name string, v []float64) ([]float64, error) {
	out := make([]float64, len(v))
	for i, x := range v {
		if !(x > 0) {
			return nil, fmt.Errorf("data %s: field \"%s[%d]\": %g, want > 0 (the model takes its log)", d.Name, name, i+1, x)
		}
		out[i] = math.Log(x)
	}
	return out, nil
}

// glmParams returns the parameter blocks of a regression with a coefficient vector (or an
// intercept and a vector) and sigma > 0.
func glmParams(blocks ...Param) []Param {
	return append(blocks, Param{"sigma", 1, 1, "lower=0"})
}
