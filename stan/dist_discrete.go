package stan

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// formatG prints x in the shortest form that reads back exactly.
func formatG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// discFamily is a univariate discrete family: the outcome, nint further int arguments (the
// number of trials N), np real parameters.
type discFamily struct {
	name   string
	nint   int
	np     int
	labels [5]string // outcome, int args, real parameters
	checks [3]pcheck // real parameters
	// lo, hi bound the outcome (hi = −1: unbounded; hi = −2: bounded by the first int arg).
	lo, hi int
	// kern returns log p(k | N, p) and its partials in the real parameters.
	kern func(k, n int, p [3]float64) (float64, dist.Partials)
	fast func(t *ad.Tape, k, n []int, ps [3]ad.Var) ad.Var
	rng  func(r *rand.Rand, n int, p [3]float64) int
}

const (
	unbounded = -1
	byTrials  = -2
)

var discFamilies = [...]discFamily{
	{name: "bernoulli", np: 1, labels: [5]string{"n", "Probability parameter"}, checks: [3]pcheck{chkUnit},
		lo: 0, hi: 1, kern: bernoulliKern,
		rng: func(r *rand.Rand, _ int, p [3]float64) int { return boolInt(r.Float64() < p[0]) }},
	{name: "bernoulli_logit", np: 1, labels: [5]string{"n", "Logit transformed probability parameter"}, checks: [3]pcheck{chkNotNaN},
		lo: 0, hi: 1, kern: bernoulliLogitKern,
		fast: func(t *ad.Tape, k, _ []int, p [3]ad.Var) ad.Var { return density.BernoulliLogit(t, k, p[0]) },
		rng:  func(r *rand.Rand, _ int, p [3]float64) int { return boolInt(r.Float64() < mathx.Logistic(p[0])) }},
	{name: "binomial", nint: 1, np: 1, labels: [5]string{"Successes variable", "Population size parameter", "Probability parameter"},
		checks: [3]pcheck{chkUnit}, lo: 0, hi: byTrials, kern: binomialKern,
		rng: func(r *rand.Rand, n int, p [3]float64) int { return binomialRand(r, n, p[0]) }},
	{name: "binomial_logit", nint: 1, np: 1, labels: [5]string{"Successes variable", "Population size parameter", "Probability parameter"},
		checks: [3]pcheck{chkFinite}, lo: 0, hi: byTrials, kern: binomialLogitKern,
		fast: func(t *ad.Tape, k, n []int, p [3]ad.Var) ad.Var { return density.BinomialLogit(t, k, n, p[0]) },
		rng:  func(r *rand.Rand, n int, p [3]float64) int { return binomialRand(r, n, mathx.Logistic(p[0])) }},
	{name: "poisson", np: 1, labels: [5]string{lblY, "Rate parameter"}, checks: [3]pcheck{chkNonneg},
		lo: 0, hi: unbounded, kern: poissonKern,
		rng: func(r *rand.Rand, _ int, p [3]float64) int { return poissonRand(r, p[0]) }},
	{name: "poisson_log", np: 1, labels: [5]string{lblY, "Log rate parameter"}, checks: [3]pcheck{chkNotNaN},
		lo: 0, hi: unbounded, kern: poissonLogKern,
		fast: func(t *ad.Tape, k, _ []int, p [3]ad.Var) ad.Var { return density.PoissonLog(t, k, p[0]) },
		rng:  func(r *rand.Rand, _ int, p [3]float64) int { return poissonRand(r, math.Exp(p[0])) }},
	{name: "neg_binomial", np: 2, labels: [5]string{"Failures variable", lblShape, lblInvSc},
		checks: [3]pcheck{chkPositiveFinite, chkPositiveFinite}, lo: 0, hi: unbounded, kern: negBinomialKern,
		rng: func(r *rand.Rand, _ int, p [3]float64) int {
			return poissonRand(r, mkGamma([3]float64{p[0], p[1]}).Rand(r))
		}},
	{name: "neg_binomial_2", np: 2, labels: [5]string{"Failures variable", lblLoc, "Precision parameter"},
		checks: [3]pcheck{chkPositiveFinite, chkPositiveFinite}, lo: 0, hi: unbounded, kern: negBinomial2Kern,
		fast: func(t *ad.Tape, k, _ []int, p [3]ad.Var) ad.Var { return density.NegBinomial2(t, k, p[0], p[1]) },
		rng: func(r *rand.Rand, _ int, p [3]float64) int {
			return poissonRand(r, mkGamma([3]float64{p[1], p[1] / p[0]}).Rand(r))
		}},
	{name: "neg_binomial_2_log", np: 2, labels: [5]string{"Failures variable", "Log location parameter", "Precision parameter"},
		checks: [3]pcheck{chkFinite, chkPositiveFinite}, lo: 0, hi: unbounded, kern: negBinomial2LogKern,
		fast: func(t *ad.Tape, k, _ []int, p [3]ad.Var) ad.Var { return density.NegBinomial2Log(t, k, p[0], p[1]) },
		rng: func(r *rand.Rand, _ int, p [3]float64) int {
			return poissonRand(r, mkGamma([3]float64{p[1], p[1] / math.Exp(p[0])}).Rand(r))
		}},
	{name: "beta_binomial", nint: 1, np: 2, labels: [5]string{"Successes variable", "Population size parameter",
		"First prior sample size parameter", "Second prior sample size parameter"},
		checks: [3]pcheck{chkPositiveFinite, chkPositiveFinite}, lo: 0, hi: byTrials, kern: betaBinomialKern,
		rng: func(r *rand.Rand, n int, p [3]float64) int {
			return binomialRand(r, n, mkBeta([3]float64{p[0], p[1]}).Rand(r))
		}},
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// discImpl is the Impl of a discrete family's _lpmf.
func discImpl(f *discFamily) Impl {
	name := f.name + "_lpmf"
	return func(c *Ctx, args []Value) (Value, error) {
		return discEval(c, f, name, args)
	}
}

func discEval(c *Ctx, f *discFamily, name string, args []Value) (Value, error) {
	ni := 1 + f.nint
	n, err := commonSize(name, f.labels[:ni+f.np], args)
	if err != nil {
		return Value{}, err
	}
	ks := args[0].Ints
	var trials []int
	if f.nint > 0 {
		trials = args[1].Ints
		if err := checkInts(name, f.labels[1], trials, 0, -1, isContainer(args[1])); err != nil {
			return Value{}, err
		}
	}
	switch f.hi {
	case byTrials:
		for i := range n {
			if k, m := atInt(ks, i), atInt(trials, i); k < 0 || k > m {
				return Value{}, errf(name, "%s is %d, but must be in the interval [0, %d]", f.labels[0], k, m)
			}
		}
	default:
		if err := checkInts(name, f.labels[0], ks, f.lo, f.hi, isContainer(args[0])); err != nil {
			return Value{}, err
		}
	}
	var vars [3]ad.Var
	var vs [3][]float64
	for j := range f.np {
		a := args[ni+j]
		vars[j] = realVar(c, a)
		vs[j] = c.T.Value(vars[j])
		if err := checkVals(name, f.labels[ni+j], f.checks[j], vs[j], isContainer(a)); err != nil {
			return Value{}, err
		}
	}
	if n == 0 {
		return realV(c.T.Const(0)), nil
	}
	if f.fast != nil && len(ks) == n && (trials == nil || len(trials) == n) {
		return realV(f.fast(c.T, ks, trials, vars)), nil
	}
	fb := c.T.Fused()
	var parts [3][]float64
	for j := range f.np {
		parts[j] = fb.Partial(vars[j])
	}
	lp := 0.0
	var p [3]float64
	for i := range n {
		for j := range f.np {
			p[j] = bcast(vs[j], i)
		}
		m := 0
		if trials != nil {
			m = atInt(trials, i)
		}
		v, dp := f.kern(atInt(ks, i), m, p)
		lp += v
		for j := range f.np {
			if d := parts[j]; d != nil {
				d[idx(d, i)] += dp[j]
			}
		}
	}
	return realV(fb.Done(lp)), nil
}

func atInt(x []int, i int) int {
	if len(x) == 1 {
		return x[0]
	}
	return x[i]
}

// xlogy is x·log y with 0·log 0 = 0.
func xlogy(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(y)
}

// bernoulliKern: log p = k log θ + (1−k) log(1−θ).
func bernoulliKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	th := p[0]
	if k == 1 {
		return math.Log(th), dist.Partials{1 / th}
	}
	return math.Log1p(-th), dist.Partials{-1 / (1 - th)}
}

