package stan

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/rng"
)

// simplex is x[lo:hi] / Σ x[lo:hi], a simplex for any positive x (so that finite differences
// stay on the simplex).
func (b vb) simplex(lo, hi int) Value {
	v := b.c.T.Slice(b.x, lo, hi)
	return Value{Type: TVector, Dims: []int{hi - lo}, Var: b.c.T.Div(v, b.c.T.Sum(v))}
}

func ints(ks ...int) Value { return intsV(ks, len(ks)) }

// TestDistGradients checks every distribution's partials against central differences, with
// vector outcomes and a mix of broadcast and vector parameters.
func TestDistGradients(t *testing.T) {
	x := []float64{0.3, 0.8, 1.7, 0.45, 1.2, 2.5, 0.6}
	two := func(name string) gradCase {
		return gradCase{name, x, func(b vb) []Value { return []Value{b.vec(0, 3), b.vec(3, 6), b.real(6)} }}
	}
	for _, f := range []string{"normal", "cauchy", "double_exponential", "logistic", "lognormal", "gamma", "inv_gamma",
		"weibull", "scaled_inv_chi_square"} {
		for _, k := range []string{"_lpdf", "_lcdf", "_lccdf", "_cdf"} {
			checkGradCase(t, two(f+k))
		}
	}
	for _, k := range []string{"_lpdf", "_lcdf", "_lccdf", "_cdf"} {
		checkGradCase(t, gradCase{"beta" + k, x, func(b vb) []Value { return []Value{b.vec(0, 2), b.real(2), b.vec(3, 5)} }})
		checkGradCase(t, gradCase{"uniform" + k, []float64{0.5, -1, 3}, func(b vb) []Value { return []Value{b.real(0), b.real(1), b.real(2)} }})
	}
	for _, f := range []string{"exponential", "chi_square", "inv_chi_square"} {
		for _, k := range []string{"_lpdf", "_lcdf", "_lccdf"} {
			checkGradCase(t, gradCase{f + k, x, func(b vb) []Value { return []Value{b.vec(0, 3), b.vec(3, 6)} }})
		}
	}
	for _, k := range []string{"_lpdf", "_lcdf", "_lccdf"} {
		checkGradCase(t, gradCase{"student_t" + k, x, func(b vb) []Value { return []Value{b.vec(0, 3), b.real(5), b.vec(3, 6), b.real(6)} }})
	}
	checkGradCase(t, two("von_mises_lpdf"))
	checkGradCase(t, gradCase{"von_mises_lpdf", []float64{0.3, -0.2, 70}, func(b vb) []Value { return []Value{b.real(0), b.real(1), b.real(2)} }})
	checkGradCase(t, gradCase{"std_normal_lpdf", x, func(b vb) []Value { return []Value{b.vec(0, 3)} }})
	checkGradCase(t, gradCase{"uniform_lpdf", []float64{0.5, -1, 3}, func(b vb) []Value { return []Value{b.real(0), b.real(1), b.real(2)} }})
	// Discrete families: outcomes data, parameters from x.
	th := []float64{0.3, 0.6, 0.2, 2.5, 1.5, 0.8}
	for _, tc := range []struct {
		name string
		args func(b vb) []Value
	}{
		{"bernoulli_lpmf", func(b vb) []Value { return []Value{ints(0, 1, 1), b.vec(0, 3)} }},
		{"bernoulli_logit_lpmf", func(b vb) []Value { return []Value{ints(0, 1, 1), b.vec(0, 3)} }},
		{"bernoulli_logit_lpmf", func(b vb) []Value { return []Value{ints(0, 1, 1), b.real(3)} }},
		{"binomial_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), ints(4, 5, 5), b.vec(0, 3)} }},
		{"binomial_logit_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), ints(4, 5, 5), b.vec(0, 3)} }},
		{"poisson_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), b.vec(3, 6)} }},
		{"poisson_log_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), b.vec(0, 3)} }},
		{"poisson_log_lpmf", func(b vb) []Value { return []Value{intV(2), b.vec(0, 3)} }},
		{"neg_binomial_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), b.vec(3, 6), b.real(2)} }},
		{"neg_binomial_2_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), b.vec(3, 6), b.real(4)} }},
		{"neg_binomial_2_log_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), b.vec(0, 3), b.real(4)} }},
		{"beta_binomial_lpmf", func(b vb) []Value { return []Value{ints(0, 3, 5), ints(4, 5, 5), b.vec(3, 6), b.real(4)} }},
		{"categorical_logit_lpmf", func(b vb) []Value { return []Value{ints(1, 3, 3), b.vec(0, 3)} }},
		{"categorical_lpmf", func(b vb) []Value {
			return []Value{ints(1, 2, 2), b.simplex(0, 3)}
		}},
	} {
		x := th
		if tc.name == "categorical_lpmf" {
			x = []float64{0.2, 0.5, 0.3}
		}
		checkGradCase(t, gradCase{tc.name, x, tc.args})
	}
	// GLMs with a data design matrix (3×2) and parameter α, β (and σ).
	xd := func(b vb) Value { return b.dmat(3, 2, 0.5, -1, 1.5, 0.2, -0.3, 0.8) }
	glmX := []float64{0.4, 1.1, -0.7, 0.9, 0.2, 1.3}
	checkGradCase(t, gradCase{"normal_id_glm_lpdf", glmX, func(b vb) []Value {
		return []Value{b.data(0.3, -0.2, 1.0), xd(b), b.real(0), b.vec(1, 3), b.real(5)}
	}})
	checkGradCase(t, gradCase{"normal_id_glm_lpdf", glmX, func(b vb) []Value {
		return []Value{b.data(0.3, -0.2, 1.0), b.mat(0, 3, 2), b.real(0), b.vec(1, 3), b.real(5)}
	}})
	checkGradCase(t, gradCase{"bernoulli_logit_glm_lpmf", glmX, func(b vb) []Value {
		return []Value{ints(0, 1, 1), xd(b), b.real(0), b.vec(1, 3)}
	}})
	checkGradCase(t, gradCase{"poisson_log_glm_lpmf", glmX, func(b vb) []Value {
		return []Value{ints(0, 1, 4), xd(b), b.vec(3, 6), b.vec(1, 3)}
	}})
	// Multivariate.
	mv := []float64{0.3, -0.5, 0.1, 0.2, 2, 0.4, 0.3, 1.5, 0.3, -0.1}
	checkGradCase(t, gradCase{"multi_normal_cholesky_lpdf", mv, func(b vb) []Value {
		return []Value{b.vec(0, 2), b.vec(2, 4), b.mat(4, 2, 2)}
	}})
	checkGradCase(t, gradCase{"multi_normal_lpdf", mv, func(b vb) []Value {
		return []Value{b.vec(0, 2), b.vec(2, 4), b.sym(4, 2)}
	}})
	checkGradCase(t, gradCase{"lkj_corr_cholesky_lpdf", []float64{1, 0, 0.6, 0.8, 2.5}, func(b vb) []Value {
		return []Value{b.mat(0, 2, 2), b.real(4)}
	}})
	checkGradCase(t, gradCase{"lkj_corr_lpdf", []float64{1, 0.3, 0.3, 1, 2.5}, func(b vb) []Value {
		return []Value{b.sym(0, 2), b.real(4)}
	}})
	checkGradCase(t, gradCase{"dirichlet_lpdf", []float64{0.2, 0.5, 0.3, 1.5, 2, 0.7}, func(b vb) []Value {
		return []Value{b.simplex(0, 3), b.vec(3, 6)}
	}})
	for _, k := range []int{1, 2, 3} {
		checkGradCase(t, gradCase{"ordered_logistic_lpmf", []float64{0.4, -0.5, 0.7}, func(b vb) []Value {
			return []Value{intV(k), b.real(0), b.vec(1, 3)}
		}})
	}
	checkGradCase(t, gradCase{"ordered_logistic_lpmf", []float64{0.4, -1.2, -0.5, 0.7}, func(b vb) []Value {
		return []Value{ints(1, 3), b.vec(0, 2), b.vec(2, 4)}
	}})
	checkGradCase(t, gradCase{"multi_normal_prec_lpdf", mv, func(b vb) []Value {
		return []Value{b.vec(0, 2), b.vec(2, 4), b.sym(4, 2)}
	}})
	wx := []float64{2, 0.3, 0.3, 1.5, 4.5, 1.2, 0.2, 0.2, 0.8}
	for _, name := range []string{"wishart_lpdf", "inv_wishart_lpdf"} {
		checkGradCase(t, gradCase{name, wx, func(b vb) []Value { return []Value{b.sym(0, 2), b.real(4), b.sym(5, 2)} }})
	}
	checkGradCase(t, gradCase{"log_mix", []float64{0.2, 0.8, -1, -3}, func(b vb) []Value {
		return []Value{b.vec(0, 2), b.arr(2, 4)}
	}})
}

// eval returns the value of built-in name on args.
func eval(t *testing.T, name string, args func(c *Ctx) []Value) float64 {
	t.Helper()
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	v, err := call(c, name, args(c)...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tp.Float(v.Var)
}

func cv(c *Ctx, xs ...float64) Value {
	return Value{Type: TVector, Dims: []int{len(xs)}, Var: c.T.Const(xs...)}
}
func cr(c *Ctx, x float64) Value { return realV(c.T.Const(x)) }

// TestDistValues checks values against package dist (itself tested against published values)
// and closed forms.
func TestDistValues(t *testing.T) {
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.15g, want %.15g", name, got, want)
		}
	}
	// normal: Σ dist.Normal.LogProb.
	got := eval(t, "normal_lpdf", func(c *Ctx) []Value { return []Value{cv(c, 0.5, -1), cr(c, 0.2), cr(c, 1.5)} })
	near("normal_lpdf", got, dist.Normal{Mu: 0.2, Sigma: 1.5}.LogProb(0.5)+dist.Normal{Mu: 0.2, Sigma: 1.5}.LogProb(-1))
	// student_t_lccdf(0 | 3, 0, 36) = log ½ by symmetry (accel_gp.stan).
	got = eval(t, "student_t_lccdf", func(c *Ctx) []Value { return []Value{intV(0), intV(3), intV(0), intV(36)} })
	near("student_t_lccdf", got, math.Log(0.5))
	// weibull: log p = log(α/σ) + (α−1) log(x/σ) − (x/σ)^α; F = 1 − exp(−(x/σ)^α).
	a, s, x := 1.7, 2.3, 1.1
	got = eval(t, "weibull_lpdf", func(c *Ctx) []Value { return []Value{cr(c, x), cr(c, a), cr(c, s)} })
	near("weibull_lpdf", got, math.Log(a/s)+(a-1)*math.Log(x/s)-math.Pow(x/s, a))
	got = eval(t, "weibull_cdf", func(c *Ctx) []Value { return []Value{cr(c, x), cr(c, a), cr(c, s)} })
	near("weibull_cdf", got, 1-math.Exp(-math.Pow(x/s, a)))
	// chi_square(x | ν) = x^{ν/2−1} e^{−x/2} / (2^{ν/2} Γ(ν/2)).
	nu := 3.3
	got = eval(t, "chi_square_lpdf", func(c *Ctx) []Value { return []Value{cr(c, x), cr(c, nu)} })
	near("chi_square_lpdf", got, (nu/2-1)*math.Log(x)-x/2-nu/2*math.Ln2-mathx.Lgamma(nu/2))
	// scaled_inv_chi_square(x | ν, s) = (ν/2)^{ν/2}/Γ(ν/2) s^ν x^{−(ν/2+1)} exp(−ν s²/(2x)).
	got = eval(t, "scaled_inv_chi_square_lpdf", func(c *Ctx) []Value { return []Value{cr(c, x), cr(c, nu), cr(c, s)} })
	near("scaled_inv_chi_square_lpdf", got, nu/2*math.Log(nu/2)-mathx.Lgamma(nu/2)+nu*math.Log(s)-(nu/2+1)*math.Log(x)-nu*s*s/(2*x))
	// ordered_logistic probabilities sum to one over the K = 3 categories.
	sum := 0.0
	for k := 1; k <= 3; k++ {
		sum += math.Exp(eval(t, "ordered_logistic_lpmf", func(c *Ctx) []Value { return []Value{intV(k), cr(c, 0.3), cv(c, -0.5, 1.2)} }))
	}
	near("Σ ordered_logistic", sum, 1)
	// hypergeometric(1 | 3, 4, 5) = C(4,1) C(5,2) / C(9,3) = 40/84.
	got = eval(t, "hypergeometric_lpmf", func(c *Ctx) []Value { return []Value{intV(1), intV(3), intV(4), intV(5)} })
	near("hypergeometric_lpmf", got, math.Log(40.0/84))
	// multi_normal_prec with Ω = Σ⁻¹ equals multi_normal.
	got = eval(t, "multi_normal_prec_lpdf", func(c *Ctx) []Value {
		return []Value{cv(c, 0.3, -0.2), cv(c, 0, 1), Value{Type: TMatrix, Dims: []int{2, 2}, Var: c.T.AsMatrix(c.T.Const(0.25, 0, 0, 1.0/9), 2, 2)}}
	})
	near("multi_normal_prec_lpdf", got, dist.Normal{Mu: 0, Sigma: 2}.LogProb(0.3)+dist.Normal{Mu: 1, Sigma: 3}.LogProb(-0.2))
	// von Mises: log I₀(1) = log 1.2660658777520082 (A&S Table 9.8), and the density integrates
	// to one over (−π, π] (midpoint rule, exact to rounding for a periodic analytic integrand).
	for _, k := range []float64{0.5, 3, 49, 51, 300} {
		sum := 0.0
		const m = 2000
		for i := range m {
			y := -math.Pi + (float64(i)+0.5)*2*math.Pi/m
			sum += math.Exp(eval(t, "von_mises_lpdf", func(c *Ctx) []Value { return []Value{cr(c, y), cr(c, 0.4), cr(c, k)} })) * 2 * math.Pi / m
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("von_mises(κ=%v): ∫p = %.15g, want 1", k, sum)
		}
	}
	if li0, _ := logBesselI0(1); math.Abs(li0-math.Log(1.2660658777520082)) > 1e-15 {
		t.Errorf("log I0(1) = %.17g", li0)
	}
	// K = 1: wishart(w | ν, s) = Gamma(w | ν/2, rate 1/(2s)); inv_wishart(w | ν, s) =
	// InvGamma(w | ν/2, scale s/2) (Stan Functions Reference, Wishart and inverse Wishart).
	one := func(c *Ctx, x float64) Value {
		return Value{Type: TMatrix, Dims: []int{1, 1}, Var: c.T.AsMatrix(c.T.Const(x), 1, 1)}
	}
	got = eval(t, "wishart_lpdf", func(c *Ctx) []Value { return []Value{one(c, 1.7), cr(c, 3.5), one(c, 0.6)} })
	near("wishart_lpdf", got, dist.Gamma{Shape: 1.75, Rate: 1 / 1.2}.LogProb(1.7))
	got = eval(t, "inv_wishart_lpdf", func(c *Ctx) []Value { return []Value{one(c, 1.7), cr(c, 3.5), one(c, 0.6)} })
	near("inv_wishart_lpdf", got, dist.InverseGamma{Shape: 1.75, Scale: 0.3}.LogProb(1.7))
	// K = 2, W = S = I, ν = 3: log p = −1 − 3 log 2 − (½ log π + lnΓ(3/2) + lnΓ(1)).
	id2 := func(c *Ctx) Value {
		return Value{Type: TMatrix, Dims: []int{2, 2}, Var: c.T.AsMatrix(c.T.Const(1, 0, 0, 1), 2, 2)}
	}
	got = eval(t, "wishart_lpdf", func(c *Ctx) []Value { return []Value{id2(c), cr(c, 3), id2(c)} })
	near("wishart_lpdf (K=2)", got, -1-3*math.Ln2-(0.5*math.Log(math.Pi)+mathx.Lgamma(1.5)))
	// categorical_logit(3 | η) = η₃ − log Σ e^η (1-based outcomes).
	got = eval(t, "categorical_logit_lpmf", func(c *Ctx) []Value { return []Value{intV(3), cv(c, 1, 2, 3.5)} })
	near("categorical_logit_lpmf", got, 3.5-math.Log(math.E+math.Exp(2)+math.Exp(3.5)))
	got = eval(t, "categorical_lpmf", func(c *Ctx) []Value { return []Value{ints(3, 1), cv(c, 0.2, 0.3, 0.5)} })
	near("categorical_lpmf", got, math.Log(0.5)+math.Log(0.2))
	// Discrete pmfs sum to one over their support (closed-form normalisation).
	for _, tc := range []struct {
		name string
		n    int // support 0..n
		args func(c *Ctx, k int) []Value
	}{
		{"binomial_lpmf", 7, func(c *Ctx, k int) []Value { return []Value{intV(k), intV(7), cr(c, 0.35)} }},
		{"binomial_logit_lpmf", 7, func(c *Ctx, k int) []Value { return []Value{intV(k), intV(7), cr(c, -0.4)} }},
		{"beta_binomial_lpmf", 9, func(c *Ctx, k int) []Value { return []Value{intV(k), intV(9), cr(c, 1.3), cr(c, 2.2)} }},
		{"poisson_lpmf", 80, func(c *Ctx, k int) []Value { return []Value{intV(k), cr(c, 4.5)} }},
		{"poisson_log_lpmf", 80, func(c *Ctx, k int) []Value { return []Value{intV(k), cr(c, 1.2)} }},
		{"neg_binomial_lpmf", 400, func(c *Ctx, k int) []Value { return []Value{intV(k), cr(c, 2.5), cr(c, 0.7)} }},
		{"neg_binomial_2_lpmf", 400, func(c *Ctx, k int) []Value { return []Value{intV(k), cr(c, 3), cr(c, 2)} }},
		{"bernoulli_lpmf", 1, func(c *Ctx, k int) []Value { return []Value{intV(k), cr(c, 0.3)} }},
	} {
		sum := 0.0
		for k := 0; k <= tc.n; k++ {
			sum += math.Exp(eval(t, tc.name, func(c *Ctx) []Value { return tc.args(c, k) }))
		}
		if math.Abs(sum-1) > 1e-10 {
			t.Errorf("%s: Σ p = %.15g, want 1", tc.name, sum)
		}
	}
	// neg_binomial mean α/β (Stan Functions Reference, NegBinomial).
	mean := 0.0
	for k := 0; k <= 400; k++ {
		mean += float64(k) * math.Exp(eval(t, "neg_binomial_lpmf", func(c *Ctx) []Value { return []Value{intV(k), cr(c, 2.5), cr(c, 0.7)} }))
	}
	near("neg_binomial mean", mean, 2.5/0.7)
	// GLM = normal_lpdf of the linear predictor.
	got = eval(t, "normal_id_glm_lpdf", func(c *Ctx) []Value {
		return []Value{cv(c, 0.3, -0.2), Value{Type: TMatrix, Dims: []int{2, 2}, Var: c.T.AsMatrix(c.T.Const(1, 2, 3, 4), 2, 2)},
			cr(c, 0.5), cv(c, 0.1, -0.2), cr(c, 1.3)}
	})
	want := dist.Normal{Mu: 0.5 + 0.1 - 0.4, Sigma: 1.3}.LogProb(0.3) + dist.Normal{Mu: 0.5 + 0.3 - 0.8, Sigma: 1.3}.LogProb(-0.2)
	near("normal_id_glm_lpdf", got, want)
	// multi_normal with a diagonal covariance = Σ normal_lpdf.
	got = eval(t, "multi_normal_lpdf", func(c *Ctx) []Value {
		return []Value{cv(c, 0.3, -0.2), cv(c, 0, 1), Value{Type: TMatrix, Dims: []int{2, 2}, Var: c.T.AsMatrix(c.T.Const(4, 0, 0, 9), 2, 2)}}
	})
	near("multi_normal_lpdf", got, dist.Normal{Mu: 0, Sigma: 2}.LogProb(0.3)+dist.Normal{Mu: 1, Sigma: 3}.LogProb(-0.2))
	// lkj_corr at η = 1 is uniform: −log(volume) = −log 2 for 2×2 correlation matrices (ρ ∈ (−1, 1)).
	got = eval(t, "lkj_corr_lpdf", func(c *Ctx) []Value {
		return []Value{Value{Type: TMatrix, Dims: []int{2, 2}, Var: c.T.AsMatrix(c.T.Const(1, 0.3, 0.3, 1), 2, 2)}, cr(c, 1)}
	})
	near("lkj_corr_lpdf", got, -math.Ln2)
}

// TestDistErrors checks Stan's wording of domain and size errors.
func TestDistErrors(t *testing.T) {
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	for _, tc := range []struct {
		name string
		args []Value
		want string
	}{
		{"normal_lpdf", []Value{cr(c, 0), cr(c, 0), cr(c, -1)}, "normal_lpdf: Scale parameter is -1, but must be positive!"},
		{"normal_lpdf", []Value{cr(c, 0), cr(c, 0), cv(c, 1, -2)}, "normal_lpdf: Scale parameter[2] is -2, but must be positive!"},
		{"normal_lpdf", []Value{cv(c, 0, 1, 2), cv(c, 0, 1), cr(c, 1)}, "normal_lpdf: size of Random variable (3) and size of Location parameter (2) must match in size"},
		{"beta_lpdf", []Value{cr(c, 1.5), cr(c, 1), cr(c, 1)}, "beta_lpdf: Random variable is 1.5, but must be in the interval [0, 1]!"},
		{"bernoulli_lpmf", []Value{intV(2), cr(c, 0.5)}, "bernoulli_lpmf: n is 2, but must be in the interval [0, 1]"},
		{"poisson_lpmf", []Value{intV(1), cr(c, math.NaN())}, "poisson_lpmf: Rate parameter is nan, but must be nonnegative!"},
		{"binomial_lpmf", []Value{intV(4), intV(3), cr(c, 0.5)}, "binomial_lpmf: Successes variable is 4, but must be in the interval [0, 3]"},
		{"categorical_lpmf", []Value{intV(1), cv(c, 0.5, 0.6)}, "categorical_lpmf: Probabilities parameter is not a valid simplex. sum(Probabilities parameter) = 1.1, but should be 1"},
	} {
		_, err := call(c, tc.name, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestRNG checks sample means of a few _rng functions. With n = 20000 draws the standard error
// of a mean is sd/√n; the tolerance is 5 standard errors (false-failure rate < 1e-6 per check;
// the seed is fixed, so the test is deterministic).
func TestRNG(t *testing.T) {
	tp := &ad.Tape{}
	c := &Ctx{T: tp, RNG: rng.New(7, 1)}
	const n = 20000
	for _, tc := range []struct {
		name     string
		args     []Value
		mean, sd float64
	}{
		{"normal_rng", []Value{cr(c, 1.5), cr(c, 2)}, 1.5, 2},
		{"poisson_rng", []Value{cr(c, 3.5)}, 3.5, math.Sqrt(3.5)},
		{"poisson_rng", []Value{cr(c, 60)}, 60, math.Sqrt(60)},
		{"poisson_log_rng", []Value{cr(c, math.Log(3.5))}, 3.5, math.Sqrt(3.5)},
		{"binomial_rng", []Value{intV(10), cr(c, 0.3)}, 3, math.Sqrt(2.1)},
		{"bernoulli_logit_rng", []Value{cr(c, 0)}, 0.5, 0.5},
		{"lognormal_rng", []Value{cr(c, 0), cr(c, 0.5)}, math.Exp(0.125), math.Sqrt((math.Exp(0.25) - 1) * math.Exp(0.25))},
		{"weibull_rng", []Value{cr(c, 2), cr(c, 1)}, math.Sqrt(math.Pi) / 2, math.Sqrt(1 - math.Pi/4)},
		{"categorical_rng", []Value{cv(c, 0.2, 0.3, 0.5)}, 2.3, math.Sqrt(0.2 + 0.3*4 + 0.5*9 - 2.3*2.3)},
		{"neg_binomial_2_rng", []Value{cr(c, 4), cr(c, 2)}, 4, math.Sqrt(4 + 16.0/2)},
		// von Mises(0.4, 3) is symmetric about 0.4; its sd is below 1 (an upper bound, so the
		// tolerance is conservative).
		{"von_mises_rng", []Value{cr(c, 0.4), cr(c, 3)}, 0.4, 1},
	} {
		sum := 0.0
		for range n {
			v, err := call(c, tc.name, tc.args...)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if v.Type.Base == Int {
				sum += float64(v.Ints[0])
			} else {
				sum += tp.Float(v.Var)
			}
		}
		if m := sum / n; math.Abs(m-tc.mean) > 5*tc.sd/math.Sqrt(n) {
			t.Errorf("%s: mean %.4f, want %.4f ± %.4f", tc.name, m, tc.mean, 5*tc.sd/math.Sqrt(n))
		}
	}
	if _, err := call(&Ctx{T: tp}, "normal_rng", cr(c, 0), cr(c, 1)); err == nil {
		t.Error("normal_rng without a random stream: no error")
	}
}

// TestODE checks integrate_ode_rk45 on y' = −θ y, y(0) = y0 against y = y0 e^{−θt} and its
// derivatives ∂y/∂y0 = e^{−θt}, ∂y/∂θ = −t y0 e^{−θt}; ode_bdf (new interface) the same; and
// Lotka–Volterra gradients against central differences.
func TestODE(t *testing.T) {
	ts := []float64{0.5, 1, 2.5}
	for _, name := range []string{"integrate_ode_rk45", "integrate_ode_bdf"} {
		tp := &ad.Tape{}
		c := &Ctx{T: tp, Call: testCall}
		x := tp.Input([]float64{1.7, 0.8}) // y0, θ
		args := []Value{{Type: Type{Base: Func}, Name: "decay"},
			{Type: tArrReal, Dims: []int{1}, Var: tp.Slice(x, 0, 1)}, cr(c, 0),
			{Type: tArrReal, Dims: []int{3}, Var: tp.Const(ts...)},
			{Type: tArrReal, Dims: []int{1}, Var: tp.Slice(x, 1, 2)},
			{Type: tArrReal, Dims: []int{0}, Var: tp.Const()}, intsV(nil, 0),
			cr(c, 1e-10), cr(c, 1e-10), cr(c, 1e6)} // tight tolerances: the error is ≈ 1e-10
		out, err := call(c, name, args...)
		if err != nil {
			t.Fatal(err)
		}
		vals := append([]float64(nil), tp.Value(out.Var)...)
		for k, tk := range ts {
			want := 1.7 * math.Exp(-0.8*tk)
			if math.Abs(vals[k]-want) > 1e-8*want {
				t.Errorf("%s: y(%v) = %.12g, want %.12g", name, tk, vals[k], want)
			}
			tp.Backward(tp.Index(out.Var, k))
			g := tp.Grad(x)
			if d := math.Exp(-0.8 * tk); math.Abs(g[0]-d) > 1e-7 {
				t.Errorf("%s: ∂y(%v)/∂y0 = %.10g, want %.10g", name, tk, g[0], d)
			}
			if d := -tk * want; math.Abs(g[1]-d) > 1e-7 {
				t.Errorf("%s: ∂y(%v)/∂θ = %.10g, want %.10g", name, tk, g[1], d)
			}
		}
	}
	// At Stan's default tolerances (1e-6) the error is of that order, and dense output between
	// steps keeps it there (the outputs fall inside steps).
	{
		tp := &ad.Tape{}
		c := &Ctx{T: tp, Call: testCall}
		dense := []float64{0.1, 0.37, 0.5, 1.23, 2, 3.71, 9.5}
		out, err := call(c, "integrate_ode_rk45", Value{Type: Type{Base: Func}, Name: "decay"},
			Value{Type: tArrReal, Dims: []int{1}, Var: tp.Const(1.7)}, cr(c, 0),
			Value{Type: tArrReal, Dims: []int{len(dense)}, Var: tp.Const(dense...)},
			Value{Type: tArrReal, Dims: []int{1}, Var: tp.Const(0.8)},
			Value{Type: tArrReal, Dims: []int{0}, Var: tp.Const()}, intsV(nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		for k, tk := range dense {
			want := 1.7 * math.Exp(-0.8*tk)
			if got := tp.Value(out.Var)[k]; math.Abs(got-want) > 1e-5*want+1e-6 {
				t.Errorf("default tolerances: y(%v) = %.10g, want %.10g", tk, got, want)
			}
		}
	}
	// New interface: ode_bdf_tol(f, y0, t0, ts, rtol, atol, steps, k).
	tp := &ad.Tape{}
	c := &Ctx{T: tp, Call: testCall}
	x := tp.Input([]float64{1.7, 0.8})
	out, err := call(c, "ode_bdf_tol", Value{Type: Type{Base: Func}, Name: "decay_new"},
		Value{Type: TVector, Dims: []int{1}, Var: tp.Slice(x, 0, 1)}, cr(c, 0),
		Value{Type: tArrReal, Dims: []int{3}, Var: tp.Const(ts...)}, cr(c, 1e-10), cr(c, 1e-10), intV(1000000),
		realV(tp.Index(x, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tp.Backward(tp.Index(out.Var, 2))
	if g, want := tp.Grad(x)[1], -2.5*1.7*math.Exp(-2); math.Abs(g-want) > 1e-7 {
		t.Errorf("ode_bdf: ∂y(2.5)/∂k = %.10g, want %.10g", g, want)
	}
	// Lotka–Volterra: gradient of a weighted sum of the solution by central differences.
	checkGradCase(t, gradCase{"integrate_ode_rk45", []float64{30, 4, 0.55, 0.028, 0.8, 0.024}, func(b vb) []Value {
		return []Value{{Type: Type{Base: Func}, Name: "lv"},
			{Type: tArrReal, Dims: []int{2}, Var: b.c.T.Slice(b.x, 0, 2)}, cr(b.c, 0),
			{Type: tArrReal, Dims: []int{4}, Var: b.c.T.Const(1, 2, 5, 10)},
			{Type: tArrReal, Dims: []int{4}, Var: b.c.T.Slice(b.x, 2, 6)},
			{Type: tArrReal, Dims: []int{0}, Var: b.c.T.Const()}, intsV(nil, 0)}
	}})
	// Errors: unsorted times.
	_, err = call(c, "integrate_ode_rk45", Value{Type: Type{Base: Func}, Name: "decay"},
		Value{Type: tArrReal, Dims: []int{1}, Var: tp.Const(1)}, cr(c, 0),
		Value{Type: tArrReal, Dims: []int{2}, Var: tp.Const(2, 1)},
		Value{Type: tArrReal, Dims: []int{1}, Var: tp.Const(1)},
		Value{Type: tArrReal, Dims: []int{0}, Var: tp.Const()}, intsV(nil, 0))
	if err == nil {
		t.Error("unsorted output times: no error")
	}
}

// TestDopriDenseOrder checks the continuous extension of the Dormand–Prince step: on
// y' = t^q from y(0) = 0 with h = 1 it must be exact for q ≤ 3 (a fourth-order interpolant,
// Hairer et al. §II.6), i.e. Σ_i w_i(θ) c_i^q = θ^{q+1}/(q+1), and not for q = 4.
func TestDopriDenseOrder(t *testing.T) {
	for _, th := range []float64{0.13, 0.5, 0.77, 1} {
		for q := 0; q <= 4; q++ {
			var ks [7][]float64
			for i := range ks {
				ks[i] = []float64{math.Pow(dpC[i], float64(q))}
			}
			out := []float64{0}
			dopriDense(out, []float64{0}, ks[0], ks[2], ks[3], ks[4], ks[5], ks[6], 0, 1, th)
			want := math.Pow(th, float64(q+1)) / float64(q+1)
			exact := math.Abs(out[0]-want) < 1e-15
			if q <= 3 && !exact {
				t.Errorf("θ=%v, q=%d: %.17g, want %.17g", th, q, out[0], want)
			}
			if q == 4 && th < 1 && exact {
				t.Errorf("θ=%v: exact for q = 4, the weights are not the DOPRI5 ones", th)
			}
		}
	}
}
