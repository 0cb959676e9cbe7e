package bijector

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// dncpCase is a DNCP construction at fixed parameters, with the log density of its target
// distribution (over the restricted coordinates of x, as a function of x) and of its base (over
// u), for the exactness check log D(x(u)) + log J(u) = log base(u).
type dncpCase struct {
	tcase
	d     *DNCP
	theta []float64
	logD  func(x []float64) float64
	base  func(u []float64) float64
}

func logisticBase(u []float64) float64 {
	s := 0.0
	for _, v := range u {
		s += mathx.LogLogistic(v) + mathx.LogLogistic(-v)
	}
	return s
}

func normalBase(u []float64) float64 {
	s := 0.0
	for _, v := range u {
		s += -0.5*v*v - 0.5*math.Log(2*math.Pi)
	}
	return s
}

func sum(x []float64, f func(v float64) float64) float64 {
	s := 0.0
	for _, v := range x {
		s += f(v)
	}
	return s
}

func logGamma(x, a, rate float64) float64 {
	return a*math.Log(rate) + (a-1)*math.Log(x) - rate*x - mathx.Lgamma(a)
}

// dncpCases: the DNCP constructions at fixed parameters, each with its target and base
// log densities. Beta's and Dirichlet's targets include the independent total S.
func dncpCases() []dncpCase {
	mk := func(name string, d *DNCP, theta []float64, rows []int, logD, base func([]float64) float64) dncpCase {
		return dncpCase{tcase{name, d.Given(theta), rows}, d, theta, logD, base}
	}
	const rate, loc, scale, k, lam, mu, sig = 1.7, 0.5, 2.0, 1.5, 2.0, 0.2, 0.5
	alpha := []float64{0.5, 1, 2, 4}
	return []dncpCase{
		mk("exponential3", ExponentialDNCP(3), []float64{rate}, all(3),
			func(x []float64) float64 { return sum(x, func(v float64) float64 { return math.Log(rate) - rate*v }) }, logisticBase),
		mk("cauchy3", CauchyDNCP(3), []float64{loc, scale}, all(3),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 { z := (v - loc) / scale; return -math.Log(math.Pi * scale * (1 + z*z)) })
			}, logisticBase),
		mk("gumbel3", GumbelDNCP(3), []float64{-1, 0.7}, all(3),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 { z := (v + 1) / 0.7; return -math.Log(0.7) - z - math.Exp(-z) })
			}, logisticBase),
		mk("weibull3", WeibullDNCP(3), []float64{k, lam}, all(3),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 {
					return math.Log(k/lam) + (k-1)*math.Log(v/lam) - math.Pow(v/lam, k)
				})
			}, logisticBase),
		mk("weibull-k0.6", WeibullDNCP(2), []float64{0.6, 1}, all(2),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 { return math.Log(0.6) - 0.4*math.Log(v) - math.Pow(v, 0.6) })
			}, logisticBase),
		mk("locscale3", LocScale(3), []float64{loc, scale}, all(3),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 {
					z := (v - loc) / scale
					return -0.5*z*z - math.Log(scale) - 0.5*math.Log(2*math.Pi)
				})
			}, normalBase),
		mk("lognormal3", LogNormalDNCP(3), []float64{mu, sig}, all(3),
			func(x []float64) float64 {
				return sum(x, func(v float64) float64 {
					z := (math.Log(v) - mu) / sig
					return -0.5*z*z - math.Log(sig*v) - 0.5*math.Log(2*math.Pi)
				})
			}, normalBase),
		mk("gamma3-a2.5", GammaDNCP(3, 2.5), []float64{1.3}, all(3),
			func(x []float64) float64 { return sum(x, func(v float64) float64 { return logGamma(v, 2.5, 1.3) }) }, logisticBase),
		mk("gamma2-a0.3", GammaDNCP(2, 0.3), []float64{1}, all(2),
			func(x []float64) float64 { return sum(x, func(v float64) float64 { return logGamma(v, 0.3, 1) }) }, logisticBase),
		mk("beta-2,3", BetaDNCP(2, 3), nil, all(2),
			func(x []float64) float64 {
				return math.Log(x[0])*(2-1) + math.Log1p(-x[0])*(3-1) - mathx.LogBeta(2, 3) + logGamma(x[1], 5, 1)
			}, logisticBase),
		mk("dirichlet4", DirichletDNCP(alpha), nil, []int{0, 1, 2, 4},
			func(x []float64) float64 {
				lp, a0 := 0.0, 0.0
				for i, a := range alpha {
					lp += (a-1)*math.Log(x[i]) - mathx.Lgamma(a)
					a0 += a
				}
				return lp + mathx.Lgamma(a0) + logGamma(x[4], a0, 1)
			}, logisticBase),
	}
}