// bernoulliLogitKern: log p = −softplus(−s η), s = 2k − 1; ∂/∂η = k − σ(η).
func bernoulliLogitKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	e := p[0]
	if k == 1 {
		return mathx.LogLogistic(e), dist.Partials{1 - mathx.Logistic(e)}
	}
	return mathx.LogLogistic(-e), dist.Partials{-mathx.Logistic(e)}
}

// binomialKern: log C(N, k) + k log θ + (N−k) log(1−θ).
func binomialKern(k, n int, p [3]float64) (float64, dist.Partials) {
	th := p[0]
	fk, fn := float64(k), float64(n)
	lp := mathx.LogBinomial(fn, fk) + xlogy(fk, th) + xlogy(fn-fk, 1-th)
	d := 0.0
	if k > 0 {
		d += fk / th
	}
	if n > k {
		d -= (fn - fk) / (1 - th)
	}
	return lp, dist.Partials{d}
}

// binomialLogitKern: log C(N, k) + k log σ(η) + (N−k) log σ(−η); ∂/∂η = k − N σ(η).
func binomialLogitKern(k, n int, p [3]float64) (float64, dist.Partials) {
	e := p[0]
	fk, fn := float64(k), float64(n)
	lp := mathx.LogBinomial(fn, fk) + fk*mathx.LogLogistic(e) + (fn-fk)*mathx.LogLogistic(-e)
	return lp, dist.Partials{fk - fn*mathx.Logistic(e)}
}

