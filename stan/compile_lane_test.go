package stan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// laneData is shared by the lane tests' programs.
const laneData = `{"N": 7, "K": 2, "y": [0.3, -1.2, 2.5, 0.7, -0.4, 1.9, 0.1],
 "g": [1, 2, 1, 2, 2, 1, 1], "c": [3, 0, 1, 4, 2, 0, 5], "X": [[1, 0.5], [1, -0.3], [1, 1.2], [1, 0.0], [1, 2.2], [1, -1.1], [1, 0.4]]}`

const laneDataBlock = `
data {
  int<lower=1> N;
  int<lower=1> K;
  vector[N] y;
  array[N] int<lower=1, upper=2> g;
  array[N] int<lower=0> c;
  matrix[N, K] X;
}
`

// lanePrograms each contain loops that compile in lanes (wantLanes of them), covering the
// lane compiler's statements and expressions; every one is compared with the scalar loop.
var lanePrograms = []struct {
	name, src string
	params    int
	wantLanes int
	wantGLMs  int // statements fused into normal_id_glm
	wantKerns int // loops compiled as scalar kernels (compile_scalar.go)
}{
	{"ar-inner-loop", laneDataBlock + `
parameters { real alpha; array[K] real beta; real<lower=0> sigma; }
model {
  alpha ~ normal(0, 10);
  beta ~ normal(0, 10);
  sigma ~ cauchy(0, 2.5);
  for (t in (K + 1):N) {
    real m = alpha;
    for (k in 1:K) m += beta[k] * y[t - k];
    y[t] ~ normal(m, sigma);
  }
}`, 4, 0, 0, 1},
	{"mixture-log-mix", laneDataBlock + `
parameters { ordered[2] mu; array[2] real<lower=0> sigma; real<lower=0, upper=1> theta; }
model {
  sigma ~ normal(0, 2);
  mu ~ normal(0, 2);
  theta ~ beta(5, 5);
  for (n in 1:N)
    target += log_mix(theta, normal_lpdf(y[n] | mu[1], sigma[1]),
                      normal_lpdf(y[n] | mu[2], sigma[2]));
}`, 5, 1, 0, 0},
	{"mixture-lane-parameters", laneDataBlock + `
parameters { array[2] real a; array[2] real<lower=0> s; real b; }
model {
  a ~ normal(0, 2);
  s ~ lognormal(0, 1);
  b ~ normal(0, 1);
  for (n in 1:N)
    target += log_mix(inv_logit(b * X[n, 2]), normal_lpdf(y[n] | a[g[n]], s[g[n]]),
                      normal_lpdf(a[1] | y[n] * b, s[3 - g[n]])) + 0.5 * normal_lpdf(y[n] | b, 2);
}`, 5, 1, 0, 0},
	{"mixture-other-components", laneDataBlock + `
parameters { real a; real<lower=0> s; real<lower=0, upper=1> p; }
model {
  a ~ normal(0, 2);
  s ~ lognormal(0, 1);
  for (n in 1:N)
    target += log_mix(p, -square(y[n] - a) / s, normal_lpdf(y[n] | a, s))
              + log_mix(p, normal_lpdf(y[n] | a, s), -fabs(y[n]));
}`, 3, 1, 0, 0},
	{"scatter-glm-int-index", laneDataBlock + `
parameters { array[2] real a; real b; real<lower=0> s; }
transformed parameters {
  vector[N] eta;
  for (n in 1:N) eta[n] = a[g[n]] + b * X[n, 2] + 0.1 * (n % 3) - c[n] / 2;
}
model {
  a ~ normal(0, 1);
  b ~ normal(0, 1);
  s ~ exponential(1);
  for (n in 1:N) {
    int k = g[n] * 2 - 1;
    real r = (y[n] - eta[n]) / s;
    target += -0.5 * square(r) - log(s) + 0.01 * k;
  }
  for (n in 1:N) c[n] ~ poisson_log(eta[n] / 4);
}`, 4, 3, 0, 0},
	{"in-place-and-compound-2d", laneDataBlock + `
parameters { vector[K] w; real<lower=0> s; }
transformed parameters {
  matrix[N, K] Z;
  vector[N] sd_n;
  for (n in 1:N) sd_n[n] = w[1] + X[n, 2];
  for (n in 1:N) sd_n[n] = exp(sd_n[n] / 3) + s;
  for (k in 1:K) for (n in 1:N) Z[n, k] = X[n, k] * w[k];
  for (n in 1:N) Z[n, 1] += sd_n[n];
}
model {
  w ~ normal(0, 1);
  s ~ lognormal(0, 1);
  for (n in 1:N) y[n] ~ normal(Z[n, 1] + Z[n, 2], sd_n[n]);
  for (n in 1:N) target += log_sum_exp(-fabs(y[n] - w[1]), inv_logit(Z[n, 2]) + pow(s, 0.5) + fmax(y[n], 0));
}`, 3, 5, 0, 1},
	{"hmm-forward", laneDataBlock + `
parameters { simplex[2] theta1; simplex[2] theta2; ordered[2] mu; }
model {
  array[2] vector[2] theta = {theta1, theta2};
  array[N, 2] real gamma;
  mu ~ normal(0, 3);
  for (k in 1:2) gamma[1, k] = normal_lpdf(y[1] | mu[k], 1);
  for (t in 2:N) {
    for (k in 1:2) {
      array[2] real acc;
      for (j in 1:2) acc[j] = gamma[t - 1, j] + log(theta[j, k]) + normal_lpdf(y[t] | mu[k], 1);
      gamma[t, k] = log_sum_exp(acc);
    }
  }
  target += log_sum_exp(gamma[N]);
}`, 4, 1, 0, 1},
	{"glm-columns", laneDataBlock + `
transformed data { vector[N] x1 = X[:, 2]; vector[N] x2 = y .* y; vector[N] yc = y - mean(y); }
parameters { vector[3] beta; real<lower=0> sigma; }
model {
  sigma ~ cauchy(0, 2.5);
  yc ~ normal(beta[1] + beta[2] * x1 - x2 * beta[3] + 0.5, sigma);
}`, 4, 0, 1, 0},
	{"glm-matrix-vector-sigma", laneDataBlock + `
parameters { real a; vector[K] b; vector<lower=0>[N] s; }
model {
  s ~ lognormal(0, 1);
  target += normal_lpdf(y | a + X * b, s);
  target += normal_lupdf(y | (X * b - a), 2);
}`, 10, 0, 2, 0},
	{"glm-logit-poisson", laneDataBlock + `
transformed data { array[N] int z; for (n in 1:N) z[n] = c[n] > 1; vector[N] x1 = col(X, 2); }
parameters { real a; real b; vector[K] w; }
model {
  z ~ bernoulli_logit(a + b * x1);
  target += poisson_log_lpmf(c | X * w - a);
  target += bernoulli_logit_lupmf(z | 0.5 * x1 + X * w);
}`, 4, 0, 3, 0},
	{"glm-consecutive-coefs", laneDataBlock + `
transformed data { vector[N] x1 = X[:, 2]; vector[N] x2 = y .* y; vector[N] yc = y - mean(y); }
parameters { vector[4] beta; real<lower=0> sigma; }
model {
  beta ~ normal(0, 10);
  yc ~ normal(beta[2] * x1 + beta[3] * x2 + beta[1], sigma);
  yc ~ normal(beta[3] * x1 + beta[4] * x2, sigma);
}`, 5, 0, 2, 0},
	{"glm-call-forms", laneDataBlock + `
transformed data { array[N] int z; for (n in 1:N) z[n] = c[n] > 1; }
parameters { real a; vector[K] w; real<lower=0> s; vector<lower=0>[N] sv; }
model {
  sv ~ lognormal(0, 1);
  target += normal_id_glm_lpdf(y | X, a, w, s);
  y ~ normal_id_glm(X, 1, w, sv);
  target += bernoulli_logit_glm_lupmf(z | X, a, w);
  c ~ poisson_log_glm(X, a, w);
}`, 11, 0, 4, 0},
}