// TestDNCPBijector runs the package's checks of every transform — Forward against Constrain,
// u → x → u and x → u → x round trips, log J against log|det| of the AD Jacobian, and the
// gradient of Σ w·x + log J against finite differences — on every DNCP at fixed parameters,
// with the tolerances of TestForwardMatchesConstrain, TestRoundTrip, TestLogJacobian and
// TestGradient (whose justifications carry over: the Gamma inverse is solved to 1e-15 in
// log x, far inside them).
func TestDNCPBijector(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, dc := range dncpCases() {
		c := dc.tcase
		for _, sc := range []float64{0.1, 1, 4} {
			u := randU(r, c.b.FreeSize(), sc)
			x, lj := forward(c.b, u)
			x2 := make([]float64, c.b.Size())
			if lj2 := c.b.Constrain(u, x2); !near(lj, lj2, 1e-13) {
				t.Errorf("%s: Forward logJ %.17g, Constrain %.17g", c.name, lj, lj2)
			}
			for i := range x {
				if !near(x[i], x2[i], 1e-13) {
					t.Errorf("%s: Forward x[%d] %.17g, Constrain %.17g", c.name, i, x[i], x2[i])
				}
			}
			u2 := make([]float64, len(u))
			if err := c.b.Free(x, u2); err != nil {
				t.Fatalf("%s: Free(Constrain(u=%v)): %v", c.name, u, err)
			}
			for i := range u {
				if !near(u2[i], u[i], 1e-9) {
					t.Errorf("%s: u[%d]=%.17g → %.17g", c.name, i, u[i], u2[i])
				}
			}
			x3 := make([]float64, len(x))
			c.b.Constrain(u2, x3)
			for i := range x {
				if !near(x3[i], x[i], 1e-12) {
					t.Errorf("%s: x[%d]=%.17g → %.17g", c.name, i, x[i], x3[i])
				}
			}
		}
		for range 3 {
			u := randU(r, c.b.FreeSize(), 1.5)
			_, lj := forward(c.b, u)
			want, _ := mat.LogDet(jacobian(c.b, u, c.rows))
			if !near(lj, want, 1e-10) {
				t.Errorf("%s u=%v: logJ=%.15g, log|det J|=%.15g", c.name, u, lj, want)
			}
			checkFD(t, c.name, func(t *ad.Tape, v ad.Var) ad.Var { return objective(t, c.b, v) }, u)
		}
	}
}

// TestDNCPExact: every construction is exact — the pushforward of its base is its target —
// checked pointwise through the change of variables: log D(x(u)) + log J(u) = log base(u) for
// the restricted coordinates (with Beta's and Dirichlet's total S, whose Gamma(Σα) law is
// part of the target). Both sides are closed forms (and the Gamma inverse to 1e-15), so 1e-9
// relative is loose; a wrong Jacobian term or a construction of the wrong law is O(1).
func TestDNCPExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, dc := range dncpCases() {
		for range 10 {
			u := randU(r, dc.b.FreeSize(), 2)
			x := make([]float64, dc.b.Size())
			lj := dc.b.Constrain(u, x)
			got, want := dc.logD(x)+lj, dc.base(u)
			if !near(got, want, 1e-9) {
				t.Errorf("%s u=%v: log D(x) + log J = %.15g, log base(u) = %.15g", dc.name, u, got, want)
			}
		}
	}
}