// poissonKern: k log λ − λ − log k!.
func poissonKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	l := p[0]
	if math.IsInf(l, 1) {
		return math.Inf(-1), dist.Partials{}
	}
	fk := float64(k)
	d := -1.0
	if k > 0 {
		d += fk / l
	}
	return xlogy(fk, l) - l - mathx.Lgamma(fk+1), dist.Partials{d}
}

// poissonLogKern: kη − e^η − log k!.
func poissonLogKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	e := p[0]
	fk := float64(k)
	if math.IsInf(e, -1) {
		if k == 0 {
			return 0, dist.Partials{}
		}
		return math.Inf(-1), dist.Partials{}
	}
	ex := math.Exp(e)
	return fk*e - ex - mathx.Lgamma(fk+1), dist.Partials{fk - ex}
}

// negBinomialKern: Stan's neg_binomial(α, β):
// log p = lnΓ(k+α) − lnΓ(k+1) − lnΓ(α) + α log(β/(1+β)) − k log(1+β).
func negBinomialKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	a, b := p[0], p[1]
	fk := float64(k)
	l1b := math.Log1p(b)
	lp := mathx.Lgamma(fk+a) - mathx.Lgamma(fk+1) - mathx.Lgamma(a) + a*(math.Log(b)-l1b) - fk*l1b
	da := mathx.Digamma(fk+a) - mathx.Digamma(a) + math.Log(b) - l1b
	db := a/(b*(1+b)) - fk/(1+b)
	return lp, dist.Partials{da, db}
}

func negBinomial2Kern(k, _ int, p [3]float64) (float64, dist.Partials) {
	lp, dmu, dphi := dist.NegBinomial2{Mu: p[0], Phi: p[1]}.LogProbGrad(k)
	return lp, dist.Partials{dmu, dphi}
}

func negBinomial2LogKern(k, _ int, p [3]float64) (float64, dist.Partials) {
	lp, deta, dphi := dist.NegBinomial2Log{Eta: p[0], Phi: p[1]}.LogProbGrad(k)
	return lp, dist.Partials{deta, dphi}
}

// betaBinomialKern: log C(N, k) + log B(k+α, N−k+β) − log B(α, β).
func betaBinomialKern(k, n int, p [3]float64) (float64, dist.Partials) {
	a, b := p[0], p[1]
	fk, fn := float64(k), float64(n)
	lp := mathx.LogBinomial(fn, fk) + mathx.LogBeta(fk+a, fn-fk+b) - mathx.LogBeta(a, b)
	dab := mathx.Digamma(a+b) - mathx.Digamma(fn+a+b)
	da := mathx.Digamma(fk+a) - mathx.Digamma(a) + dab
	db := mathx.Digamma(fn-fk+b) - mathx.Digamma(b) + dab
	return lp, dist.Partials{da, db}
}

