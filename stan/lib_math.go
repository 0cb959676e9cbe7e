package stan

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// Every type a vectorised unary function of Stan accepts (Reference Manual, "Vectorization of
// unary functions"): scalars, vectors, matrices and arrays of them. Int types are accepted by
// promotion of the real ones.
var unaryTypes = []Type{
	TReal, TVector, TRowVector, TMatrix,
	tArrReal, tArrVector, tArrRowVec, tArrMatrix,
	tArrReal2, tArrVector2, {Base: RowVector, Array: 2}, {Base: Matrix, Array: 2},
	{Base: Real, Array: 3},
}

// binaryTypes are the containers of a vectorised binary function (each paired with a real
// scalar or with itself).
var binaryTypes = []Type{TVector, TRowVector, TMatrix, tArrReal}

// reduceTypes are the containers the reductions (sum, mean, …) accept.
var reduceTypes = []Type{tArrReal, TVector, TRowVector, TMatrix}

// mathSigs returns the built-in signatures of this group (see Builtins).
func mathSigs() []Sig {
	var s []Sig
	unary := func(name string, fn Impl) {
		for _, t := range unaryTypes {
			s = append(s, sig(name, t, fn, ex(t)))
		}
	}
	// Unary functions with a tape op.
	for _, u := range []struct {
		name string
		f    func(t *ad.Tape, a ad.Var) ad.Var
	}{
		{"exp", (*ad.Tape).Exp}, {"log", (*ad.Tape).Log}, {"log1p", (*ad.Tape).Log1p},
		{"expm1", (*ad.Tape).Expm1}, {"inv_logit", (*ad.Tape).Sigmoid},
		{"log_inv_logit", (*ad.Tape).LogSigmoid}, {"lgamma", (*ad.Tape).Lgamma},
		{"sqrt", (*ad.Tape).Sqrt}, {"square", (*ad.Tape).Square}, {"fabs", (*ad.Tape).Abs},
		{"tanh", (*ad.Tape).Tanh},
	} {
		unary(u.name, tapeUnary(u.f))
	}
	// abs keeps ints int.
	s = append(s, sig("abs", TInt, absInt, aInt))
	unary("abs", tapeUnary((*ad.Tape).Abs))
	// Unary functions as Map nodes (value and derivative).
	for _, u := range []struct {
		name string
		f    func(x float64) (float64, float64)
	}{
		{"log1m", func(x float64) (float64, float64) { return math.Log1p(-x), -1 / (1 - x) }},
		{"logit", func(x float64) (float64, float64) { return math.Log(x / (1 - x)), 1 / (x * (1 - x)) }},
		{"log1m_inv_logit", func(x float64) (float64, float64) {
			return mathx.LogLogistic(-x), -mathx.Logistic(x)
		}},
		{"log1m_exp", func(x float64) (float64, float64) {
			// d/dx log(1 − eˣ) = −eˣ/(1 − eˣ) = −1/expm1(−x).
			return mathx.Log1mExp(x), -1 / math.Expm1(-x)
		}},
		{"log1p_exp", func(x float64) (float64, float64) { return mathx.Log1pExp(x), mathx.Logistic(x) }},
		{"tgamma", func(x float64) (float64, float64) { g := math.Gamma(x); return g, g * mathx.Digamma(x) }},
		{"digamma", func(x float64) (float64, float64) { return mathx.Digamma(x), mathx.Trigamma(x) }},
		{"trigamma", func(x float64) (float64, float64) { return mathx.Trigamma(x), tetragamma(x) }},
		{"Phi", phi},
		{"Phi_approx", phiApprox},
		{"inv_Phi", invPhi},
		{"inv", func(x float64) (float64, float64) { return 1 / x, -1 / (x * x) }},
		{"inv_sqrt", func(x float64) (float64, float64) { r := 1 / math.Sqrt(x); return r, -0.5 * r / x }},
		{"inv_square", func(x float64) (float64, float64) { return 1 / (x * x), -2 / (x * x * x) }},
		{"inv_cloglog", func(x float64) (float64, float64) {
			e := math.Exp(x)
			return -math.Expm1(-e), math.Exp(x - e)
		}},
		{"cbrt", func(x float64) (float64, float64) { r := math.Cbrt(x); return r, 1 / (3 * r * r) }},
		{"exp2", func(x float64) (float64, float64) { r := math.Exp2(x); return r, r * math.Ln2 }},
		{"log2", func(x float64) (float64, float64) { return math.Log2(x), 1 / (x * math.Ln2) }},
		{"log10", func(x float64) (float64, float64) { return math.Log10(x), 1 / (x * math.Ln10) }},
		{"sin", func(x float64) (float64, float64) { return math.Sin(x), math.Cos(x) }},
		{"cos", func(x float64) (float64, float64) { return math.Cos(x), -math.Sin(x) }},
		{"tan", func(x float64) (float64, float64) { r := math.Tan(x); return r, 1 + r*r }},
		{"asin", func(x float64) (float64, float64) { return math.Asin(x), 1 / math.Sqrt(1-x*x) }},
		{"acos", func(x float64) (float64, float64) { return math.Acos(x), -1 / math.Sqrt(1-x*x) }},
		{"atan", func(x float64) (float64, float64) { return math.Atan(x), 1 / (1 + x*x) }},
		{"sinh", func(x float64) (float64, float64) { return math.Sinh(x), math.Cosh(x) }},
		{"cosh", func(x float64) (float64, float64) { return math.Cosh(x), math.Sinh(x) }},
		{"asinh", func(x float64) (float64, float64) { return math.Asinh(x), 1 / math.Sqrt(x*x+1) }},
		{"acosh", func(x float64) (float64, float64) { return math.Acosh(x), 1 / math.Sqrt(x*x-1) }},
		{"atanh", func(x float64) (float64, float64) { return math.Atanh(x), 1 / (1 - x*x) }},
		{"erf", func(x float64) (float64, float64) { return math.Erf(x), 2 / math.SqrtPi * math.Exp(-x*x) }},
		{"erfc", func(x float64) (float64, float64) { return math.Erfc(x), -2 / math.SqrtPi * math.Exp(-x*x) }},
		{"floor", func(x float64) (float64, float64) { return math.Floor(x), 0 }},
		{"ceil", func(x float64) (float64, float64) { return math.Ceil(x), 0 }},
		{"round", func(x float64) (float64, float64) { return math.Round(x), 0 }},
		{"trunc", func(x float64) (float64, float64) { return math.Trunc(x), 0 }},
	} {
		unary(u.name, mapUnary(u.f))
	}
	// Scalar functions that Stan does not vectorise.
	s = append(s,
		sig("step", TReal, mapScalar(func(x float64) (float64, float64) {
			if x < 0 {
				return 0, 0
			}
			return 1, 0
		}), aReal),
		sig("int_step", TInt, intStep, aInt), sig("int_step", TInt, intStep, aReal),
		sig("is_inf", TInt, isInf, aReal), sig("is_nan", TInt, isNaN, aReal),
		sig("to_int", TInt, toInt, exData(TReal)),
		sig("choose", TInt, choose, aInt, aInt),
		sig("min", TInt, minMaxInt(false), aInt, aInt), sig("max", TInt, minMaxInt(true), aInt, aInt),
		sig("min", TReal, binaryFn("min", fminD), aReal, aReal),
		sig("max", TReal, binaryFn("max", fmaxD), aReal, aReal),
		sig("log_sum_exp", TReal, binaryFn("log_sum_exp", logSumExp2), aReal, aReal),
		sig("log_mix", TReal, logMix3, aReal, aReal, aReal),
		sig("log_mix", TReal, logMixVec, aVector, aVector),
		sig("log_mix", TReal, logMixVec, aVector, ex(tArrReal)),
		sig("log_mix", TReal, logMixVec, aRowVec, aVector),
		sig("log_mix", TReal, logMixVec, ex(tArrReal), ex(tArrReal)),
		sig("e", TReal, constFn(math.E)), sig("pi", TReal, constFn(math.Pi)),
		sig("sqrt2", TReal, constFn(math.Sqrt2)), sig("log2", TReal, constFn(math.Ln2)),
		sig("log10", TReal, constFn(math.Ln10)),
		sig("not_a_number", TReal, constFn(math.NaN())),
		sig("positive_infinity", TReal, constFn(math.Inf(1))),
		sig("negative_infinity", TReal, constFn(math.Inf(-1))),
		sig("machine_precision", TReal, constFn(0x1p-52)),
	)
	// Vectorised binary functions.
	for _, b := range []struct {
		name string
		f    func(x, y float64) (float64, float64, float64)
	}{
		{"pow", powD}, {"fmin", fminD}, {"fmax", fmaxD}, {"fdim", fdimD}, {"hypot", hypotD},
		{"atan2", atan2D}, {"lbeta", lbetaD}, {"lchoose", lchooseD},
		{"binomial_coefficient_log", lchooseD}, {"log_diff_exp", logDiffExpD},
		{"fmod", fmodD}, {"log_inv_logit_diff", logInvLogitDiffD}, {"owens_t", nil},
	} {
		if b.f == nil {
			continue
		}
		fn := binaryFn(b.name, b.f)
		s = append(s, sig(b.name, TReal, fn, aReal, aReal))
		for _, ct := range binaryTypes {
			s = append(s, sig(b.name, ct, fn, ex(ct), aReal), sig(b.name, ct, fn, aReal, ex(ct)),
				sig(b.name, ct, fn, ex(ct), ex(ct)))
		}
	}
	// Reductions (int arrays first: their results stay int).
	s = append(s, sig("sum", TInt, sumInt, ex(tArrInt)), sig("prod", TInt, prodInt, ex(tArrInt)),
		sig("max", TInt, minMaxInts(true), ex(tArrInt)), sig("min", TInt, minMaxInts(false), ex(tArrInt)),
		sig("sum", TInt, identity, aInt), sig("sum", TReal, identity, aReal))
	for _, ct := range reduceTypes {
		a := ex(ct)
		s = append(s,
			sig("sum", TReal, reduceTape("sum", (*ad.Tape).Sum), a),
			sig("mean", TReal, meanFn, a),
			sig("log_sum_exp", TReal, reduceTape("log_sum_exp", (*ad.Tape).LogSumExp), a),
			sig("prod", TReal, prodFn, a),
			sig("variance", TReal, varianceFn(false), a),
			sig("sd", TReal, varianceFn(true), a),
			sig("max", TReal, minMaxFn("max", true), a),
			sig("min", TReal, minMaxFn("min", false), a),
		)
	}
	return s
}

