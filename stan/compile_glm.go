package stan

import (
	"fmt"
	"math"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	kern "github.com/vigo-bayes/vigo/internal/kernel"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Linear predictors fused into Stan's GLM densities (normal_id_glm, bernoulli_logit_glm,
// poisson_log_glm).
//
// A regression written as
//
//	y ~ normal(beta[1] + beta[2] * x2 + … + beta[K] * xK, sigma);
//	target += normal_lpdf(y | alpha + X * b, sigma);
//
// would record two vector nodes per term (a product and a sum, each read and written once
// forward and once backward). When y and every x (vector) or X (matrix) are data or
// transformed data, the statement is compiled as normal_id_glm(y | X*, α, β*, σ) instead (and
// y ~ bernoulli_logit(…), y ~ poisson_log(…) as their GLMs, y an int array): the
// design X* is assembled once from the data columns (x2 … xK, X's columns), feature-major
// (K×N), and reused by every evaluation, α is the sum of the scalar terms, β* the coefficients
// in column order (one view when they are consecutive elements v[k], v[k+1], … of one vector).
// A GLM written as a call on a data matrix, normal_id_glm_lpdf(y | X, α, β, σ) (and the
// bernoulli_logit_glm, poisson_log_glm calls), takes the same path with X's columns. One fused
// node then computes the log density and all partials in two passes over the design (package
// density's NormalIDGLM and BernoulliLogitGLM, the zoo models' nodes; poissonLogGLM here), as
// a hand-written model would. The result differs from the term-by-term evaluation by rounding
// only. Patterns: sums and differences of scalar terms, s * x and x * s (s a real scalar
// expression, x a data vector), and X * b (X a data matrix, b a vector). Anything else
// compiles as written; and at run time a design whose columns do not have y's length, a y that
// is not finite (not in the support), or a scale that is not positive and finite runs the
// statement as written, which reports Stan's own error. The design's data variables are not
// put in the evaluation frame (compile_fold.go's liveData) except before such a run.

// glmParts is a linear predictor split into its intercept terms and its design columns.
type glmParts struct {
	scalars []glmTerm // terms of α
	cols    []glmTerm // s · x: slot of the data vector x, coefficient s
	mats    []glmTerm // X · b: slot of the data matrix X, coefficient vector b
}

type glmTerm struct {
	slot int    // the data variable (cols, mats)
	coef evalFn // the scalar term (scalars) or the coefficient
	neg  bool   // subtracted
	// elem is the coefficient's variable and 0-based element when it is v[k] with v a real
	// vector variable and k an int literal (elem.slot < 0 otherwise): consecutive elements of
	// one vector enter β as one view instead of one node per coefficient and a Concat.
	elem struct{ slot, k int }
}

// globalData reports an identifier of a data or transformed data variable (fixed for the
// whole run, unlike a function's data-only argument).
func (c *compiler) globalData(e Expr, base Base) (int, bool) {
	id, ok := e.(*Ident)
	if !ok || id.Decl == nil || id.Fun != nil {
		return 0, false
	}
	d := id.Decl
	if d.Block != DataBlock && d.Block != TransformedDataBlock || d.Type != (Type{Base: base}) {
		return 0, false
	}
	slot, ok := c.cur.slot[d]
	return slot, ok
}

// constElem reports e = v[k] with v a real vector variable of the frame and k an int literal:
// the slot of v and k − 1.
func (c *compiler) constElem(e Expr) (slot, k int, ok bool) {
	for {
		p, isParen := e.(*Paren)
		if !isParen {
			break
		}
		e = p.X
	}
	ie, isIdx := e.(*IndexExpr)
	if !isIdx || len(ie.Indices) != 1 || ie.Indices[0].Kind != IndexSingle {
		return 0, 0, false
	}
	lit, isLit := ie.Indices[0].Lo.(*IntLit)
	id, isID := ie.X.(*Ident)
	if !isLit || !isID || id.Decl == nil || id.Fun != nil || id.Decl.Type != TVector || lit.Value < 1 {
		return 0, 0, false
	}
	s, found := c.cur.slot[id.Decl]
	return s, lit.Value - 1, found
}

// glmSplit adds the terms of e (with sign neg) to p; false if e is not a linear predictor of
// the fused form.
func (c *compiler) glmSplit(e Expr, neg bool, p *glmParts) (bool, error) {
	switch e := e.(type) {
	case *Paren:
		return c.glmSplit(e.X, neg, p)
	case *Binary:
		switch e.Name {
		case "add", "subtract":
			ok, err := c.glmSplit(e.L, neg, p)
			if !ok || err != nil {
				return ok, err
			}
			return c.glmSplit(e.R, neg != (e.Name == "subtract"), p)
		case "multiply":
			for _, lr := range [2][2]Expr{{e.L, e.R}, {e.R, e.L}} {
				x, s := lr[0], lr[1]
				if slot, ok := c.globalData(x, Vector); ok && s.Info().Type.IsScalar() {
					fn, err := c.expr(s)
					if err != nil {
						return false, err
					}
					c.designIdents[x.(*Ident)] = true
					term := glmTerm{slot: slot, coef: fn, neg: neg}
					term.elem.slot = -1
					if es, k, ok := c.constElem(s); ok {
						term.elem.slot, term.elem.k = es, k
					}
					p.cols = append(p.cols, term)
					return true, nil
				}
			}
			if slot, ok := c.globalData(e.L, Matrix); ok && e.R.Info().Type == TVector {
				fn, err := c.expr(e.R)
				if err != nil {
					return false, err
				}
				c.designIdents[e.L.(*Ident)] = true
				p.mats = append(p.mats, glmTerm{slot: slot, coef: fn, neg: neg})
				return true, nil
			}
		}
	}
	if e.Info().Type.IsScalar() {
		fn, err := c.expr(e)
		if err != nil {
			return false, err
		}
		p.scalars = append(p.scalars, glmTerm{coef: fn, neg: neg})
		return true, nil
	}
	return false, nil
}

// glmDesignCache is the design of one fused statement, built at its first evaluation from
// the data (which no evaluation changes) and shared by all: feature-major (K×N, the layout of
// package density's GLM nodes), and the check of a fixed y.
type glmDesignCache struct {
	once sync.Once
	xt   []float64 // K×N feature-major: xt[j*n+i] = x_ij
	n, k int
	err  error // the columns do not fit together: the statement runs as written
	// yBad says that the fixed y (a data variable) fails the family's check (non-finite for
	// normal, outside the support for the discrete families): every evaluation then runs the
	// statement as written, which reports Stan's error.
	yBad bool
}

// The families of fused GLMs.
const (
	famNormal = iota
	famBernoulli
	famPoisson
)

// glmFamilies are the densities fused with their GLM form: the statement's distribution name,
// the family, whether y is an int array (else a real vector), whether a scale follows the
// linear predictor (normal's σ), and whether the statement is already a GLM call (y | X, α,
// β[, σ]) rather than a density of a linear predictor.
var glmFamilies = map[string]struct {
	fam              int
	ints, sigm, call bool
}{
	"normal":              {famNormal, false, true, false},
	"bernoulli_logit":     {famBernoulli, true, false, false},
	"poisson_log":         {famPoisson, true, false, false},
	"normal_id_glm":       {famNormal, false, true, true},
	"bernoulli_logit_glm": {famBernoulli, true, false, true},
	"poisson_log_glm":     {famPoisson, true, false, true},
}

// fusedGLM compiles y ~ dist(lp[, sigma]) (or target += dist_lpdf(y | lp[, sigma])) into the
// family's GLM node when lp is a fused linear predictor and y is data, and a GLM call
// dist(y | X, α, β[, σ]) with X a data matrix into the same node over its cached
// feature-major design; fallback is the statement compiled as written, run whenever the
// fused form does not apply at run time (a design that does not fit, a y or σ that fails
// Stan's checks: the statement as written then reports Stan's own error). nil, nil: no
// fusion.
func (c *compiler) fusedGLM(pos Pos, dist string, yE Expr, args []Expr, fallback execFn) (execFn, error) {
	fam, ok := glmFamilies[dist]
	if c.plain || !ok || !yE.Info().Data {
		return nil, nil
	}
	if fam.ints && yE.Info().Type != (Type{Base: Int, Array: 1}) || !fam.ints && yE.Info().Type != TVector {
		return nil, nil
	}
	var p glmParts
	var sigE Expr
	if fam.call {
		// dist(y | X, α, β[, σ]): X a data matrix, α a scalar, β a vector.
		if len(args) != map[bool]int{false: 3, true: 4}[fam.sigm] || args[1].Info().Type != TReal && args[1].Info().Type != TInt || args[2].Info().Type != TVector {
			return nil, nil
		}
		slot, ok := c.globalData(args[0], Matrix)
		if !ok {
			return nil, nil
		}
		a, err := c.expr(args[1])
		if err != nil {
			return nil, err
		}
		b, err := c.expr(args[2])
		if err != nil {
			return nil, err
		}
		c.designIdents[args[0].(*Ident)] = true
		p.scalars = []glmTerm{{coef: a}}
		p.mats = []glmTerm{{slot: slot, coef: b}}
		if fam.sigm {
			sigE = args[3]
		}
	} else {
		if len(args) != map[bool]int{false: 1, true: 2}[fam.sigm] || args[0].Info().Type != TVector {
			return nil, nil
		}
		ok, err := c.glmSplit(args[0], false, &p)
		if err != nil || !ok || len(p.cols)+len(p.mats) == 0 {
			return nil, err
		}
		if fam.sigm {
			sigE = args[1]
		}
	}
	y, err := c.expr(yE)
	if err != nil {
		return nil, err
	}
	_, yFixed := c.globalData(yE, Vector)
	if fam.ints {
		id, isID := yE.(*Ident)
		yFixed = isID && id.Decl != nil && id.Fun == nil && (id.Decl.Block == DataBlock || id.Decl.Block == TransformedDataBlock)
	}
	var sigma evalFn
	var sigTy Type
	if sigE != nil {
		if sigma, err = c.expr(sigE); err != nil {
			return nil, err
		}
		sigTy = sigE.Info().Type
	}
	beta := c.glmBeta(&p)
	cache := &glmDesignCache{}
	c.glms++
	asWritten := fallback
	fallback = func(f *frame) (ctl, error) {
		// The design's data are not in the frame (liveData): put them there for the
		// statement as written.
		for _, terms := range [][]glmTerm{p.cols, p.mats} {
			for _, s := range terms {
				if g := c.data[s.slot]; g != nil {
					f.cells[s.slot] = cell{v: dataValue(f.st.t, g)}
				}
			}
		}
		return asWritten(f)
	}
	return func(f *frame) (ctl, error) {
		t := f.st.t
		yv, err := y(f)
		if err != nil {
			return ctlNext, err
		}
		cache.once.Do(func() { cache.build(f, &p, fam.fam, yFixed, yv) })
		if cache.err != nil || cache.yBad {
			return fallback(f)
		}
		var ys []float64
		if fam.ints {
			if len(yv.Ints) != cache.n || !yFixed && !glmIntsOK(fam.fam, yv.Ints) {
				return fallback(f)
			}
		} else {
			if yv.Type.Base == Int || !t.IsConst(yv.Var) || yv.Len() != cache.n {
				return fallback(f)
			}
			ys = t.Value(yv.Var)
			if !yFixed && !allFinite(ys) {
				return fallback(f)
			}
		}
		alpha, err := glmAlpha(f, p.scalars)
		if err != nil {
			return ctlNext, err
		}
		b, err := beta(f)
		if err != nil {
			return ctlNext, err
		}
		if t.Size(b) != cache.k {
			return fallback(f)
		}
		xt := ad.Mat{Rows: cache.k, Cols: cache.n, Data: cache.xt}
		var lp ad.Var
		switch fam.fam {
		case famNormal:
			sv, err := sigma(f)
			if err != nil {
				return ctlNext, err
			}
			sv = toReal(t, sv, sigTy)
			if s := t.Size(sv.Var); s != 1 && s != cache.n || !positiveFinite(t.Value(sv.Var)) {
				return fallback(f)
			}
			lp = density.NormalIDGLM(t, ys, xt, alpha, b, sv.Var)
		case famBernoulli:
			lp = density.BernoulliLogitGLM(t, yv.Ints, xt, alpha, b)
		default:
			lp = poissonLogGLM(t, yv.Ints, xt, alpha, b)
		}
		f.st.target = append(f.st.target, lp)
		return ctlNext, nil
	}, nil
}

// glmAlpha is the intercept α: the sum of the scalar terms (0 without any).
func glmAlpha(f *frame, terms []glmTerm) (ad.Var, error) {
	t := f.st.t
	var alpha ad.Var
	for i, s := range terms {
		v, err := s.coef(f)
		if err != nil {
			return ad.Var{}, err
		}
		x := toReal(t, v, TReal).Var
		switch {
		case i == 0 && !s.neg:
			alpha = x
		case i == 0:
			alpha = t.Neg(x)
		case s.neg:
			alpha = t.Sub(alpha, x)
		default:
			alpha = t.Add(alpha, x)
		}
	}
	if len(terms) == 0 {
		alpha = t.Const(0)
	}
	return alpha, nil
}

// glmBeta compiles the coefficient vector β (the columns' coefficients, then each matrix's
// coefficient vector): one view when the columns' coefficients are consecutive literal
// elements v[k], v[k+1], … of one vector and there is no matrix term, else the coefficients
// joined by one Concat.
func (c *compiler) glmBeta(p *glmParts) func(f *frame) (ad.Var, error) {
	if len(p.mats) == 0 && len(p.cols) > 0 {
		slot, k0 := p.cols[0].elem.slot, p.cols[0].elem.k
		run := slot >= 0
		for i, s := range p.cols {
			if s.neg || s.elem.slot != slot || s.elem.k != k0+i {
				run = false
			}
		}
		if run {
			k1 := k0 + len(p.cols)
			return func(f *frame) (ad.Var, error) {
				t := f.st.t
				v := f.read(slot)
				if t.Size(v.Var) < k1 {
					return ad.Var{}, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k1, t.Size(v.Var))
				}
				if k0 == 0 && k1 == t.Size(v.Var) {
					return v.Var, nil
				}
				return t.Slice(v.Var, k0, k1), nil
			}
		}
	}
	return func(f *frame) (ad.Var, error) {
		t := f.st.t
		var one [1]ad.Var
		coefs := one[:0]
		if len(p.cols)+len(p.mats) > 1 {
			coefs = make([]ad.Var, 0, len(p.cols)+len(p.mats))
		}
		for _, terms := range [][]glmTerm{p.cols, p.mats} {
			for _, s := range terms {
				v, err := s.coef(f)
				if err != nil {
					return ad.Var{}, err
				}
				x := toReal(t, v, TReal).Var
				if s.neg {
					x = t.Neg(x)
				}
				coefs = append(coefs, x)
			}
		}
		if len(coefs) == 1 {
			return coefs[0], nil
		}
		return t.Concat(coefs...), nil
	}
}