// binomialRand draws Binomial(n, θ) by n Bernoulli trials (n is small in generated quantities)
// or, for large n, by inversion of the normal approximation refined by a waiting-time walk.
func binomialRand(r *rand.Rand, n int, th float64) int {
	k := 0
	for range n {
		if r.Float64() < th {
			k++
		}
	}
	return k
}

// poissonRand draws Poisson(λ): Knuth's multiplication method for λ < 30, else the
// transformed rejection method PTRS (Hörmann 1993, "The transformed rejection method for
// generating Poisson random variables", Insurance: Mathematics and Economics 12).
func poissonRand(r *rand.Rand, lam float64) int {
	if !(lam > 0) {
		return 0
	}
	if lam < 30 {
		l := math.Exp(-lam)
		k, p := 0, r.Float64()
		for p > l {
			k++
			p *= r.Float64()
		}
		return k
	}
	slam := math.Sqrt(lam)
	loglam := math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-mathx.Lgamma(k+1) {
			return int(k)
		}
	}
}

// --- categorical, multinomial --------------------------------------------------------------

// categorical is Σ log θ[y_i] (or the softmax of η for the logit form).
func categorical(logit bool) Impl {
	name := "categorical_lpmf"
	if logit {
		name = "categorical_logit_lpmf"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		ys := args[0].Ints
		th := args[1].Var
		tv := c.T.Value(th)
		k := len(tv)
		if err := checkInts(name, "Number of categories", ys, 1, k, isContainer(args[0])); err != nil {
			return Value{}, err
		}
		if logit {
			if err := checkVals(name, "log odds parameter", chkFinite, tv, true); err != nil {
				return Value{}, err
			}
			// Σ η_{y_i} − N·logsumexp(η); ∂/∂η_j = count_j − N·softmax(η)_j.
			lse := mathx.LogSumExp(tv)
			fb := c.T.Fused()
			d := fb.Partial(th)
			lp := -float64(len(ys)) * lse
			for _, y := range ys {
				lp += tv[y-1]
				if d != nil {
					d[y-1]++
				}
			}
			if d != nil {
				nf := float64(len(ys))
				for j, e := range tv {
					d[j] -= nf * math.Exp(e-lse)
				}
			}
			return realV(fb.Done(lp)), nil
		}
		if err := checkSimplex(name, "Probabilities parameter", tv); err != nil {
			return Value{}, err
		}
		fb := c.T.Fused()
		d := fb.Partial(th)
		lp := 0.0
		for _, y := range ys {
			lp += math.Log(tv[y-1])
			if d != nil {
				d[y-1] += 1 / tv[y-1]
			}
		}
		return realV(fb.Done(lp)), nil
	}
}

// checkSimplex is Stan's check_simplex.
func checkSimplex(name, label string, v []float64) error {
	s := 0.0
	for i, x := range v {
		if !(x >= 0) {
			return errf(name, "%s is not a valid simplex. %s[%d] = %s, but should be greater than or equal to 0", label, label, i+1, fmtReal(x))
		}
		s += x
	}
	if math.Abs(s-1) > 1e-8 {
		return errf(name, "%s is not a valid simplex. sum(%s) = %s, but should be 1", label, label, fmtReal(s))
	}
	return nil
}

// multinomial: log N! − Σ log y_k! + Σ y_k log θ_k.
func multinomial(c *Ctx, args []Value) (Value, error) {
	const name = "multinomial_lpmf"
	ys := args[0].Ints
	th := args[1].Var
	tv := c.T.Value(th)
	if len(ys) != len(tv) {
		return Value{}, errf(name, "size of number of trials variable (%d) and rows of probabilities parameter (%d) must match in size", len(ys), len(tv))
	}
	if err := checkInts(name, "Number of trials variable", ys, 0, -1, true); err != nil {
		return Value{}, err
	}
	if err := checkSimplex(name, "Probabilities parameter", tv); err != nil {
		return Value{}, err
	}
	fb := c.T.Fused()
	d := fb.Partial(th)
	n := 0
	lp := 0.0
	for k, y := range ys {
		n += y
		fy := float64(y)
		lp += xlogy(fy, tv[k]) - mathx.Lgamma(fy+1)
		if d != nil && y > 0 {
			d[k] += fy / tv[k]
		}
	}
	lp += mathx.Lgamma(float64(n) + 1)
	return realV(fb.Done(lp)), nil
}