// identity returns its argument (sum of a scalar).
func identity(c *Ctx, args []Value) (Value, error) { return args[0], nil }

// tapeUnary applies a tape op elementwise.
func tapeUnary(f func(t *ad.Tape, a ad.Var) ad.Var) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a := args[0]
		return likeV(a, f(c.T, realVar(c, a))), nil
	}
}

// mapUnary applies f (value, derivative) elementwise as one Map node.
func mapUnary(f func(x float64) (float64, float64)) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a := args[0]
		x := realVar(c, a)
		xv := c.T.Value(x)
		y, val, d := c.T.Map(x)
		for i, xi := range xv {
			val[i], d[i] = f(xi)
		}
		return likeV(a, y), nil
	}
}

// mapScalar is mapUnary for a scalar function with a real result.
func mapScalar(f func(x float64) (float64, float64)) Impl {
	m := mapUnary(f)
	return func(c *Ctx, args []Value) (Value, error) {
		v, err := m(c, args)
		v.Type = TReal
		return v, err
	}
}

// constFn is a nullary constant function.
func constFn(x float64) Impl {
	return func(c *Ctx, args []Value) (Value, error) { return realV(c.T.Const(x)), nil }
}

func absInt(c *Ctx, args []Value) (Value, error) {
	k := args[0].Ints[0]
	if k < 0 {
		k = -k
	}
	return intV(k), nil
}