// build assembles the feature-major design from the data columns (cols, then each matrix's
// columns) and, for a fixed y, checks it once.
func (g *glmDesignCache) build(f *frame, p *glmParts, fam int, yFixed bool, yv Value) {
	t := f.st.t
	data := f.st.c.data
	var cols [][]float64
	var rows []int
	for _, s := range p.cols {
		v := data[s.slot]
		if v == nil {
			g.err = fmt.Errorf("column without data")
			return
		}
		cols = append(cols, v.x)
		rows = append(rows, len(v.x))
	}
	type mat struct {
		x    []float64
		r, c int
	}
	var mats []mat
	for _, s := range p.mats {
		v := data[s.slot]
		if v == nil || len(v.dims) != 2 {
			g.err = fmt.Errorf("matrix without two dims")
			return
		}
		mats = append(mats, mat{v.x, v.dims[0], v.dims[1]})
		rows = append(rows, v.dims[0])
		g.k += v.dims[1]
	}
	g.k += len(cols)
	g.n = rows[0]
	for _, r := range rows {
		if r != g.n {
			g.err = fmt.Errorf("columns of %d and %d rows", g.n, r)
			return
		}
	}
	g.xt = make([]float64, g.n*g.k)
	j := 0
	for _, col := range cols {
		copy(g.xt[j*g.n:(j+1)*g.n], col)
		j++
	}
	for _, m := range mats {
		for c := range m.c {
			dst := g.xt[j*g.n : (j+1)*g.n]
			for i := range g.n {
				dst[i] = m.x[i*m.c+c]
			}
			j++
		}
	}
	if yFixed {
		if fam == famNormal {
			g.yBad = yv.Type.Base == Int || !allFinite(t.Value(yv.Var))
		} else {
			g.yBad = !glmIntsOK(fam, yv.Ints)
		}
	}
}