// --- GLMs ----------------------------------------------------------------------------------

// glmDesign checks x (N×K), alpha (1 or N) and beta (K) and returns N and K.
func glmDesign(c *Ctx, name string, ny int, x, alpha, beta Value) (int, int, error) {
	n, k := x.Dims[0], x.Dims[1]
	if ny != n && ny != 1 {
		return 0, 0, errf(name, "rows of x (%d) and size of y (%d) must match in size", n, ny)
	}
	if beta.Dims[0] != k {
		return 0, 0, errf(name, "columns of x (%d) and size of beta (%d) must match in size", k, beta.Dims[0])
	}
	if isContainer(alpha) && alpha.Dims[0] != n {
		return 0, 0, errf(name, "rows of x (%d) and size of alpha (%d) must match in size", n, alpha.Dims[0])
	}
	return n, k, nil
}

// linPred writes η_i = α_i + x_i·β into eta.
func linPred(eta, xv, av, bv []float64, n, k int) {
	for i := range n {
		s := bcast(av, i)
		row := xv[i*k : (i+1)*k]
		for j, b := range bv {
			s += row[j] * b
		}
		eta[i] = s
	}
}

// glmBack adds the partials of a GLM with per-observation derivative g_i = ∂lp/∂η_i:
// ∂α_i = g_i, ∂β = xᵀg, ∂x_ij = g_i β_j.
func glmBack(fb ad.FusedBuilder, x, alpha, beta ad.Var, xv, bv, g []float64, n, k int) {
	if da := fb.Partial(alpha); da != nil {
		if len(da) == 1 {
			sum := 0.0
			for _, gi := range g[:n] {
				sum += gi
			}
			da[0] += sum
		} else {
			for i := range n {
				da[i] += g[i]
			}
		}
	}
	if db := fb.Partial(beta); db != nil {
		for i := range n {
			row := xv[i*k : (i+1)*k]
			gi := g[i]
			for j := range k {
				db[j] += gi * row[j]
			}
		}
	}
	if dx := fb.Partial(x); dx != nil {
		for i := range n {
			for j := range k {
				dx[i*k+j] += g[i] * bv[j]
			}
		}
	}
}

// normalIDGLM is Σ log N(y_i | α_i + x_i·β, σ_i) as one fused node.
func normalIDGLM(c *Ctx, args []Value) (Value, error) {
	const name = "normal_id_glm_lpdf"
	y, xa, alpha, beta, sigma := args[0], args[1], args[2], args[3], args[4]
	n, k, err := glmDesign(c, name, y.Len(), xa, alpha, beta)
	if err != nil {
		return Value{}, err
	}
	if isContainer(sigma) && sigma.Dims[0] != n {
		return Value{}, errf(name, "rows of x (%d) and size of sigma (%d) must match in size", n, sigma.Dims[0])
	}
	yv0 := realVar(c, y)
	xm := realVar(c, xa)
	av, bv, sv := realVar(c, alpha), realVar(c, beta), realVar(c, sigma)
	yy, xx, aa, bb, ss := c.T.Value(yv0), c.T.Value(xm), c.T.Value(av), c.T.Value(bv), c.T.Value(sv)
	if err := checkVals(name, "Scale vector", chkPositiveFinite, ss, isContainer(sigma)); err != nil {
		return Value{}, err
	}
	if err := checkVals(name, "Vector of dependent variables", chkFinite, yy, isContainer(y)); err != nil {
		return Value{}, err
	}
	fb := c.T.Fused()
	eta := c.T.Scratch(n)
	linPred(eta, xx, aa, bb, n, k)
	g := c.T.Scratch(n)
	ds := fb.Partial(sv)
	dy := fb.Partial(yv0)
	lp := -float64(n) * mathx.LogSqrt2Pi
	if len(ss) == 1 && dy == nil && len(yy) == n {
		// One scale and data y (the common regression): the log of σ once, products by 1/σ,
		// and σ's partial from Σ z² after the loop rather than a running sum in memory.
		inv := 1 / ss[0]
		ssq := 0.0
		for i := range n {
			z := (yy[i] - eta[i]) * inv
			ssq += z * z
			g[i] = z * inv
		}
		lp -= 0.5*ssq + float64(n)*math.Log(ss[0])
		if ds != nil {
			ds[0] += (ssq - float64(n)) * inv
		}
		glmBack(fb, xm, av, bv, xx, bb, g, n, k)
		return realV(fb.Done(lp)), nil
	}
	for i := range n {
		s := bcast(ss, i)
		z := (bcast(yy, i) - eta[i]) / s
		lp -= 0.5*z*z + math.Log(s)
		g[i] = z / s
		if ds != nil {
			ds[idx(ds, i)] += (z*z - 1) / s
		}
		if dy != nil {
			dy[idx(dy, i)] -= z / s
		}
	}
	glmBack(fb, xm, av, bv, xx, bb, g, n, k)
	return realV(fb.Done(lp)), nil
}

