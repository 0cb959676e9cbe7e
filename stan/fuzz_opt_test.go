package stan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// fuzzOptHead is the data and parameters every FuzzOptimised program body runs against.
const fuzzOptHead = laneDataBlock + `
parameters { real a; real<lower=0> b; vector[K] w; }
model {
`

// FuzzOptimised is a differential fuzz test of the optimising compiler: a model-block body is
// compiled optimised (lanes, scalar kernels, fused GLMs, folded data) and as written, and both
// are evaluated at two fixed points. Nothing may panic; where both compile, both must fail
// with the same error text or give the same log density and gradient (to 1e-9 relative, well
// above the rounding the optimisations' reassociation causes, ≈ 1e-13 in the unit tests). A
// body that only one compilation accepts is a failure too (the optimised compiler falls back
// rather than reject). One difference is allowed: a gradient element that is NaN as written and
// finite optimised (see the comment at the check).
//
// Run: go test -fuzz FuzzOptimised ./stan
func FuzzOptimised(f *testing.F) {
	for _, p := range kernelPrograms {
		if body, ok := strings.CutPrefix(p.src, laneDataBlock); ok {
			if i := strings.Index(body, "model {"); i >= 0 {
				f.Add(strings.TrimSuffix(strings.TrimSpace(body[i+len("model {"):]), "}"))
			}
		}
	}
	for _, b := range []string{
		`real s = 0; for (n in 2:N) s = s * a + y[n]; target += -square(s) / (1 + b);`,
		`for (n in 1:N) y[n] ~ normal(a + w[g[n]], b + 0.1);`,
		`vector[N] m; for (n in 1:N) m[n] = a * X[n, 2]; y ~ normal(m, 1 + b);`,
		`array[N] real s; s[1] = 0; for (t in 2:N) { for (k in 1:1) s[t] = sqrt(b + a * square(s[t - 1])); } y ~ normal(a, 1);`,
		`for (n in 1:N) { if (c[n] > 1) target += log_sum_exp(a * y[n], b); else target += exponential_lpdf(b | 1 + c[n]); }`,
	} {
		f.Add(b)
	}
	data := func(t *testing.T) *model.Data { return mustData(t, laneData) }
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > 2000 {
			return
		}
		src := fuzzOptHead + body + "\n}\n"
		prog, err := Parse("fz.stan", []byte(src))
		if err != nil || prog.Check(Builtins()) != nil {
			return
		}
		d := data(t)
		co, erro := compileProgramOpt(prog, d, true)
		cp, errp := compileProgramOpt(prog, d, false)
		if (erro == nil) != (errp == nil) {
			t.Fatalf("optimised compile error %v, as written %v", erro, errp)
		}
		if erro != nil {
			return
		}
		mo, err1 := co.model()
		mp, err2 := cp.model()
		if err1 != nil || err2 != nil {
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("model: %v vs %v", err1, err2)
			}
			return
		}
		dim := mo.Dim()
		for _, zs := range [][]float64{{0.3, -0.2, 0.5, 0.1}, {-1.1, 0.7, -0.4, 2}} {
			z := zs[:min(dim, len(zs))]
			for len(z) < dim {
				z = append(z, 0.25)
			}
			_, eo := co.logDensityAt(z, false)
			_, ep := cp.logDensityAt(z, false)
			if (eo == nil) != (ep == nil) || eo != nil && eo.Error() != ep.Error() {
				var ro, rp *RuntimeError
				if errors.As(eo, &ro) && errors.As(ep, &rp) && ro.Err.Error() == rp.Err.Error() {
					continue // the same error at another position of the same statement
				}
				t.Fatalf("z=%v: optimised error %v, as written %v", z, eo, ep)
			}
			if eo != nil {
				continue
			}
			var to, tp ad.Tape
			go_, gp := make([]float64, dim), make([]float64, dim)
			a := model.Gradient(&to, mo, z, go_)
			b := model.Gradient(&tp, mp, z, gp)
			same := func(x, y float64) bool {
				return x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y))
			}
			if !same(a, b) {
				t.Fatalf("z=%v: lp %v optimised, %v as written", z, a, b)
			}
			for i := range go_ {
				// A NaN gradient as written beside a finite one optimised is the tape's 0·NaN: a
				// NaN value nothing reads (a dead element of a recursion) still sends its NaN
				// partial back with a zero adjoint; the kernel skips zero adjoints.
				if !same(go_[i], gp[i]) && !(math.IsNaN(gp[i]) && !math.IsNaN(go_[i])) {
					t.Fatalf("z=%v: gradient[%d] %v optimised, %v as written", z, i, go_[i], gp[i])
				}
			}
		}
	})
}
