package stan

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// optProgram is one program of optPrograms, with the counts its compilation must show.
type optProgram struct {
	name, src    string
	params       int
	folds, conts int // fixed expressions folded, density statements compiled by contStmt
	live, data   int // data variables in the frame, of all
}

// optPrograms exercise the statement-level optimisations (and one fused GLM's frame): density
// statements of the continuous families (literal and computed parameters, scalars and
// vectors, ~ and target +=), folded data-only expressions (a CDF of literals, a function of
// data, a declaration sized by data) and data the later blocks do not read (left out of the
// frame).
var optPrograms = []optProgram{
	{"priors", laneDataBlock + `
parameters { vector[K] b; real<lower=0> s; real m; array[2] real<lower=0, upper=1> p; }
model {
  b ~ normal(0, 10);
  target += normal_lpdf(b | m, 2.5);
  target += student_t_lpdf(m | 3, -1, 2.5) - student_t_lccdf(0 | 3, 0, 10);
  s ~ cauchy(0, 2.5);
  s ~ gamma(2, 0.5);
  s ~ lognormal(m, 1.5);
  y ~ normal(m, s);
  y[1:3] ~ logistic(b[1], s);
  p ~ beta(2, 3);
  target += exponential_lupdf(s | 1);
  target += double_exponential_lpdf(y | m, s);
  m ~ std_normal();
}`, 6, 3, 11, 2, 6}, // y[1:3] is folded twice: in the statement as written and in its contStmt
	{"folded-and-unread-data", laneDataBlock + `
transformed data { vector[N] yc = y - mean(y); real unused = sum(y); }
parameters { real a; real<lower=0> s; }
transformed parameters { vector[N] mu = a + yc * log1p(N) / (K + mean(y)); }
model {
  vector[N] r = (y - mu) / s;
  target += -0.5 * dot_self(r) - N * log(s) + normal_lcdf(1.5 | 0, sd(y));
  s ~ exponential(1.0 / sd(y));
}
generated quantities { real q = a * max(y) + num_elements(c); }`, 2, 6, 1, 5, 8},
	{"glm-design-not-in-frame", laneDataBlock + `
transformed data { vector[N] x1 = X[:, 2]; vector[N] x2 = square(x1); }
parameters { real a; vector[2] b; real<lower=0> s; }
model {
  s ~ exponential(1);
  y ~ normal(a + b[1] * x1 + b[2] * x2, s);
  target += normal_lpdf(x2 | 0, 10 + s);
}`, 4, 0, 2, 2, 8}, // x1 only in the design: not in the frame
	{"declare-then-assign", laneDataBlock + `
parameters { real a; vector[K] w; }
transformed parameters {
  matrix[N, K] M;
  M = X * a;
  array[2] real q;
  q = {a, 2 * a};
  vector[N] eta;
  eta = X * w + q[2] / 3;
}
model {
  real s;
  s = exp(a / 2);
  w ~ normal(0, s);
  y ~ normal(eta + M[:, 2], 1 + s);
}`, 3, 0, 2, 4, 6},
}

// TestOptimisedMatchesAsWritten compares each program compiled with the optimisations
// against the as-written compilation at random points: log density, gradient and output rows.
// The optimised statements record the same nodes (or a constant over the same values), so the
// results agree to rounding: 1e-12 relative.
func TestOptimisedMatchesAsWritten(t *testing.T) {
	for _, p := range optPrograms {
		t.Run(p.name, func(t *testing.T) {
			ml, ms, _, _ := laneModels(t, p.name, p.src)
			prog, err := Parse(p.name+".stan", []byte(p.src))
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
			if p.name == "declare-then-assign" && cp.c.declAssigns != 4 {
				t.Errorf("%d declarations compiled with their assignment, want 4", cp.c.declAssigns)
			}
			if cp.c.folds != p.folds || cp.c.conts != p.conts || len(cp.live) != p.live || len(cp.data) != p.data {
				t.Errorf("%d folds, %d density statements, %d of %d data in the frame; want %d, %d, %d of %d",
					cp.c.folds, cp.c.conts, len(cp.live), len(cp.data), p.folds, p.conts, p.live, p.data)
			}
			if ml.Dim() != p.params || ms.Dim() != p.params {
				t.Fatalf("dims %d, %d, want %d", ml.Dim(), ms.Dim(), p.params)
			}
			sameModels(t, ml, ms, 11)
		})
	}
}

