package stan

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/dist"
)

// distSigs returns the built-in signatures of this group (see Builtins): for every
// distribution its _lpdf/_lupdf (continuous) or _lpmf/_lupmf (discrete), and for the
// univariate continuous ones _lcdf, _lccdf and _cdf (Stan Functions Reference, "Continuous
// distributions", "Discrete distributions"). Every log density is one fused node over all
// observations, full normalising constants included; the _lupdf/_lupmf forms are the same
// functions (they differ from Stan's only by a constant, which Stan's `~` drops).
//
// Arguments are vectorised as Stan's: each may be a scalar (broadcast) or a container of the
// common size N; containers of different sizes are an error. Domain errors use Stan's wording:
// "normal_lpdf: Scale parameter is -1, but must be positive!".
func distSigs() []Sig {
	var s []Sig
	for i := range contFamilies {
		f := &contFamilies[i]
		args := make([]Arg, f.np+1)
		for j := range args {
			args[j] = aReals
		}
		lp := contImpl(f, kLpdf)
		s = append(s, sig(f.name+"_lpdf", TReal, lp, args...), sig(f.name+"_lupdf", TReal, lp, args...))
		if f.noCDF {
			continue
		}
		s = append(s, sig(f.name+"_lcdf", TReal, contImpl(f, kLcdf), args...),
			sig(f.name+"_lccdf", TReal, contImpl(f, kLccdf), args...),
			sig(f.name+"_cdf", TReal, contImpl(f, kCdf), args...))
	}
	for i := range discFamilies {
		f := &discFamilies[i]
		args := make([]Arg, 0, 1+f.nint+f.np)
		for range 1 + f.nint {
			args = append(args, aInts)
		}
		for range f.np {
			args = append(args, aReals)
		}
		fn := discImpl(f)
		s = append(s, sig(f.name+"_lpmf", TReal, fn, args...), sig(f.name+"_lupmf", TReal, fn, args...))
	}
	both := func(name string, fn Impl, args ...Arg) {
		suffix := "_lpdf"
		if args[0].Class == Ints || args[0].Type.Base == Int {
			suffix = "_lpmf"
		}
		un := "_lupdf"
		if suffix == "_lpmf" {
			un = "_lupmf"
		}
		s = append(s, sig(name+suffix, TReal, fn, args...), sig(name+un, TReal, fn, args...))
	}
	// Categorical.
	for _, y := range []Type{TInt, tArrInt} {
		both("categorical", categorical(false), ex(y), aVector)
		both("categorical_logit", categorical(true), ex(y), aVector)
	}
	both("multinomial", multinomial, ex(tArrInt), aVector)
	// GLMs (x is the N×K design matrix, row-major as every matrix here).
	for _, al := range []Arg{aReal, aVector} {
		for _, sg := range []Arg{aReal, aVector} {
			both("normal_id_glm", normalIDGLM, aVector, aMatrix, al, aVector, sg)
			both("normal_id_glm", normalIDGLM, aReal, aMatrix, al, aVector, sg)
		}
		for _, y := range []Arg{ex(tArrInt), aInt} {
			both("bernoulli_logit_glm", logitGLM(glmBernoulli), y, aMatrix, al, aVector)
			both("poisson_log_glm", logitGLM(glmPoisson), y, aMatrix, al, aVector)
		}
	}
	// Multivariate.
	for _, y := range []Type{TVector, TRowVector, tArrVector, tArrRowVec} {
		for _, mu := range []Type{TVector, TRowVector, tArrVector, tArrRowVec} {
			both("multi_normal", multiNormal(false), ex(y), ex(mu), aMatrix)
			both("multi_normal_cholesky", multiNormal(true), ex(y), ex(mu), aMatrix)
		}
	}
	both("dirichlet", dirichlet, aVector, aVector)
	both("dirichlet", dirichlet, ex(tArrVector), aVector)
	both("dirichlet", dirichlet, ex(tArrVector), ex(tArrVector))
	both("lkj_corr_cholesky", lkjCorrCholesky, aMatrix, aReal)
	both("lkj_corr", lkjCorr, aMatrix, aReal)
	return append(s, extraDistSigs()...)
}

// The kinds of a univariate continuous function.
const (
	kLpdf = iota
	kLcdf
	kLccdf
	kCdf
)

