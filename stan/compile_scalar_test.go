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

// kernelPrograms each contain loops that compile as scalar kernels (wantKerns of them),
// covering every instruction, the peephole fusions, the folding of constants, reads and writes
// of containers declared outside the loop (an element not written passes through), locals
// declared inside it, and nested loops.
var kernelPrograms = []struct {
	name, src string
	params    int
	wantKerns int
}{
	{"garch-recursion", laneDataBlock + `
parameters { real mu; real<lower=0> a0; real<lower=0, upper=1> a1; real<lower=0, upper=(1 - a1)> b1; }
model {
  array[N] real s;
  s[1] = 0.5;
  for (t in 2:N)
    s[t] = sqrt(a0 + a1 * square(y[t - 1] - mu) + b1 * square(s[t - 1]));
  y ~ normal(mu, s);
}`, 4, 1},
	{"hmm-forward-2d", laneDataBlock + `
parameters { simplex[K] th1; simplex[K] th2; positive_ordered[K] m; real<lower=0> sd0; }
transformed parameters {
  array[K] simplex[K] th;
  th[1] = th1;
  th[2] = th2;
}
model {
  array[K] real acc;
  array[N, K] real gam;
  for (k in 1:K) gam[1, k] = normal_lpdf(y[1] | m[k], 1);
  for (t in 2:N) {
    for (k in 1:K) {
      for (j in 1:K)
        acc[j] = gam[t - 1, j] + log(th[j, k]) + normal_lpdf(y[t] | m[k], sd0) + normal_lpdf(y[t] | m[k], 2);
      gam[t, k] = log_sum_exp(acc);
    }
  }
  target += log_sum_exp(gam[N]);
  sd0 ~ lognormal(0, 1);
}`, 5, 1},
	{"data-conditions", laneDataBlock + `
parameters { real a; real<lower=0> b; }
model {
  real s = 0;
  for (n in 1:N) {
    if (g[n] == 1 && n > 2) s += a * y[n];
    else if (!(c[n] < 2)) s -= b * (n % 2 == 0 ? y[n] : 1.5);
    else { for (k in 1:1) s += square(y[n] - a); }
    target += -0.5 * square(s) / (1 + b) + (c[n] > 1 ? log(b) : -b);
  }
}`, 2, 1},
	{"every-op", laneDataBlock + `
parameters { real a; real<lower=0> b; real<lower=0, upper=1> p; vector[K] w; }
model {
  matrix[K, K] M;
  for (i in 1:K) {
    for (j in 1:K) {
      M[i, j] = w[i] * X[1, j] + (i - j) / 2.0 + i * j;
    }
  }
  for (n in 1:N) {
    real u = a * y[n] - b / (1 + n);
    real v;
    v = exp(-square(u)) + log1p(b) + expm1(p) - inv_logit(u) + log_inv_logit(-u) + log1m(p);
    v += fabs(u) + abs(u - 0.1) + pow(b, 1.5) + b ^ p + tanh(u) + inv(1 + b) + sqrt(b + n);
    v -= log_sum_exp(u, v) + log(b) * 2;
    v *= 0.5;
    v /= 1 + p;
    target += v + M[1, 2] * M[2, 1] - (M[2, 2] - c[n]) ^ 2;
    for (k in 1:K) target += -0.1 * square(w[k] - n % 3);
  }
  y ~ normal(a, 1 + b);
}`, 5, 2},
	{"ar-lags-and-tilde", laneDataBlock + `
parameters { real alpha; array[K] real beta; real<lower=0> sigma; }
model {
  alpha ~ normal(0, 10);
  beta ~ normal(0, 10);
  sigma ~ cauchy(0, 2.5);
  for (t in (K + 1):N) {
    real mu = alpha;
    for (k in 1:K) mu = mu + beta[k] * y[t - k];
    y[t] ~ normal(mu, sigma);
    target += normal_lpdf(mu | 0, 3) + normal_lpdf(y[t] | mu, 2 * sigma);
  }
}`, 4, 1},
	{"families-hmm", laneDataBlock + `
parameters { simplex[K] th1; simplex[K] th2; positive_ordered[K] r; real<lower=0> s; }
model {
  array[K] real acc;
  array[N, K] real gam;
  for (k in 1:K) gam[1, k] = exponential_lpdf(fabs(y[1]) | r[k]);
  for (t in 2:N) {
    for (k in 1:K) {
      for (j in 1:K)
        acc[j] = gam[t - 1, j] + log(j == 1 ? th1[k] : th2[k]) + exponential_lupdf(fabs(y[t]) | r[k])
                 + cauchy_lpdf(y[t] | r[j], s) + lognormal_lpdf(1 + fabs(y[t]) | r[k], s) + gamma_lpdf(s | 2, r[k]);
      gam[t, k] = log_sum_exp(acc);
    }
  }
  target += log_sum_exp(gam[N]);
  for (n in 1:N) { for (k in 1:K) { fabs(y[n]) ~ exponential(r[k] * s); target += exponential_lpdf(s * n | r[k]); } }
  s ~ lognormal(0, 1);
}`, 5, 3},
	{"transformed-parameters-recursion", laneDataBlock + `
parameters { real<lower=0, upper=1> rho; real<lower=0> s; }
transformed parameters {
  vector[N] f;
  f[1] = y[1];
  for (n in 2:N) {
    for (k in 1:1) f[n] = rho * f[n - 1] + (1 - rho) * y[n];
  }
}
model {
  y ~ normal(f, s);
}`, 2, 1},
}