// laneModels compiles src with and without lanes.
func laneModels(t *testing.T, name, src string) (lanes, loops *model.Model, nLanes, nGLMs int) {
	ml, ms, nl, ng, _ := optModels(t, name, src)
	return ml, ms, nl, ng
}

// optModels compiles src optimised and as written, with the counts of optimised constructs.
func optModels(t *testing.T, name, src string) (opt, plain *model.Model, nLanes, nGLMs, nKernels int) {
	t.Helper()
	prog, err := Parse(name+".stan", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Check(Builtins()); err != nil {
		t.Fatal(err)
	}
	data := mustData(t, laneData)
	cl, err := compileProgramOpt(prog, data, true)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := compileProgramOpt(prog, data, false)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := cl.model()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := cs.model()
	if err != nil {
		t.Fatal(err)
	}
	return ml, ms, cl.c.lanes, cl.c.glms, cl.c.kernels
}

// TestLaneLoopsMatchScalarLoops compares the log density and gradient of each program compiled
// with lanes against the scalar loops at random points. The two differ only in how the sum
// over iterations is associated, so they agree to rounding: the tolerance 1e-12 relative is
// ~10⁴ ulps for these sums of ≤ 30 terms.
func TestLaneLoopsMatchScalarLoops(t *testing.T) {
	for _, p := range lanePrograms {
		t.Run(p.name, func(t *testing.T) {
			ml, ms, n, g, k := optModels(t, p.name, p.src)
			if n != p.wantLanes || g != p.wantGLMs || k != p.wantKerns {
				t.Fatalf("%d loops compiled in lanes, %d statements fused, %d scalar kernels, want %d, %d and %d", n, g, k, p.wantLanes, p.wantGLMs, p.wantKerns)
			}
			if ml.Dim() != p.params || ms.Dim() != p.params {
				t.Fatalf("dims %d, %d, want %d", ml.Dim(), ms.Dim(), p.params)
			}
			sameModels(t, ml, ms, 7)
			if z := make([]float64, p.params); len(ml.Row(nil, z)) <= p.params && len(ml.Derived) > 0 {
				t.Fatalf("no derived quantities in the output row")
			}
		})
	}
}

// sameModels checks that an optimised compilation opt and the as-written one plain agree: the
// log density and gradient at 10 standard-normal points (stream seed) and the output rows
// (parameters, transformed parameters, generated quantities) there and at a fixed point. The
// two differ only in how sums are associated and in the order the same formulas are
// evaluated, so they agree to rounding: 1e-12 relative is ~10⁴ ulps for these sums of ≤ 100
// terms.
func sameModels(t *testing.T, opt, plain *model.Model, seed uint64) {
	t.Helper()
	d := opt.Dim()
	if plain.Dim() != d {
		t.Fatalf("dims %d and %d", d, plain.Dim())
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	rows := func(z []float64) {
		ro, rp := opt.Row(nil, z), plain.Row(nil, z)
		if len(ro) != len(rp) {
			t.Fatalf("rows of %d and %d values", len(ro), len(rp))
		}
		for i := range ro {
			if !near(ro[i], rp[i]) {
				t.Fatalf("z=%v: output %s: %v optimised, %v as written", z, opt.Columns()[i], ro[i], rp[i])
			}
		}
	}
	r := rng.New(seed, 0)
	var to, tp ad.Tape
	go_, gp := make([]float64, d), make([]float64, d)
	for range 10 {
		z := make([]float64, d)
		for i := range z {
			z[i] = r.NormFloat64()
		}
		a := model.Gradient(&to, opt, z, go_)
		b := model.Gradient(&tp, plain, z, gp)
		if math.IsNaN(a) || math.IsInf(a, 0) || !near(a, b) {
			t.Fatalf("z=%v: lp %v optimised, %v as written", z, a, b)
		}
		for i := range go_ {
			if !near(go_[i], gp[i]) {
				t.Fatalf("z=%v: gradient[%d] %v optimised, %v as written", z, i, go_[i], gp[i])
			}
		}
		rows(z)
	}
	z := make([]float64, d)
	for i := range z {
		z[i] = 0.1*float64(i%5) - 0.2
	}
	rows(z)
}

// TestLaneLoopsRejected checks loops the lane compiler must leave as loops: each would give
// a different answer in lanes (or is outside what lanes implement).
func TestLaneLoopsRejected(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"loop-carried", `vector[N] s; s[1] = 1; for (n in 2:N) s[n] = s[n - 1] * a + y[n];  target += sum(s);`},
		{"outer-scalar", `real acc = 0; for (n in 1:N) acc += y[n] * a; target += acc;`},
		{"if", `for (n in 1:N) { if (y[n] > 0) target += a; }`},
		{"uniform-tilde", `for (n in 1:N) a ~ normal(0, 1);`},
		{"other-element", `vector[N] s = y; for (n in 1:N) s[n] = s[N - n + 1] * a; target += sum(s);`},
		{"rng-free-break", `for (n in 1:N) { target += y[n] * a; break; }`},
		{"vector-element", `for (n in 1:N) target += dot_product(X[n], X[n]) * a;`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := laneDataBlock + "parameters { real a; }\nmodel {\n" + tc.body + "\n}\n"
			_, _, n, _ := laneModels(t, tc.name, src)
			if n != 0 {
				t.Fatalf("%d loops compiled in lanes, want 0", n)
			}
		})
	}
}