// A pcheck is one of Stan's argument checks.
type pcheck uint8

const (
	chkNone           pcheck = iota
	chkNotNaN                // "must not be nan"
	chkFinite                // "must be finite"
	chkPositive              // "must be positive"
	chkPositiveFinite        // "must be positive finite"
	chkNonneg                // "must be nonnegative"
	chkUnit                  // "must be in the interval [0, 1]"
)

// checkVals applies check k to xs (the argument labelled label of function name). The check is
// chosen once and its loop runs without branching on k; the message is built only for the
// first failing element.
func checkVals(name, label string, k pcheck, xs []float64, vector bool) error {
	bad := -1
	switch k {
	case chkNone:
		return nil
	case chkNotNaN:
		for i, x := range xs {
			if x != x {
				bad = i
				break
			}
		}
	case chkFinite:
		for i, x := range xs {
			if x-x != 0 { // NaN or ±Inf
				bad = i
				break
			}
		}
	case chkPositive:
		for i, x := range xs {
			if !(x > 0) {
				bad = i
				break
			}
		}
	case chkPositiveFinite:
		for i, x := range xs {
			if !(x > 0) || math.IsInf(x, 1) {
				bad = i
				break
			}
		}
	case chkNonneg:
		for i, x := range xs {
			if !(x >= 0) {
				bad = i
				break
			}
		}
	case chkUnit:
		for i, x := range xs {
			if !(x >= 0 && x <= 1) {
				bad = i
				break
			}
		}
	}
	if bad < 0 {
		return nil
	}
	must := [...]string{chkNotNaN: "must not be nan", chkFinite: "must be finite", chkPositive: "must be positive",
		chkPositiveFinite: "must be positive finite", chkNonneg: "must be nonnegative", chkUnit: "must be in the interval [0, 1]"}[k]
	if vector {
		return errf(name, "%s[%d] is %s, but %s!", label, bad+1, fmtReal(xs[bad]), must)
	}
	return errf(name, "%s is %s, but %s!", label, fmtReal(xs[bad]), must)
}

// fmtReal prints a real as Stan does (nan, inf, -1, 0.5).
func fmtReal(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return formatG(x)
}

// checkInts checks int outcomes against [lo, hi] (hi < lo: no upper bound).
func checkInts(name, label string, ks []int, lo, hi int, vector bool) error {
	for i, k := range ks {
		if k < lo || (hi >= lo && k > hi) {
			var must string
			if hi >= lo {
				must = "must be in the interval [" + itoa(lo) + ", " + itoa(hi) + "]"
			} else {
				must = "must be greater than or equal to " + itoa(lo)
			}
			if vector {
				return errf(name, "%s[%d] is %d, but %s", label, i+1, k, must)
			}
			return errf(name, "%s is %d, but %s", label, k, must)
		}
	}
	return nil
}

// commonSize returns the common size N of vectorised arguments: containers must agree, a
// scalar broadcasts. labels name the arguments in Stan's words.
func commonSize(name string, labels []string, args []Value) (int, error) {
	n, first := 1, -1
	for i, a := range args {
		if !isContainer(a) {
			continue
		}
		m := a.Len()
		if first < 0 {
			n, first = m, i
			continue
		}
		if m != n {
			return 0, errf(name, "size of %s (%d) and size of %s (%d) must match in size", labels[first], n, labels[i], m)
		}
	}
	return n, nil
}

// contFamily is a univariate continuous family: Stan's name, its argument labels and checks
// (outcome first), a kernel (log density, log CDF or log CCDF with partials in x and the
// parameters), an optional density-package fast path for the log density, and a sampler.
type contFamily struct {
	name   string
	np     int
	labels [4]string
	checks [4]pcheck
	kern   func(x float64, p [3]float64, kind int) (float64, float64, dist.Partials)
	fast   func(t *ad.Tape, y ad.Var, ps [3]ad.Var) ad.Var
	rng    func(r *rand.Rand, p [3]float64) float64
	noCDF  bool
}

// kernOf builds a kernel from a dist constructor.
func kernOf[D dist.Continuous](mk func(p [3]float64) D) func(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
	return func(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
		d := mk(p)
		switch kind {
		case kLcdf:
			return d.LogCDFPartials(x)
		case kLccdf:
			return d.LogCCDFPartials(x)
		}
		return d.LogProbPartials(x)
	}
}