// TestScalarKernelsMatchLoops compares the log density, the gradient and the output rows of
// each program compiled with scalar kernels against the loops as written (sameModels).
func TestScalarKernelsMatchLoops(t *testing.T) {
	for _, p := range kernelPrograms {
		t.Run(p.name, func(t *testing.T) {
			mk, ms, _, _, k := optModels(t, p.name, p.src)
			if k != p.wantKerns {
				t.Fatalf("%d loops compiled as scalar kernels, want %d", k, p.wantKerns)
			}
			if mk.Dim() != p.params || ms.Dim() != p.params {
				t.Fatalf("dims %d, %d, want %d", mk.Dim(), ms.Dim(), p.params)
			}
			sameModels(t, mk, ms, 11)
		})
	}
}

// TestScalarKernelGradientFD checks one kernel's gradient against central finite differences
// (step 1e-6: truncation error O(h²)·|f”'| ≈ 1e-12, rounding O(ε|f|/h) ≈ 1e-9 for |f| ≈ 10,
// so a 1e-6 relative tolerance has a wide margin).
func TestScalarKernelGradientFD(t *testing.T) {
	var src string
	for _, p := range kernelPrograms {
		if p.name == "every-op" {
			src = p.src
		}
	}
	mk, _, _, _, k := optModels(t, "every-op", src)
	if k == 0 {
		t.Fatal("no scalar kernel")
	}
	z := []float64{0.3, -0.2, 0.4, 0.1, -0.5}
	g := make([]float64, len(z))
	var tp ad.Tape
	model.Gradient(&tp, mk, z, g)
	for i := range z {
		h := 1e-6
		zp := append([]float64(nil), z...)
		zm := append([]float64(nil), z...)
		zp[i] += h
		zm[i] -= h
		fd := (lpAt(t, mk, zp...) - lpAt(t, mk, zm...)) / (2 * h)
		if math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("gradient[%d] %v, finite difference %v", i, g[i], fd)
		}
	}
}