func intStep(c *Ctx, args []Value) (Value, error) {
	if scalarOf(c, args[0]) > 0 {
		return intV(1), nil
	}
	return intV(0), nil
}

func isInf(c *Ctx, args []Value) (Value, error) {
	if math.IsInf(scalarOf(c, args[0]), 0) {
		return intV(1), nil
	}
	return intV(0), nil
}

func isNaN(c *Ctx, args []Value) (Value, error) {
	if math.IsNaN(scalarOf(c, args[0])) {
		return intV(1), nil
	}
	return intV(0), nil
}

func toInt(c *Ctx, args []Value) (Value, error) {
	x := scalarOf(c, args[0])
	if math.IsNaN(x) || math.Abs(x) >= math.MaxInt32 {
		return Value{}, errf("to_int", "x is %v, but must be in the range of int", x)
	}
	return intV(int(x)), nil
}

func choose(c *Ctx, args []Value) (Value, error) {
	n, k := args[0].Ints[0], args[1].Ints[0]
	if n < 0 || k < 0 {
		return Value{}, errf("choose", "arguments are %d and %d, but must be nonnegative!", n, k)
	}
	if k > n {
		return intV(0), nil
	}
	return intV(int(math.Round(math.Exp(mathx.LogBinomial(float64(n), float64(k)))))), nil
}