// rngOf builds a sampler from a dist constructor.
func rngOf[D dist.Continuous](mk func(p [3]float64) D) func(r *rand.Rand, p [3]float64) float64 {
	return func(r *rand.Rand, p [3]float64) float64 { return mk(p).Rand(r) }
}

func mkNormal(p [3]float64) dist.Normal       { return dist.Normal{Mu: p[0], Sigma: p[1]} }
func mkStudentT(p [3]float64) dist.StudentT   { return dist.StudentT{Nu: p[0], Mu: p[1], Sigma: p[2]} }
func mkCauchy(p [3]float64) dist.Cauchy       { return dist.Cauchy{Mu: p[0], Sigma: p[1]} }
func mkLaplace(p [3]float64) dist.Laplace     { return dist.Laplace{Mu: p[0], Sigma: p[1]} }
func mkLogistic(p [3]float64) dist.Logistic   { return dist.Logistic{Mu: p[0], Sigma: p[1]} }
func mkLogNormal(p [3]float64) dist.LogNormal { return dist.LogNormal{Mu: p[0], Sigma: p[1]} }
func mkExp(p [3]float64) dist.Exponential     { return dist.Exponential{Rate: p[0]} }
func mkGamma(p [3]float64) dist.Gamma         { return dist.Gamma{Shape: p[0], Rate: p[1]} }
func mkInvGamma(p [3]float64) dist.InverseGamma {
	return dist.InverseGamma{Shape: p[0], Scale: p[1]}
}
func mkBeta(p [3]float64) dist.Beta       { return dist.Beta{Alpha: p[0], Beta: p[1]} }
func mkUniform(p [3]float64) dist.Uniform { return dist.Uniform{Min: p[0], Max: p[1]} }
func mkStdNormal(p [3]float64) dist.Normal {
	return dist.Normal{Mu: 0, Sigma: 1}
}

// Labels of Stan's checks.
const (
	lblY     = "Random variable"
	lblLoc   = "Location parameter"
	lblScale = "Scale parameter"
	lblShape = "Shape parameter"
	lblInvSc = "Inverse scale parameter"
	lblDoF   = "Degrees of freedom parameter"
)