// TestScalarKernelsRejected checks loops that must not compile as kernels: each has an int
// the parameters decide, control flow, a vector-valued operation or a construct outside the
// instruction set (these compile as before, in lanes or as loops).
func TestScalarKernelsRejected(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"if-on-parameter", `real s = 0; for (n in 2:N) { if (s > a) s = s - 1; for (k in 1:1) s += a * y[n]; } target += s;`},
		{"break", `real s = 0; for (n in 2:N) { for (k in 1:2) { s += a; break; } } target += s;`},
		{"vector-op", `vector[N] s = y; for (n in 2:N) { for (k in 1:1) s[n] = dot_product(s[1:2], X[n]') * a; } target += sum(s);`},
		{"student-t", `for (n in 2:N) { for (k in 1:1) y[n] ~ student_t(3, a * y[n - 1], 1); }`},
		{"user-index-out-of-range", `real s = 0; for (n in 1:N) { for (k in 1:1) s += y[n + 1] * a; } target += s;`},
		{"int-local", `real s = 0; for (n in 1:N) { int m = n; for (k in 1:1) s += y[m] * a; } target += s;`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := laneDataBlock + "parameters { real a; }\nmodel {\n" + tc.body + "\n}\n"
			_, _, _, _, k := optModels(t, tc.name, src)
			if k != 0 {
				t.Fatalf("%d loops compiled as scalar kernels, want 0", k)
			}
		})
	}
}

// TestScalarKernelErrors checks that a domain error inside a kernel names the statement (or
// the call) and says what Stan says.
func TestScalarKernelErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"tilde-scale", `for (n in 2:N) { real m = 0; for (k in 1:1) m += y[n - 1]; y[n] ~ normal(m, a - 10); }`, "normal_lpdf: Scale parameter is -9, but must be positive!"},
		{"exponential-rate", `for (n in 2:N) { real m = 0; for (k in 1:1) m += y[n - 1]; target += exponential_lpdf(fabs(y[n]) | a - 10 + 0 * m); }`, "exponential_lpdf: Inverse scale parameter is -9, but must be positive finite!"},
		{"call-location", `for (n in 2:N) { real m = 0; for (k in 1:1) m += y[n - 1] * a / 0.0; target += normal_lpdf(y[n] | m, 1 + a); }`, "normal_lpdf: Location parameter is inf, but must be finite!"},
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
			var msgs []string
			for _, opt := range []bool{true, false} {
				cp, err := compileProgramOpt(prog, mustData(t, laneData), opt)
				if err != nil {
					t.Fatal(err)
				}
				if opt && cp.c.kernels != 1 {
					t.Fatalf("%d scalar kernels, want 1", cp.c.kernels)
				}
				_, err = cp.logDensityAt([]float64{1}, false)
				var re *RuntimeError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("optimise=%v: error %v, want a RuntimeError containing %q", opt, err, tc.want)
				}
				msgs = append(msgs, err.Error())
			}
			if msgs[0] != msgs[1] {
				t.Errorf("kernel: %q, as written: %q", msgs[0], msgs[1])
			}
		})
	}
}

// TestLayoutSavedForArraysAndMatrices checks that a program with an array of simplexes and a
// matrix parameter has a layout fit.json can describe, rebuilt bit for bit.
func TestLayoutSavedForArraysAndMatrices(t *testing.T) {
	src := `parameters { array[3] simplex[2] th; matrix[2, 3] Z; array[2] ordered[3] o; }
model { for (k in 1:3) th[k] ~ dirichlet([2, 3]'); to_vector(Z) ~ normal(0, 1); for (j in 1:2) o[j] ~ normal(0, 3); }`
	m, err := Compile("arr.stan", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := m.Layout.Spec()
	if err != nil {
		t.Fatal(err)
	}
	lay, err := model.LayoutFromSpec(specs)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(3, 0)
	x1, x2 := make([]float64, lay.Len()), make([]float64, lay.Len())
	for range 10 {
		z := make([]float64, lay.Dim())
		for i := range z {
			z[i] = r.NormFloat64()
		}
		j1, j2 := m.Layout.ConstrainValues(z, x1), lay.ConstrainValues(z, x2)
		if math.Float64bits(j1) != math.Float64bits(j2) {
			t.Fatalf("log J %v rebuilt as %v", j1, j2)
		}
		for i := range x1 {
			if math.Float64bits(x1[i]) != math.Float64bits(x2[i]) {
				t.Fatalf("value %d: %v rebuilt as %v", i, x1[i], x2[i])
			}
		}
	}
}