// TestLaneErrors checks that a run-time error inside a lane loop names the statement and
// says what Stan says: an index out of range, a negative scale.
func TestLaneErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"index", `for (n in 1:N) target += y[n + 1] * a;`, "index 8 out of range; expecting index to be between 1 and 7"},
		{"loop-variable-index", `for (n in 0:N) target += y[n] * a;`, "index 0 out of range; expecting index to be between 1 and 7"},
		{"scale", `for (n in 1:N) y[n] ~ normal(0, a - 10);`, "Scale parameter"},
		{"elementwise-scale", `for (n in 1:N) target += log_sum_exp(0, normal_lpdf(y[n] | 0, a - 10));`, "Scale parameter is"},
		{"mixture-scale", `for (n in 1:N) target += log_mix(0.3, normal_lpdf(y[n] | 0, 1), normal_lpdf(y[n] | 0, a - 10));`, "normal_lpdf: Scale parameter is -9"},
		{"mixture-weight", `for (n in 1:N) target += log_mix(a + 0.5, normal_lpdf(y[n] | 0, 1), normal_lpdf(y[n] | 0, 2));`, "log_mix: lambda is 1.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := laneDataBlock + "parameters { real a; }\nmodel {\n" + tc.body + "\n}\n"
			prog, err := Parse(tc.name+".stan", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if err := prog.Check(Builtins()); err != nil {
				t.Fatal(err)
			}
			cp, err := compileProgramOpt(prog, mustData(t, laneData), true)
			if err != nil {
				t.Fatal(err)
			}
			if cp.c.lanes != 1 {
				t.Fatalf("%d loops in lanes, want 1", cp.c.lanes)
			}
			_, err = cp.logDensityAt([]float64{1}, false)
			var re *RuntimeError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a RuntimeError containing %q", err, tc.want)
			}
			if re.Pos.Line != strings.Count(laneDataBlock, "\n")+3 {
				t.Fatalf("error at line %d, want the loop's line %d", re.Pos.Line, strings.Count(laneDataBlock, "\n")+3)
			}
		})
	}
}