// TestOptimisedErrors checks that the optimised statements report the as-written statement's
// run-time error: a computed scale that is negative, a literal one (left to the built-in), a
// size mismatch, a NaN variate, and an error inside a folded expression.
func TestOptimisedErrors(t *testing.T) {
	for _, body := range []string{
		"parameters { real a; real b; }\nmodel {\n  a ~ normal(0, b - 10);\n}\n",
		"parameters { real a; real b; }\nmodel {\n  target += normal_lpdf(a | b, -1);\n}\n",
		"parameters { real a; vector[3] b; }\nmodel {\n  b ~ normal(a, y[1:2]);\n}\n",
		"parameters { real a; real b; }\nmodel {\n  target += cauchy_lpdf(a * not_a_number() | 0, 1);\n}\n",
		"parameters { real a; real b; }\nmodel {\n  a ~ normal(0, y[N + 1 - K * 4]);\n}\n",
		"parameters { real a; real b; }\nmodel {\n  a ~ student_t(3, b, 1);\n  b ~ normal(0, log(y[2]));\n}\n",
		"parameters { real a; real b; }\ntransformed parameters {\n  vector[K + 1] w;\n  w = y * a;\n}\nmodel {\n  b ~ normal(0, 1);\n}\n",
	} {
		src := laneDataBlock + body
		prog, err := Parse("e.stan", []byte(src))
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
			_, err = cp.logDensityAt([]float64{0.1, 0.2, 0.3, 0.4}[:cp.lay.Dim()], false)
			if err == nil {
				t.Fatalf("%s: optimise=%v: no error", body, opt)
			}
			msgs = append(msgs, err.Error())
		}
		if msgs[0] != msgs[1] {
			t.Errorf("%soptimised: %q, as written: %q", body, msgs[0], msgs[1])
		}
	}
}

// TestOptimisedConcurrent evaluates optimised programs from several goroutines at once, as a
// fit's workers do, from the first evaluation on (the once-computed values — folded
// expressions, declaration sizes, GLM designs, a lane loop's lanes — are filled concurrently),
// and compares every gradient with a serial evaluation. Run with -race to check the caches.
func TestOptimisedConcurrent(t *testing.T) {
	mix := lanePrograms[1] // a lane loop
	progs := append(append([]optProgram{}, optPrograms...), optProgram{name: mix.name, src: mix.src, params: mix.params})
	for _, p := range progs {
		ml, ms, _, _ := laneModels(t, p.name, p.src)
		zs := make([][]float64, 8)
		r := rng.New(5, 0)
		for i := range zs {
			zs[i] = make([]float64, p.params)
			for j := range zs[i] {
				zs[i][j] = r.NormFloat64()
			}
		}
		want := make([][]float64, len(zs))
		var ts ad.Tape
		for i, z := range zs {
			want[i] = make([]float64, p.params)
			model.Gradient(&ts, ms, z, want[i])
		}
		errs := make(chan string, 4*len(zs))
		done := make(chan struct{})
		for w := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				var tl ad.Tape
				g := make([]float64, p.params)
				for k := range zs {
					i := (k + w) % len(zs)
					model.Gradient(&tl, ml, zs[i], g)
					for j := range g {
						if math.Abs(g[j]-want[i][j]) > 1e-12*math.Max(1, math.Abs(want[i][j])) {
							errs <- fmt.Sprintf("%s: point %d: gradient[%d] %v concurrently, %v serially", p.name, i, j, g[j], want[i][j])
							return
						}
					}
				}
			}()
		}
		for range 4 {
			<-done
		}
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}
