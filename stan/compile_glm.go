package stan

import (
	"fmt"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
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
// design X* is assembled once from the data columns (x2 … xK, X's columns) and reused by every
// evaluation, α is the sum of the scalar terms, β* the coefficients in column order. One fused
// node then computes the log density and all partials in two passes over the design
// (dist_discrete.go's normalIDGLM, logitGLM), as a hand-written model would. The result differs from the
// term-by-term evaluation by rounding only. Patterns: sums and differences of scalar terms,
// s * x and x * s (s a real scalar expression, x a data vector), and X * b (X a data matrix, b
// a vector). Anything else — and a design whose columns do not have y's length — compiles as
// written.

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
					p.cols = append(p.cols, glmTerm{slot: slot, coef: fn, neg: neg})
					return true, nil
				}
			}
			if slot, ok := c.globalData(e.L, Matrix); ok && e.R.Info().Type == TVector {
				fn, err := c.expr(e.R)
				if err != nil {
					return false, err
				}
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

// glmDesignCache is the design X* of one fused statement, built at its first evaluation from
// the data (which no evaluation changes) and shared by all.
type glmDesignCache struct {
	once sync.Once
	x    []float64 // N×K row-major
	n, k int
	err  error // the columns do not fit together: the statement runs unfused
}

// glmFamilies are the densities fused with their GLM form: the statement's distribution name,
// the GLM's implementation, and whether y is an int array (else a real vector) and a scale
// follows the linear predictor (normal's σ).
var glmFamilies = map[string]struct {
	impl       func() Impl
	ints, sigm bool
}{
	"normal":          {func() Impl { return normalIDGLM }, false, true},
	"bernoulli_logit": {func() Impl { return logitGLM(glmBernoulli) }, true, false},
	"poisson_log":     {func() Impl { return logitGLM(glmPoisson) }, true, false},
}

// fusedGLM compiles y ~ dist(lp[, sigma]) (or target += dist_lpdf(y | lp[, sigma])) into the
// family's GLM when lp is a fused linear predictor and y is data; fallback is the statement
// compiled as written, used when the design does not fit (nil, nil: no fusion).
func (c *compiler) fusedGLM(pos Pos, dist string, yE Expr, args []Expr, fallback execFn) (execFn, error) {
	fam, ok := glmFamilies[dist]
	if c.plain || !ok || !yE.Info().Data || len(args) != map[bool]int{false: 1, true: 2}[fam.sigm] || args[0].Info().Type != TVector {
		return nil, nil
	}
	if fam.ints && yE.Info().Type != (Type{Base: Int, Array: 1}) || !fam.ints && yE.Info().Type != TVector {
		return nil, nil
	}
	var p glmParts
	ok, err := c.glmSplit(args[0], false, &p)
	if err != nil || !ok || len(p.cols)+len(p.mats) == 0 {
		return nil, err
	}
	y, err := c.expr(yE)
	if err != nil {
		return nil, err
	}
	var sigma evalFn
	var sigTy Type
	if fam.sigm {
		if sigma, err = c.expr(args[1]); err != nil {
			return nil, err
		}
		sigTy = args[1].Info().Type
	}
	impl := fam.impl()
	cache := &glmDesignCache{}
	c.glms++
	return func(f *frame) (ctl, error) {
		cache.once.Do(func() { cache.build(f, &p) })
		if cache.err != nil {
			return fallback(f)
		}
		t := f.st.t
		yv, err := y(f)
		if err != nil {
			return ctlNext, err
		}
		if fam.ints {
			if len(yv.Ints) != cache.n {
				return fallback(f)
			}
		} else if yv = toReal(t, yv, TVector); !t.IsConst(yv.Var) || yv.Len() != cache.n {
			return fallback(f)
		}
		alpha := t.Const(0)
		for i, s := range p.scalars {
			v, err := s.coef(f)
			if err != nil {
				return ctlNext, err
			}
			x := toReal(t, v, TReal).Var
			switch {
			case i == 0 && !s.neg:
				alpha = x
			case s.neg:
				alpha = t.Sub(alpha, x)
			default:
				alpha = t.Add(alpha, x)
			}
		}
		coefs := make([]ad.Var, 0, len(p.cols)+len(p.mats))
		for _, terms := range [][]glmTerm{p.cols, p.mats} {
			for _, s := range terms {
				v, err := s.coef(f)
				if err != nil {
					return ctlNext, err
				}
				x := toReal(t, v, TReal).Var
				if s.neg {
					x = t.Neg(x)
				}
				coefs = append(coefs, x)
			}
		}
		beta := coefs[0]
		if len(coefs) > 1 {
			beta = t.Concat(coefs...)
		}
		if t.Size(beta) != cache.k {
			return fallback(f)
		}
		st := f.st
		base := len(st.args)
		defer func() { st.args = st.args[:base] }()
		st.args = append(st.args, yv,
			mkValue(t, TMatrix, []int{cache.n, cache.k}, t.ConstRef(cache.x)),
			Value{Type: TReal, Var: alpha},
			Value{Type: TVector, Dims: []int{cache.k}, Var: beta})
		if sigma != nil {
			sv, err := sigma(f)
			if err != nil {
				return ctlNext, err
			}
			st.args = append(st.args, toReal(t, sv, sigTy))
		}
		lp, err := impl(f.ctx(pos), st.args[base:len(st.args):len(st.args)])
		if err != nil {
			return ctlNext, withPos(pos, err)
		}
		st.addTarget(lp)
		return ctlNext, nil
	}, nil
}

// build assembles the design from the data columns (cols, then each matrix's columns).
func (g *glmDesignCache) build(f *frame, p *glmParts) {
	t := f.st.t
	var cols [][]float64
	var rows []int
	for _, s := range p.cols {
		v := f.read(s.slot)
		cols = append(cols, t.Value(v.Var))
		rows = append(rows, v.Len())
	}
	type mat struct {
		x    []float64
		r, c int
	}
	var mats []mat
	for _, s := range p.mats {
		v := f.read(s.slot)
		if len(v.Dims) != 2 {
			g.err = fmt.Errorf("matrix without two dims")
			return
		}
		mats = append(mats, mat{t.Value(v.Var), v.Dims[0], v.Dims[1]})
		rows = append(rows, v.Dims[0])
		g.k += v.Dims[1]
	}
	g.k += len(cols)
	g.n = rows[0]
	for _, r := range rows {
		if r != g.n {
			g.err = fmt.Errorf("columns of %d and %d rows", g.n, r)
			return
		}
	}
	g.x = make([]float64, g.n*g.k)
	for i := range g.n {
		row := g.x[i*g.k : (i+1)*g.k]
		j := 0
		for _, col := range cols {
			row[j] = col[i]
			j++
		}
		for _, m := range mats {
			copy(row[j:j+m.c], m.x[i*m.c:(i+1)*m.c])
			j += m.c
		}
	}
}
