package stan

import (
	"math"

	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// rngSigs returns the built-in signatures of this group (see Builtins): the _rng functions of
// generated quantities and transformed data, drawing from Ctx.RNG. A univariate _rng with
// only scalar arguments returns one draw; with a container argument it returns an array of
// draws, one per element (Stan's vectorised _rng). Results are constants (data).
func rngSigs() []Sig {
	var s []Sig
	for i := range contFamilies {
		f := &contFamilies[i]
		args := make([]Arg, f.np)
		for j := range args {
			args[j] = aReals
		}
		s = append(s, Sig{Name: f.name + "_rng", Args: args, RetOf: rngRet(Real), Fn: contRng(f)})
	}
	for i := range discFamilies {
		f := &discFamilies[i]
		args := make([]Arg, 0, f.nint+f.np)
		for range f.nint {
			args = append(args, aInts)
		}
		for range f.np {
			args = append(args, aReals)
		}
		s = append(s, Sig{Name: f.name + "_rng", Args: args, RetOf: rngRet(Int), Fn: discRng(f)})
	}
	s = append(s,
		sig("categorical_rng", TInt, categoricalRng(false), aVector),
		sig("categorical_logit_rng", TInt, categoricalRng(true), aVector),
		sig("multinomial_rng", tArrInt, multinomialRng, aVector, aInt),
		sig("dirichlet_rng", TVector, dirichletRng, aVector),
		sig("multi_normal_rng", TVector, multiNormalRng(false), aVector, aMatrix),
		sig("multi_normal_cholesky_rng", TVector, multiNormalRng(true), aVector, aMatrix),
		sig("multi_normal_rng", tArrVector, multiNormalRng(false), ex(tArrVector), aMatrix),
		sig("multi_normal_cholesky_rng", tArrVector, multiNormalRng(true), ex(tArrVector), aMatrix),
	)
	return s
}

// rngRet is b for scalar arguments and array[] b when any argument is a container.
func rngRet(b Base) RetFunc {
	return func(args []Type) Type {
		for _, a := range args {
			if a.Array > 0 || a.Base == Vector || a.Base == RowVector {
				return Type{Base: b, Array: 1}
			}
		}
		return Type{Base: b}
	}
}

// needRNG returns the error of an _rng called where there is no random stream.
func needRNG(c *Ctx, name string) error {
	if c.RNG == nil {
		return errf(name, "random number generators are only allowed in transformed data and generated quantities")
	}
	return nil
}

// anyContainer reports whether one of args is a container.
func anyContainer(args []Value) bool {
	for _, a := range args {
		if isContainer(a) {
			return true
		}
	}
	return false
}

func contRng(f *contFamily) Impl {
	name := f.name + "_rng"
	return func(c *Ctx, args []Value) (Value, error) {
		if err := needRNG(c, name); err != nil {
			return Value{}, err
		}
		n, err := commonSize(name, f.labels[1:f.np+1], args)
		if err != nil {
			return Value{}, err
		}
		var vs [3][]float64
		for j := range f.np {
			vs[j] = vals(c, args[j])
			if err := checkVals(name, f.labels[j+1], f.checks[j+1], vs[j], isContainer(args[j])); err != nil {
				return Value{}, err
			}
		}
		out := c.T.Scratch(n)
		var p [3]float64
		for i := range n {
			for j := range f.np {
				p[j] = bcast(vs[j], i)
			}
			if f.name == "uniform" && !(p[1] > p[0]) {
				return Value{}, errf(name, "Upper bound parameter is %s, but must be greater than %s", fmtReal(p[1]), fmtReal(p[0]))
			}
			out[i] = f.rng(c.RNG.Rand, p)
		}
		if !anyContainer(args) {
			return realV(c.T.Const(out[0])), nil
		}
		return Value{Type: tArrReal, Dims: []int{n}, Var: c.T.ConstRef(out)}, nil
	}
}

func discRng(f *discFamily) Impl {
	name := f.name + "_rng"
	return func(c *Ctx, args []Value) (Value, error) {
		if err := needRNG(c, name); err != nil {
			return Value{}, err
		}
		n, err := commonSize(name, f.labels[1:1+f.nint+f.np], args)
		if err != nil {
			return Value{}, err
		}
		var trials []int
		if f.nint > 0 {
			trials = args[0].Ints
			if err := checkInts(name, f.labels[1], trials, 0, -1, isContainer(args[0])); err != nil {
				return Value{}, err
			}
		}
		var vs [3][]float64
		for j := range f.np {
			a := args[f.nint+j]
			vs[j] = vals(c, a)
			if err := checkVals(name, f.labels[1+f.nint+j], f.checks[j], vs[j], isContainer(a)); err != nil {
				return Value{}, err
			}
		}
		out := make([]int, n)
		var p [3]float64
		for i := range n {
			for j := range f.np {
				p[j] = bcast(vs[j], i)
			}
			m := 0
			if trials != nil {
				m = atInt(trials, i)
			}
			out[i] = f.rng(c.RNG.Rand, m, p)
		}
		if !anyContainer(args) {
			return intV(out[0]), nil
		}
		return intsV(out, n), nil
	}
}

// drawCategorical returns a 1-based category drawn with probabilities p.
func drawCategorical(u float64, p []float64) int {
	s := 0.0
	for k, pk := range p {
		s += pk
		if u < s {
			return k + 1
		}
	}
	return len(p)
}

func categoricalRng(logit bool) Impl {
	name := "categorical_rng"
	if logit {
		name = "categorical_logit_rng"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		if err := needRNG(c, name); err != nil {
			return Value{}, err
		}
		p := c.T.Value(args[0].Var)
		if logit {
			lse := mathx.LogSumExp(p)
			q := c.T.Scratch(len(p))
			for i, x := range p {
				q[i] = math.Exp(x - lse)
			}
			p = q
		} else if err := checkSimplex(name, "Probabilities parameter", p); err != nil {
			return Value{}, err
		}
		return intV(drawCategorical(c.RNG.Float64(), p)), nil
	}
}

// multinomialRng draws N categories and counts them.
func multinomialRng(c *Ctx, args []Value) (Value, error) {
	const name = "multinomial_rng"
	if err := needRNG(c, name); err != nil {
		return Value{}, err
	}
	p := c.T.Value(args[0].Var)
	if err := checkSimplex(name, "Probabilities parameter", p); err != nil {
		return Value{}, err
	}
	n := intOf(args[1])
	if n < 0 {
		return Value{}, errf(name, "number of trials variables is %d, but must be nonnegative!", n)
	}
	out := make([]int, len(p))
	for range n {
		out[drawCategorical(c.RNG.Float64(), p)-1]++
	}
	return intsV(out, len(p)), nil
}

func dirichletRng(c *Ctx, args []Value) (Value, error) {
	const name = "dirichlet_rng"
	if err := needRNG(c, name); err != nil {
		return Value{}, err
	}
	a := c.T.Value(args[0].Var)
	if err := checkVals(name, "prior sample sizes", chkPositiveFinite, a, true); err != nil {
		return Value{}, err
	}
	out := c.T.Scratch(len(a))
	dist.Dirichlet{Alpha: a}.Rand(out, c.RNG.Rand)
	return Value{Type: TVector, Dims: args[0].Dims, Var: c.T.ConstRef(out)}, nil
}

func multiNormalRng(chol bool) Impl {
	name := "multi_normal_rng"
	if chol {
		name = "multi_normal_cholesky_rng"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		if err := needRNG(c, name); err != nil {
			return Value{}, err
		}
		mu := args[0]
		m, r, k := matOf(c, args[1])
		kk := mu.Dims[len(mu.Dims)-1]
		if r != k || kk != k {
			return Value{}, errf(name, "size of location parameter (%d) and covariance (%d×%d) must match", kk, r, k)
		}
		l := c.T.Value(m)
		if !chol {
			if err := checkSymmetric(c, name, m, r, k); err != nil {
				return Value{}, err
			}
			lb := c.T.Scratch(k * k)
			if !mathx.Cholesky(lb, l, k) {
				return Value{}, errf(name, "Covariance matrix is not positive definite")
			}
			l = lb
		}
		mv := c.T.Value(mu.Var)
		out := c.T.Scratch(len(mv))
		for i := 0; i < len(mv); i += k {
			dist.MultiNormalCholesky{Mu: mv[i : i+k], L: l}.Rand(out[i:i+k], c.RNG.Rand)
		}
		return Value{Type: mu.Type, Dims: mu.Dims, Var: c.T.ConstRef(out)}, nil
	}
}