// The GLM families of logitGLM.
const (
	glmBernoulli = iota
	glmPoisson
)

// logitGLM is bernoulli_logit_glm (Σ log Bernoulli(y_i | σ(η_i))) or poisson_log_glm
// (Σ log Poisson(y_i | e^{η_i})), η = α + xβ, as one fused node.
func logitGLM(fam int) Impl {
	name := "bernoulli_logit_glm_lpmf"
	if fam == glmPoisson {
		name = "poisson_log_glm_lpmf"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		y, xa, alpha, beta := args[0], args[1], args[2], args[3]
		ys := y.Ints
		n, k, err := glmDesign(c, name, len(ys), xa, alpha, beta)
		if err != nil {
			return Value{}, err
		}
		if fam == glmBernoulli {
			err = checkInts(name, "Vector of dependent variables", ys, 0, 1, isContainer(y))
		} else {
			err = checkInts(name, "Vector of dependent variables", ys, 0, -1, isContainer(y))
		}
		if err != nil {
			return Value{}, err
		}
		xm := realVar(c, xa)
		av, bv := realVar(c, alpha), realVar(c, beta)
		xx, aa, bb := c.T.Value(xm), c.T.Value(av), c.T.Value(bv)
		fb := c.T.Fused()
		eta := c.T.Scratch(n)
		linPred(eta, xx, aa, bb, n, k)
		g := eta // overwritten in place by ∂lp/∂η
		lp := 0.0
		for i := range n {
			e := eta[i]
			yi := float64(atInt(ys, i))
			if fam == glmBernoulli {
				if yi == 1 {
					lp += mathx.LogLogistic(e)
				} else {
					lp += mathx.LogLogistic(-e)
				}
				g[i] = yi - mathx.Logistic(e)
			} else {
				ex := math.Exp(e)
				lp += yi*e - ex - mathx.Lgamma(yi+1)
				g[i] = yi - ex
			}
		}
		glmBack(fb, xm, av, bv, xx, bb, g, n, k)
		return realV(fb.Done(lp)), nil
	}
}

// --- multivariate --------------------------------------------------------------------------

// multiNormal is multi_normal(y | μ, Σ) (Cholesky of Σ on the tape, then the Cholesky form)
// or multi_normal_cholesky(y | μ, L); y and μ are one vector or arrays of vectors.
func multiNormal(chol bool) Impl {
	name := "multi_normal_lpdf"
	if chol {
		name = "multi_normal_cholesky_lpdf"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		y, mu := args[0], args[1]
		m, r, k := matOf(c, args[2])
		if r != k {
			return Value{}, errf(name, "Expecting a square matrix; rows of covariance parameter (%d) and columns of covariance parameter (%d) must match in size", r, k)
		}
		ky, kmu := y.Dims[len(y.Dims)-1], mu.Dims[len(mu.Dims)-1]
		if ky != k || kmu != k {
			return Value{}, errf(name, "size of random variable (%d), size of location parameter (%d) and rows of covariance parameter (%d) must match in size", ky, kmu, k)
		}
		ny, nm := sizeOf(y), sizeOf(mu)
		if y.Type.Array == 0 {
			ny = 1
		}
		if mu.Type.Array == 0 {
			nm = 1
		}
		if ny != nm && nm != 1 && ny != 1 {
			return Value{}, errf(name, "size of random variable (%d) and size of location parameter (%d) must match in size", ny, nm)
		}
		yv := y.Var
		if ny == 1 && nm > 1 {
			yv = repeat(c.T, yv, nm, false)
		}
		if err := checkVals(name, "Location parameter", chkFinite, c.T.Value(mu.Var), false); err != nil {
			return Value{}, err
		}
		if err := checkVals(name, lblY, chkNotNaN, c.T.Value(y.Var), false); err != nil {
			return Value{}, err
		}
		l := m
		if !chol {
			if err := checkSymmetric(c, name, m, r, k); err != nil {
				return Value{}, err
			}
			l = c.T.Cholesky(m)
			for _, x := range c.T.Value(l) {
				if math.IsNaN(x) {
					return Value{}, errf(name, "Covariance matrix is not positive definite")
				}
			}
		}
		return realV(density.MultiNormalCholesky(c.T, yv, mu.Var, l)), nil
	}
}