// TestGLMFallback checks that a linear predictor whose design does not fit y compiles fused
// but runs as written, so that the user gets the unfused statement's size error, and that
// a scale or outcome failing Stan's check gives the statement's own error too.
func TestGLMFallback(t *testing.T) {
	for _, body := range []string{
		"transformed data { vector[N - 1] w = y[1:(N - 1)]; }\nparameters { real a; real b; }\nmodel {\n  y ~ normal(a + b * w, 1);\n}\n",
		"transformed data { vector[N] w = y; }\nparameters { real a; real b; }\nmodel {\n  y ~ normal(a + b * w, a - 10);\n}\n",
		"transformed data { vector[N] w = y; }\nparameters { real a; real b; }\nmodel {\n  target += normal_id_glm_lpdf(y | X, a, [b, b]', -b);\n}\n",
		"transformed data { vector[N] w = y; array[N] int z = c; }\nparameters { real a; real b; }\nmodel {\n  z ~ bernoulli_logit(a + b * w);\n}\n",
	} {
		testGLMFallback(t, laneDataBlock+body)
	}
}

func testGLMFallback(t *testing.T, src string) {
	t.Helper()
	prog, err := Parse("fb.stan", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Check(Builtins()); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, opt := range []bool{true, false} {
		cp, err := compileProgramOpt(prog, mustData(t, laneData), opt)
		if err != nil {
			t.Fatal(err)
		}
		if opt && cp.c.glms != 1 {
			t.Fatalf("%d fused statements, want 1", cp.c.glms)
		}
		_, err = cp.logDensityAt([]float64{0.1, 0.2}, false)
		if err == nil {
			t.Fatalf("optimise=%v: no error for a design of N − 1 rows", opt)
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("fused: %q, as written: %q", msgs[0], msgs[1])
	}
}