// contFamilies are the univariate continuous families.
var contFamilies = [...]contFamily{
	{name: "normal", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkNotNaN, chkFinite, chkPositive},
		kern: kernOf(mkNormal), rng: rngOf(mkNormal),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Normal(t, y, p[0], p[1]) }},
	{name: "std_normal", np: 0, labels: [4]string{lblY}, checks: [4]pcheck{chkNotNaN},
		kern: kernOf(mkStdNormal), rng: rngOf(mkStdNormal),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Normal(t, y, t.Const(0), t.Const(1)) }},
	{name: "student_t", np: 3, labels: [4]string{lblY, lblDoF, lblLoc, lblScale},
		checks: [4]pcheck{chkNotNaN, chkPositiveFinite, chkFinite, chkPositiveFinite},
		kern:   kernOf(mkStudentT), rng: rngOf(mkStudentT),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.StudentT(t, y, p[0], p[1], p[2]) }},
	{name: "cauchy", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkNotNaN, chkFinite, chkPositiveFinite},
		kern: kernOf(mkCauchy), rng: rngOf(mkCauchy),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Cauchy(t, y, p[0], p[1]) }},
	{name: "double_exponential", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkFinite, chkFinite, chkPositiveFinite},
		kern: kernOf(mkLaplace), rng: rngOf(mkLaplace),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Laplace(t, y, p[0], p[1]) }},
	{name: "logistic", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkFinite, chkFinite, chkPositiveFinite},
		kern: kernOf(mkLogistic), rng: rngOf(mkLogistic),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Logistic(t, y, p[0], p[1]) }},
	{name: "lognormal", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkNonneg, chkFinite, chkPositiveFinite},
		kern: kernOf(mkLogNormal), rng: rngOf(mkLogNormal),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.LogNormal(t, y, p[0], p[1]) }},
	{name: "exponential", np: 1, labels: [4]string{lblY, lblInvSc}, checks: [4]pcheck{chkNonneg, chkPositiveFinite},
		kern: kernOf(mkExp), rng: rngOf(mkExp),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Exponential(t, y, p[0]) }},
	{name: "gamma", np: 2, labels: [4]string{lblY, lblShape, lblInvSc}, checks: [4]pcheck{chkNotNaN, chkPositiveFinite, chkPositiveFinite},
		kern: kernOf(mkGamma), rng: rngOf(mkGamma),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Gamma(t, y, p[0], p[1]) }},
	{name: "inv_gamma", np: 2, labels: [4]string{lblY, lblShape, lblScale}, checks: [4]pcheck{chkNotNaN, chkPositiveFinite, chkPositiveFinite},
		kern: kernOf(mkInvGamma), rng: rngOf(mkInvGamma),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.InverseGamma(t, y, p[0], p[1]) }},
	{name: "beta", np: 2, labels: [4]string{lblY, "First shape parameter", "Second shape parameter"},
		checks: [4]pcheck{chkUnit, chkPositiveFinite, chkPositiveFinite},
		kern:   kernOf(mkBeta), rng: rngOf(mkBeta),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Beta(t, y, p[0], p[1]) }},
	{name: "uniform", np: 2, labels: [4]string{lblY, "Lower bound parameter", "Upper bound parameter"},
		checks: [4]pcheck{chkNotNaN, chkFinite, chkFinite},
		kern:   kernOf(mkUniform), rng: rngOf(mkUniform),
		fast: func(t *ad.Tape, y ad.Var, p [3]ad.Var) ad.Var { return density.Uniform(t, y, p[0], p[1]) }},
	{name: "weibull", np: 2, labels: [4]string{lblY, lblShape, lblScale}, checks: [4]pcheck{chkFinite, chkPositiveFinite, chkPositiveFinite},
		kern: weibullKern, rng: weibullRand},
	{name: "von_mises", np: 2, labels: [4]string{lblY, lblLoc, lblScale}, checks: [4]pcheck{chkFinite, chkFinite, chkPositiveFinite},
		kern: vonMisesKern, rng: vonMisesRand, noCDF: true},
	{name: "chi_square", np: 1, labels: [4]string{lblY, lblDoF}, checks: [4]pcheck{chkNonneg, chkPositiveFinite},
		kern: chiSquareKern, rng: func(r *rand.Rand, p [3]float64) float64 { return mkGamma([3]float64{p[0] / 2, 0.5}).Rand(r) }},
	{name: "inv_chi_square", np: 1, labels: [4]string{lblY, lblDoF}, checks: [4]pcheck{chkNotNaN, chkPositiveFinite},
		kern: invChiSquareKern, rng: func(r *rand.Rand, p [3]float64) float64 { return mkInvGamma([3]float64{p[0] / 2, 0.5}).Rand(r) }},
	{name: "scaled_inv_chi_square", np: 2, labels: [4]string{lblY, lblDoF, lblScale}, checks: [4]pcheck{chkNotNaN, chkPositiveFinite, chkPositiveFinite},
		kern: scaledInvChiSquareKern, rng: func(r *rand.Rand, p [3]float64) float64 {
			return mkInvGamma([3]float64{p[0] / 2, p[0] * p[1] * p[1] / 2}).Rand(r)
		}},
}

// contImpl is the Impl of f's function of the given kind.
func contImpl(f *contFamily, kind int) Impl {
	name := f.name + [...]string{"_lpdf", "_lcdf", "_lccdf", "_cdf"}[kind]
	return func(c *Ctx, args []Value) (Value, error) {
		return contEval(c, f, name, kind, args)
	}
}