func minMaxInt(isMax bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a, b := args[0].Ints[0], args[1].Ints[0]
		if (a < b) == isMax {
			return intV(b), nil
		}
		return intV(a), nil
	}
}

// binaryFn applies f (value and both partials) elementwise to two arguments, a scalar
// broadcasting, as one Custom node.
func binaryFn(name string, f func(x, y float64) (float64, float64, float64)) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a, b := args[0], args[1]
		if isContainer(a) && isContainer(b) && !dimsEqual(a.Dims, b.Dims) {
			return Value{}, errf(name, "size of first argument (%s) and second argument (%s) must match", dimStr(a.Dims), dimStr(b.Dims))
		}
		x, y := realVar(c, a), realVar(c, b)
		res := a
		if !isContainer(a) {
			res = b
		}
		n := res.Len()
		node := c.T.Custom(binBack{}, n, 2*n, x, y)
		out, aux := node.Value(), node.Aux()
		xv, yv := c.T.Value(x), c.T.Value(y)
		for i := range n {
			out[i], aux[i], aux[n+i] = f(bcast(xv, i), bcast(yv, i))
		}
		v := node.Var()
		if res.Type.Base == Matrix && res.Type.Array == 0 {
			v = c.T.AsMatrix(v, res.Dims[0], res.Dims[1])
		}
		return Value{Type: promoted(res.Type), Dims: res.Dims, Var: v}, nil
	}
}

// bcast is x[i] with a length-1 x broadcast.
func bcast(x []float64, i int) float64 {
	if len(x) == 1 {
		return x[0]
	}
	return x[i]
}

// binBack is the backward rule of binaryFn: aux holds ∂f/∂x then ∂f/∂y per output.
type binBack struct{}

func (binBack) Backward(c ad.Custom) {
	t := c.Tape()
	g, aux := c.Grad(), c.Aux()
	n := len(g)
	for k := range 2 {
		ga := t.Grad(c.Arg(k))
		if ga == nil {
			continue
		}
		d := aux[k*n : (k+1)*n]
		if len(ga) == 1 {
			s := 0.0
			for i, gi := range g {
				s += gi * d[i]
			}
			ga[0] += s
			continue
		}
		for i, gi := range g {
			ga[i] += gi * d[i]
		}
	}
}