// TestDNCPParamGradient: the gradient of Σ w·x + log J with respect to u and θ together
// matches central finite differences (fdTol), so the parents receive exact gradients.
func TestDNCPParamGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, dc := range dncpCases() {
		np := dc.d.NumParams()
		if np == 0 {
			continue
		}
		n := dc.d.FreeSize()
		for range 3 {
			v := append(randU(r, n, 1.2), dc.theta...)
			checkFD(t, dc.name+"(θ)", func(t *ad.Tape, in ad.Var) ad.Var {
				x, lj := dc.d.Forward(t, t.Slice(in, 0, n), t.Slice(in, n, n+np))
				w := make([]float64, t.Size(x))
				for i := range w {
					w[i] = 1 + 0.3*float64(i)
				}
				return t.Add(t.Dot(x, t.Const(w...)), lj)
			}, v)
		}
	}
}

// TestDNCPTails: Forward stays finite with finite gradients for |u| ≤ 30 on every construction
// and for |u| ≤ 700 on those whose x is representable there (the Gamma's lower tail
// x ≈ (σ(u)·Γ(a+1))^{1/a} underflows for u ≪ −700·a, and a Weibull with k < 1 overflows).
func TestDNCPTails(t *testing.T) {
	for _, dc := range dncpCases() {
		bounds := []float64{-30, 30}
		switch dc.d.kind {
		case dncpExponential, dncpCauchy, dncpGumbel, dncpLocScale:
			bounds = append(bounds, -700, 700)
		}
		for _, v := range bounds {
			u := make([]float64, dc.b.FreeSize())
			for i := range u {
				u[i] = v * (1 - 0.01*float64(i))
			}
			var tp ad.Tape
			in := tp.Input(u)
			x, lj := dc.b.Forward(&tp, in)
			if !finite(tp.Value(x)) || !finite([]float64{tp.Float(lj)}) {
				t.Errorf("%s u=%g: x = %v, logJ = %g", dc.name, v, tp.Value(x), tp.Float(lj))
				continue
			}
			tp.Backward(objective(&tp, dc.b, in))
			if !finite(tp.Grad(in)) {
				t.Errorf("%s u=%g: gradient %v", dc.name, v, tp.Grad(in))
			}
		}
	}
}