func dirichlet(c *Ctx, args []Value) (Value, error) {
	const name = "dirichlet_lpdf"
	th, al := args[0], args[1]
	k := th.Dims[len(th.Dims)-1]
	if ka := al.Dims[len(al.Dims)-1]; ka != k {
		return Value{}, errf(name, "size of probabilities parameter (%d) and prior sample sizes parameter (%d) must match in size", k, ka)
	}
	if err := checkVals(name, "prior sample sizes", chkPositiveFinite, c.T.Value(al.Var), true); err != nil {
		return Value{}, err
	}
	n := 1
	if th.Type.Array > 0 {
		n = th.Dims[0]
	}
	if al.Type.Array > 0 && al.Dims[0] != n {
		return Value{}, errf(name, "size of probabilities array (%d) and prior sample sizes array (%d) must match in size", n, al.Dims[0])
	}
	tv := c.T.Value(th.Var)
	for i := range n {
		if err := checkSimplex(name, "probabilities", tv[i*k:(i+1)*k]); err != nil {
			return Value{}, err
		}
	}
	var out ad.Var
	for i := range n {
		ti := c.T.Slice(th.Var, i*k, (i+1)*k)
		ai := al.Var
		if al.Type.Array > 0 {
			ai = c.T.Slice(al.Var, i*k, (i+1)*k)
		}
		lp := density.Dirichlet(c.T, ti, ai)
		if i == 0 {
			out = lp
		} else {
			out = c.T.Add(out, lp)
		}
	}
	if n == 0 {
		out = c.T.Const(0)
	}
	return realV(out), nil
}

func lkjCorrCholesky(c *Ctx, args []Value) (Value, error) {
	const name = "lkj_corr_cholesky_lpdf"
	l, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf(name, "Expecting a square matrix; rows of random variable (%d) and columns of random variable (%d) must match in size", r, k)
	}
	eta := realVar(c, args[1])
	if err := checkVals(name, "Shape parameter", chkPositive, c.T.Value(eta), false); err != nil {
		return Value{}, err
	}
	return realV(density.LKJCorrCholesky(c.T, l, eta)), nil
}

// lkjCorr is lkj_corr(Σ | η) = lkj_corr_cholesky(L | η) − log|J| with L = chol(Σ), where
// the Jacobian of Σ = LLᵀ over the lower entries is Π L_ii^{K−i} (1-based i), i.e.
// log p(Σ) = −log c_K(η) + (η−1) log det Σ.
func lkjCorr(c *Ctx, args []Value) (Value, error) {
	const name = "lkj_corr_lpdf"
	m, r, k := matOf(c, args[0])
	if err := checkSymmetric(c, name, m, r, k); err != nil {
		return Value{}, err
	}
	eta := realVar(c, args[1])
	ev := c.T.Float(eta)
	if !(ev > 0) {
		return Value{}, errf(name, "Shape parameter is %s, but must be positive!", fmtReal(ev))
	}
	lc, deta := dist.LKJCholesky{Eta: ev}.LogNormalizer(k)
	ld := c.T.LogDet(m)
	ldv := c.T.Float(ld)
	fb := c.T.Fused()
	if d := fb.Partial(eta); d != nil {
		d[0] = ldv - deta
	}
	if d := fb.Partial(ld); d != nil {
		d[0] = ev - 1
	}
	return realV(fb.Done(-lc + (ev-1)*ldv)), nil
}
