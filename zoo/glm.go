package zoo

import (
	"fmt"
	"math"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
)

// glm is a normal linear regression y ~ N(alpha + X·beta, sigma) with sigma > 0, the shape
// of seven zoo models (diamonds, arK, kidiq, mesquite, nes, sblrc, earnings). The design is
// stored feature-major (xt is D×N) for the GLM kernel, so the likelihood is one fused node.
// split picks alpha, beta and sigma out of the layout's parameter nodes (views, no copies);
// alpha is a constant 0 for a model without intercept.
type glm struct {
	lay   *model.Layout
	xt    ad.Mat    // D×N feature-major design
	y     []float64 // N outcomes
	split func(t *ad.Tape, p []ad.Var) (alpha, beta, sigma ad.Var)
	// prior records the log prior of (alpha, beta, sigma); nil means flat priors.
	prior func(t *ad.Tape, alpha, beta, sigma ad.Var) ad.Var
	// vars pools the parameter nodes of one row of logDensityBatch (*[glmVars]ad.Var): split
	// is a closure, so a slice passed to it escapes, and a pool keeps the batch allocation-free.
	vars sync.Pool
}

func (m *glm) layout() *model.Layout { return m.lay }

// density: prior(alpha, beta, sigma) + Σ_i log N(y_i | alpha + x_i·beta, sigma), the
// likelihood as one GLM node over the feature-major design.
func (m *glm) density(t *ad.Tape, p []ad.Var) ad.Var {
	alpha, beta, sigma := m.split(t, p)
	lp := density.NormalIDGLM(t, m.y, m.xt, alpha, beta, sigma)
	if m.prior != nil {
		lp = t.Add(lp, m.prior(t, alpha, beta, sigma))
	}
	return lp
}

func (m *glm) numObs() int { return len(m.y) }

// logLik: log N(y_i | alpha + x_i·beta, sigma) per observation. split picks alpha, beta and
// sigma out of the parameters on a scratch tape, so every layout of the glm shape is served by
// one implementation. Cost O(N·D) and a few allocations per call.
func (m *glm) logLik(p [][]float64, out []float64) {
	var t ad.Tape
	vars := make([]ad.Var, len(p))
	for i, v := range p {
		vars[i] = t.ConstRef(v)
	}
	a, b, s := m.split(&t, vars)
	alpha, beta, sigma := t.Float(a), t.Value(b), t.Float(s)
	n := len(m.y)
	for i, y := range m.y {
		mu := alpha
		for j, bj := range beta {
			mu += m.xt.Data[j*n+i] * bj
		}
		out[i] = normalLogPDF(y, mu, sigma)
	}
}

// normalLogPDF is log N(y | mu, sigma) = −½((y − mu)/sigma)² − log sigma − ½ log 2π.
func normalLogPDF(y, mu, sigma float64) float64 {
	r := (y - mu) / sigma
	return -0.5*r*r - math.Log(sigma) - 0.5*math.Log(2*math.Pi)
}

// coefSigma builds a regression whose parameters are a coefficient vector beta (k entries,
// beta[1] the intercept unless noIntercept) and sigma > 0: the layout of kidiq, mesquite, nes,
// earnings and sblrc.
func coefSigma(k int, noIntercept bool, xt ad.Mat, y []float64) *glm {
	d := k - 1
	if noIntercept {
		d = k
	}
	checkDesign(xt, d, y)
	m := &glm{lay: mustLayout(
		model.Param{Name: "beta", Dims: []int{k}},
		model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)},
	), xt: xt, y: y}
	m.split = func(t *ad.Tape, p []ad.Var) (alpha, beta, sigma ad.Var) {
		if noIntercept {
			return t.Const(0), p[0], p[1]
		}
		return t.Index(p[0], 0), t.Slice(p[0], 1, k), p[1]
	}
	return m
}

// checkDesign panics unless xt is d×len(y) (a programmer error in a model's loader).
func checkDesign(xt ad.Mat, d int, y []float64) {
	if xt.Rows != d || xt.Cols != len(y) || len(xt.Data) != d*len(y) {
		panic(fmt.Sprintf("zoo: design %d×%d (len %d), want %d×%d", xt.Rows, xt.Cols, len(xt.Data), d, len(y)))
	}
}

// mustLayout builds a layout from parameters fixed in the code; an error is a bug.
func mustLayout(params ...model.Param) *model.Layout {
	l, err := model.NewLayout(params...)
	if err != nil {
		panic("zoo: " + err.Error())
	}
	return l
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

// positiveCount reads a scalar integer field that must be ≥ least.
func positiveCount(d *model.Data, name string, least int) (int, error) {
	n, err := d.Int(name)
	if err != nil {
		return 0, err
	}
	if n < least {
		return 0, fmt.Errorf("data %s: field %q: %d, want ≥ %d", d.Name, name, n, least)
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