func TestDNCPFreeErrors(t *testing.T) {
	for _, c := range []struct {
		b    Bijector
		x    []float64
		want string
	}{
		{ExponentialDNCP(1).Given([]float64{1}), []float64{-1}, "Exponential.Free: x[0] = -1, want finite and > 0"},
		{ExponentialDNCP(1).Given([]float64{-1}), []float64{1}, "theta[0] = -1"},
		{CauchyDNCP(1).Given([]float64{0, 0}), []float64{1}, "theta[1] = 0"},
		{GammaDNCP(1, 2).Given([]float64{1}), []float64{0}, "x[0] = 0, want finite and > 0"},
		{BetaDNCP(1, 2).Given(nil), []float64{1, 1}, "x[0] = 1, want in (0, 1)"},
		{DirichletDNCP([]float64{1, 1}).Given(nil), []float64{0.5, 0.6, 1}, "sums to"},
	} {
		u := make([]float64, c.b.FreeSize())
		if err := c.b.Free(c.x, u); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%v.Free(%v) = %v, want %q", c.b, c.x, err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// fuzzDNCP drives one DNCP construction (case name of dncpCases) with arbitrary u, x and
// parameters: nothing may panic; with the case's parameters, a finite x = Constrain(u) that
// Free accepts must come back from Constrain(Free(x)) within 1e-9·max(1, |x|), and any x that
// Free accepts must be reproduced within 1e-7 (FuzzRoundTrip's tolerances, for the same
// reasons); with fuzzed parameters, Forward and Free must not panic and Free must not accept
// an x whose preimage it cannot produce finitely.
func fuzzDNCP(f *testing.F, name string) {
	var dc dncpCase
	for _, c := range dncpCases() {
		if c.name == name {
			dc = c
		}
	}
	if dc.d == nil {
		f.Fatalf("no case %s", name)
	}
	f.Add(encode(0.3, -1.2, 2.5, 0.01, -4, 7, 1, 2))
	f.Add(encode(-700, 700, 40, -40, 0.5, 3))
	f.Add(encode(0.2, 0.3, 0.5, 1, 2, 3, math.NaN(), math.Inf(1)))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := dc.b
		vals := floats(data)
		u := make([]float64, b.FreeSize())
		x := make([]float64, b.Size())
		fill(u, vals, 0)
		var tp ad.Tape
		b.Forward(&tp, tp.Input(u))
		lj := b.Constrain(u, x)
		if finite(x) && !math.IsNaN(lj) {
			u2 := make([]float64, len(u))
			if err := b.Free(x, u2); err == nil {
				if !finite(u2) {
					t.Fatalf("%s: Free(%v) accepted but gave u = %v", name, x, u2)
				}
				x2 := make([]float64, len(x))
				b.Constrain(u2, x2)
				for i := range x {
					if !nearScaled(x2[i], x[i], math.Abs(x[i]), 1e-9) {
						t.Fatalf("%s: u=%v: x[%d] = %.17g → %.17g", name, u, i, x[i], x2[i])
					}
				}
			}
		}
		xg := make([]float64, b.Size())
		fill(xg, vals, len(u))
		ug := make([]float64, len(u))
		if err := b.Free(xg, ug); err == nil {
			if !finite(ug) {
				t.Fatalf("%s: Free(%v) accepted but gave u = %v", name, xg, ug)
			}
			x3 := make([]float64, len(xg))
			b.Constrain(ug, x3)
			for i := range xg {
				if !nearScaled(x3[i], xg[i], math.Abs(xg[i]), 1e-7) {
					t.Fatalf("%s: Free accepted x=%v but Constrain gives back x[%d] = %.17g", name, xg, i, x3[i])
				}
			}
		}
		// Fuzzed parameters: no panics, and an accepted x has a finite preimage.
		theta := make([]float64, dc.d.NumParams())
		fill(theta, vals, len(u)+len(xg))
		var tq ad.Tape
		th := tq.Const(0)
		if len(theta) > 0 {
			th = tq.Const(theta...)
		}
		dc.d.Forward(&tq, tq.Input(u), th)
		if err := dc.d.Free(xg, theta, ug); err == nil && !finite(ug) {
			t.Fatalf("%s: Free(%v; θ=%v) accepted but gave u = %v", name, xg, theta, ug)
		}
	})
}

// One fuzz target per construction. Run: go test -fuzz FuzzDNCPGamma -fuzztime 1m ./bijector
func FuzzDNCPExponential(f *testing.F) { fuzzDNCP(f, "exponential3") }
func FuzzDNCPCauchy(f *testing.F)      { fuzzDNCP(f, "cauchy3") }
func FuzzDNCPGumbel(f *testing.F)      { fuzzDNCP(f, "gumbel3") }
func FuzzDNCPWeibull(f *testing.F)     { fuzzDNCP(f, "weibull3") }
func FuzzDNCPLocScale(f *testing.F)    { fuzzDNCP(f, "locscale3") }
func FuzzDNCPLogNormal(f *testing.F)   { fuzzDNCP(f, "lognormal3") }
func FuzzDNCPGamma(f *testing.F)       { fuzzDNCP(f, "gamma2-a0.3") }
func FuzzDNCPBeta(f *testing.F)        { fuzzDNCP(f, "beta-2,3") }
func FuzzDNCPDirichlet(f *testing.F)   { fuzzDNCP(f, "dirichlet4") }