func powD(x, y float64) (float64, float64, float64) {
	r := math.Pow(x, y)
	dy := 0.0
	if x > 0 {
		dy = r * math.Log(x)
	}
	dx := 0.0
	if y != 0 {
		dx = y * math.Pow(x, y-1)
	}
	return r, dx, dy
}

func fminD(x, y float64) (float64, float64, float64) {
	if math.IsNaN(x) {
		return y, 0, 1
	}
	if x <= y || math.IsNaN(y) {
		return x, 1, 0
	}
	return y, 0, 1
}

func fmaxD(x, y float64) (float64, float64, float64) {
	if math.IsNaN(x) {
		return y, 0, 1
	}
	if x >= y || math.IsNaN(y) {
		return x, 1, 0
	}
	return y, 0, 1
}

func fdimD(x, y float64) (float64, float64, float64) {
	if x > y {
		return x - y, 1, -1
	}
	return 0, 0, 0
}

func hypotD(x, y float64) (float64, float64, float64) {
	h := math.Hypot(x, y)
	return h, x / h, y / h
}

func atan2D(y, x float64) (float64, float64, float64) {
	r2 := x*x + y*y
	return math.Atan2(y, x), x / r2, -y / r2
}

func fmodD(x, y float64) (float64, float64, float64) {
	return math.Mod(x, y), 1, -math.Trunc(x / y)
}

// lbetaD is log B(a, b) = lnΓ(a) + lnΓ(b) − lnΓ(a+b).
func lbetaD(a, b float64) (float64, float64, float64) {
	ds := mathx.Digamma(a + b)
	return mathx.LogBeta(a, b), mathx.Digamma(a) - ds, mathx.Digamma(b) - ds
}

// lchooseD is log C(n, k) = lnΓ(n+1) − lnΓ(k+1) − lnΓ(n−k+1).
func lchooseD(n, k float64) (float64, float64, float64) {
	dnk := mathx.Digamma(n - k + 1)
	return mathx.LogBinomial(n, k), mathx.Digamma(n+1) - dnk, dnk - mathx.Digamma(k+1)
}

// logDiffExpD is log(eˣ − eʸ) for x ≥ y.
func logDiffExpD(x, y float64) (float64, float64, float64) {
	if x < y {
		return math.NaN(), math.NaN(), math.NaN()
	}
	if math.IsInf(y, -1) {
		return x, 1, 0
	}
	v := x + mathx.Log1mExp(y-x)
	// ∂/∂x = eˣ/(eˣ − eʸ) = 1/(1 − e^{y−x}); ∂/∂y = −e^{y−x}/(1 − e^{y−x}).
	e := math.Exp(y - x)
	return v, 1 / (1 - e), -e / (1 - e)
}

// logInvLogitDiffD is log(logistic(x) − logistic(y)) for x > y.
func logInvLogitDiffD(x, y float64) (float64, float64, float64) {
	v := x - mathx.Log1pExp(x) + mathx.Log1mExp(y-x) - mathx.Log1pExp(y)
	// ∂/∂x = 1 − σ(x) + 1/expm1(x−y)·… computed from the pieces:
	// d/dx [x − log1p(eˣ) + log(1 − e^{y−x})] = 1 − σ(x) + e^{y−x}/(1 − e^{y−x}).
	e := math.Exp(y - x)
	dx := 1 - mathx.Logistic(x) + e/(1-e)
	dy := -e/(1-e) - mathx.Logistic(y)
	return v, dx, dy
}

func logSumExp2(x, y float64) (float64, float64, float64) {
	if math.IsInf(x, -1) && math.IsInf(y, -1) {
		return x, 0.5, 0.5
	}
	v := mathx.LogAddExp(x, y)
	return v, math.Exp(x - v), math.Exp(y - v)
}