func contEval(c *Ctx, f *contFamily, name string, kind int, args []Value) (Value, error) {
	np := f.np
	n, err := commonSize(name, f.labels[:np+1], args)
	if err != nil {
		return Value{}, err
	}
	var vars [4]ad.Var
	var vs [4][]float64
	for j := range np + 1 {
		vars[j] = realVar(c, args[j])
		vs[j] = c.T.Value(vars[j])
		if err := checkVals(name, f.labels[j], f.checks[j], vs[j], isContainer(args[j])); err != nil {
			return Value{}, err
		}
	}
	if f.name == "uniform" {
		for i := range n {
			if lo, hi := bcast(vs[1], i), bcast(vs[2], i); !(hi > lo) {
				return Value{}, errf(name, "Upper bound parameter is %s, but must be greater than %s", fmtReal(hi), fmtReal(lo))
			}
		}
	}
	if n == 0 {
		return realV(c.T.Const(0)), nil
	}
	if kind == kLpdf && f.fast != nil {
		return realV(f.fast(c.T, vars[0], [3]ad.Var(vars[1:4]))), nil
	}
	fb := c.T.Fused()
	var parts [4][]float64
	for j := range np + 1 {
		parts[j] = fb.Partial(vars[j])
	}
	k := kind
	if k == kCdf {
		k = kLcdf
	}
	lp := 0.0
	var p [3]float64
	for i := range n {
		for j := range np {
			p[j] = bcast(vs[j+1], i)
		}
		x := bcast(vs[0], i)
		v, dx, dp := f.kern(x, p, k)
		lp += v
		if d := parts[0]; d != nil {
			d[idx(d, i)] += dx
		}
		for j := range np {
			if d := parts[j+1]; d != nil {
				d[idx(d, i)] += dp[j]
			}
		}
	}
	out := fb.Done(lp)
	if kind == kCdf {
		out = c.T.Exp(out)
	}
	return realV(out), nil
}

// idx is i for a full-length partial and 0 for a broadcast one.
func idx(d []float64, i int) int {
	if len(d) == 1 {
		return 0
	}
	return i
}

// --- families not in package dist ----------------------------------------------------------

// weibullKern: Stan's weibull(α, σ): log p = log α − log σ + (α−1) log(x/σ) − (x/σ)^α, x ≥ 0;
// log F = log(1 − e^{−u}), log(1 − F) = −u with u = (x/σ)^α.
func weibullKern(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
	a, s := p[0], p[1]
	if x < 0 {
		switch kind {
		case kLpdf, kLcdf:
			return math.Inf(-1), 0, dist.Partials{}
		}
		return 0, 0, dist.Partials{}
	}
	lr := math.Log(x / s)
	u := math.Exp(a * lr)
	switch kind {
	case kLcdf:
		// d/du log(1 − e^{−u}) = 1/expm1(u).
		g := 1 / math.Expm1(u)
		return math.Log(-math.Expm1(-u)), g * a * u / x, dist.Partials{g * u * lr, -g * a * u / s}
	case kLccdf:
		return -u, -a * u / x, dist.Partials{-u * lr, a * u / s}
	}
	lp := math.Log(a) - math.Log(s) + (a-1)*lr - u
	dx := (a-1)/x - a*u/x
	da := 1/a + lr - u*lr
	ds := (-a + a*u) / s
	return lp, dx, dist.Partials{da, ds}
}

func weibullRand(r *rand.Rand, p [3]float64) float64 {
	// Inverse CDF: x = σ (−log U)^{1/α}.
	return p[1] * math.Pow(r.ExpFloat64(), 1/p[0])
}

// chiSquareKern: χ²(ν) = Gamma(ν/2, rate ½); ∂/∂ν = ½ ∂/∂shape.
func chiSquareKern(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
	v, dx, dp := kernOf(mkGamma)(x, [3]float64{p[0] / 2, 0.5}, kind)
	return v, dx, dist.Partials{dp[0] / 2}
}

// invChiSquareKern: inv-χ²(ν) = InvGamma(ν/2, scale ½).
func invChiSquareKern(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
	v, dx, dp := kernOf(mkInvGamma)(x, [3]float64{p[0] / 2, 0.5}, kind)
	return v, dx, dist.Partials{dp[0] / 2}
}

// scaledInvChiSquareKern: scaled-inv-χ²(ν, s) = InvGamma(ν/2, ν s²/2):
// ∂/∂ν = ½∂_α + (s²/2)∂_β, ∂/∂s = ν s ∂_β.
func scaledInvChiSquareKern(x float64, p [3]float64, kind int) (float64, float64, dist.Partials) {
	nu, s := p[0], p[1]
	v, dx, dp := kernOf(mkInvGamma)(x, [3]float64{nu / 2, nu * s * s / 2}, kind)
	return v, dx, dist.Partials{dp[0]/2 + dp[1]*s*s/2, dp[1] * nu * s}
}