// allFinite reports whether every x is finite (Stan's check on a GLM's y).
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// positiveFinite reports whether every x is in (0, ∞) (Stan's check on a scale).
func positiveFinite(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return false
		}
	}
	return true
}

// glmIntsOK reports whether the outcomes are in the family's support (Stan's check: {0, 1}
// for bernoulli, ≥ 0 for poisson).
func glmIntsOK(fam int, ys []int) bool {
	for _, y := range ys {
		if y < 0 || fam == famBernoulli && y > 1 {
			return false
		}
	}
	return true
}

// poissonLogGLM records Σᵢ log Poisson(yᵢ | exp(α + xᵢᵀβ)) = Σᵢ yᵢηᵢ − e^{ηᵢ} − log yᵢ! as one
// node over the feature-major design XT (K×N): η = α + XTᵀβ (kernel.GemvT), ∂/∂ηᵢ = yᵢ − e^{ηᵢ},
// ∂α = Σᵢ ∂/∂ηᵢ, ∂β = XT·∂/∂η (kernel.GemvN). Cost: 2·N·K multiply-adds, N exp and N lgamma.
func poissonLogGLM(t *ad.Tape, y []int, xt ad.Mat, alpha, beta ad.Var) ad.Var {
	n := len(y)
	fb := t.Fused()
	eta := t.Scratch(n)
	a := t.Float(alpha)
	for i := range eta {
		eta[i] = a
	}
	kern.GemvT(xt.Data, n, t.Value(beta), eta)
	lp, sg := 0.0, 0.0
	for i, e := range eta {
		yi := float64(y[i])
		ex := math.Exp(e)
		lp += yi*e - ex - mathx.Lgamma(yi+1)
		eta[i] = yi - ex
		sg += eta[i]
	}
	if da := fb.Partial(alpha); da != nil {
		da[0] += sg
	}
	if db := fb.Partial(beta); db != nil {
		kern.GemvN(xt.Data, n, eta, db)
	}
	return fb.Done(lp)
}