// logMix3 is log_mix(θ, λ₁, λ₂) = log(θ e^{λ₁} + (1−θ) e^{λ₂}).
func logMix3(c *Ctx, args []Value) (Value, error) {
	th := scalarOf(c, args[0])
	if !(th >= 0 && th <= 1) {
		return Value{}, errf("log_mix", "lambda is %v, but must be in the interval [0, 1]", th)
	}
	vars := [3]ad.Var{realVar(c, args[0]), realVar(c, args[1]), realVar(c, args[2])}
	l1, l2 := c.T.Float(vars[1]), c.T.Float(vars[2])
	a, b := math.Log(th)+l1, math.Log1p(-th)+l2
	v := mathx.LogAddExp(a, b)
	w1, w2 := math.Exp(a-v), math.Exp(b-v)
	fb := c.T.Fused()
	if d := fb.Partial(vars[0]); d != nil {
		d[0] = math.Exp(l1-v) - math.Exp(l2-v)
	}
	if d := fb.Partial(vars[1]); d != nil {
		d[0] += w1
	}
	if d := fb.Partial(vars[2]); d != nil {
		d[0] += w2
	}
	return realV(fb.Done(v)), nil
}

// logMixVec is log_mix(θ, λ) = log Σ_k θ_k e^{λ_k}.
func logMixVec(c *Ctx, args []Value) (Value, error) {
	th, lam := realVar(c, args[0]), realVar(c, args[1])
	tv, lv := c.T.Value(th), c.T.Value(lam)
	if len(tv) != len(lv) {
		return Value{}, errf("log_mix", "size of theta (%d) and lambda (%d) must match", len(tv), len(lv))
	}
	m := math.Inf(-1)
	for k := range tv {
		if !(tv[k] >= 0 && tv[k] <= 1) {
			return Value{}, errf("log_mix", "theta[%d] is %v, but must be in the interval [0, 1]", k+1, tv[k])
		}
		m = math.Max(m, math.Log(tv[k])+lv[k])
	}
	s := 0.0
	for k := range tv {
		s += tv[k] * math.Exp(lv[k]-m)
	}
	v := m + math.Log(s)
	fb := c.T.Fused()
	dt, dl := fb.Partial(th), fb.Partial(lam)
	for k := range tv {
		e := math.Exp(lv[k] - v)
		if dt != nil {
			dt[k] += e
		}
		if dl != nil {
			dl[k] += tv[k] * e
		}
	}
	return realV(fb.Done(v)), nil
}

// reduceTape applies a reducing tape op to a container.
func reduceTape(name string, f func(t *ad.Tape, a ad.Var) ad.Var) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a := args[0]
		if a.Len() == 0 {
			if name == "sum" {
				return realV(c.T.Const(0)), nil
			}
			return realV(c.T.Const(math.Inf(-1))), nil
		}
		return realV(f(c.T, realVar(c, a))), nil
	}
}

func meanFn(c *Ctx, args []Value) (Value, error) {
	if args[0].Len() == 0 {
		return Value{}, errf("mean", "argument has size 0, but must have a non-zero size")
	}
	return realV(c.T.Mean(realVar(c, args[0]))), nil
}

// prodFn is Π x_i with ∂/∂x_i = Π_{j≠i} x_j (computed without dividing, so zeros are exact).
func prodFn(c *Ctx, args []Value) (Value, error) {
	x := realVar(c, args[0])
	xv := c.T.Value(x)
	fb := c.T.Fused()
	d := fb.Partial(x)
	p := 1.0
	for i, xi := range xv {
		if d != nil {
			d[i] = p // prefix product Π_{j<i}
		}
		p *= xi
	}
	if d != nil {
		suf := 1.0
		for i := len(xv) - 1; i >= 0; i-- {
			d[i] *= suf
			suf *= xv[i]
		}
	}
	return realV(fb.Done(p)), nil
}

// varianceFn is the sample variance Σ(x−x̄)²/(n−1) (or its square root, the sd).
func varianceFn(sd bool) Impl {
	name := "variance"
	if sd {
		name = "sd"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		x := realVar(c, args[0])
		xv := c.T.Value(x)
		n := len(xv)
		if n == 0 {
			return Value{}, errf(name, "argument has size 0, but must have a non-zero size")
		}
		if n == 1 {
			return realV(c.T.Const(0)), nil
		}
		m := 0.0
		for _, xi := range xv {
			m += xi
		}
		m /= float64(n)
		ss := 0.0
		for _, xi := range xv {
			ss += (xi - m) * (xi - m)
		}
		v := ss / float64(n-1)
		scale := 2 / float64(n-1)
		if sd {
			v = math.Sqrt(v)
			scale = 1 / (float64(n-1) * v)
		}
		fb := c.T.Fused()
		if d := fb.Partial(x); d != nil {
			for i, xi := range xv {
				d[i] = scale * (xi - m)
			}
		}
		return realV(fb.Done(v)), nil
	}
}

// minMaxFn is the max (or min) of a container; the partial goes to the first extreme element.
// Empty: −∞ for max, +∞ for min, as Stan.
func minMaxFn(name string, isMax bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		x := realVar(c, args[0])
		xv := c.T.Value(x)
		if len(xv) == 0 {
			if isMax {
				return realV(c.T.Const(math.Inf(-1))), nil
			}
			return realV(c.T.Const(math.Inf(1))), nil
		}
		best := 0
		for i, xi := range xv {
			if math.IsNaN(xi) {
				best = i
				break
			}
			if (isMax && xi > xv[best]) || (!isMax && xi < xv[best]) {
				best = i
			}
		}
		fb := c.T.Fused()
		if d := fb.Partial(x); d != nil {
			d[best] = 1
		}
		return realV(fb.Done(xv[best])), nil
	}
}

func sumInt(c *Ctx, args []Value) (Value, error) {
	s := 0
	for _, k := range args[0].Ints {
		s += k
	}
	return intV(s), nil
}

func prodInt(c *Ctx, args []Value) (Value, error) {
	p := 1
	for _, k := range args[0].Ints {
		p *= k
	}
	return intV(p), nil
}

func minMaxInts(isMax bool) Impl {
	name := "min"
	if isMax {
		name = "max"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		ks := args[0].Ints
		if len(ks) == 0 {
			return Value{}, errf(name, "int array has size 0, but must have a non-zero size")
		}
		b := ks[0]
		for _, k := range ks[1:] {
			if (k > b) == isMax && k != b {
				b = k
			}
		}
		return intV(b), nil
	}
}

// phi is the standard normal CDF Φ(x) with density φ(x) as derivative.
func phi(x float64) (float64, float64) {
	return 0.5 * math.Erfc(-x/math.Sqrt2), math.Exp(-0.5*x*x) / math.Sqrt(2*math.Pi)
}

// phiApprox is Stan's Phi_approx(x) = logistic(0.07056 x³ + 1.5976 x).
func phiApprox(x float64) (float64, float64) {
	u := 0.07056*x*x*x + 1.5976*x
	p := mathx.Logistic(u)
	return p, p * (1 - p) * (3*0.07056*x*x + 1.5976)
}

// invPhi is Φ⁻¹(p), with derivative 1/φ(Φ⁻¹(p)).
func invPhi(p float64) (float64, float64) {
	x := -math.Sqrt2 * math.Erfcinv(2*p)
	return x, math.Sqrt(2*math.Pi) * math.Exp(0.5*x*x)
}

// tetragamma is ψ”(x), by central differences of the trigamma function (used only as the
// derivative of trigamma, which no posteriordb program differentiates).
func tetragamma(x float64) float64 {
	h := 1e-5 * math.Max(1, math.Abs(x))
	return (mathx.Trigamma(x+h) - mathx.Trigamma(x-h)) / (2 * h)
}
