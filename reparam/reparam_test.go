package reparam

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// The eight schools data (Rubin 1981), as in zoo's embedded posteriordb data set.
var (
	schoolsY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	schoolsSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// eightSchools is the model written once: theta ~ N(mu, tau) declared as a group, the rest
// (likelihood and hyperpriors) in Density.
func eightSchools(t testing.TB, fam Family) *Spec {
	lay, err := model.NewLayout(
		model.Param{Name: "theta", Dims: []int{8}},
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
	)
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{
		Layout: lay,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			theta, mu, tau := p[0], p[1], p[2]
			lp := density.Normal(t, t.ConstRef(schoolsY), theta, t.ConstRef(schoolsSigma))
			return t.Add(lp, t.Add(density.Normal(t, mu, t.Const(0), t.Const(5)), density.Cauchy(t, tau, t.Const(0), t.Const(5))))
		},
		Groups: []Group{{Param: "theta", Family: fam, Nu: 4,
			Loc:   func(t *ad.Tape, p []ad.Var) ad.Var { return p[1] },
			Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return p[2] }}},
		NumObs: 8,
		LogLik: func(p [][]float64, out []float64) {
			for j, th := range p[0] {
				r := (schoolsY[j] - th) / schoolsSigma[j]
				out[j] = -0.5*r*r - math.Log(schoolsSigma[j]) - 0.5*math.Log(2*math.Pi)
			}
		},
	}
}

func logDensity(tg model.Target, z []float64) (float64, []float64) {
	var t ad.Tape
	in := t.Input(z)
	out := tg.LogDensity(&t, in)
	t.Backward(out)
	return t.Float(out), append([]float64(nil), t.Grad(in)...)
}

// cpEightSchools is posteriordb's eight_schools_centered written by hand over
// z = (theta, mu, log tau): Σ log N(theta | mu, tau) + Σ log N(y | theta, sigma) +
// log N(mu | 0, 5) + log Cauchy(tau | 0, 5) + log tau.
func cpEightSchools(z []float64) float64 {
	mu, tau := z[8], math.Exp(z[9])
	norm := func(x, m, s float64) float64 {
		r := (x - m) / s
		return -0.5*r*r - math.Log(s) - 0.5*math.Log(2*math.Pi)
	}
	lp := norm(mu, 0, 5) + math.Log(2/(math.Pi*5*(1+tau*tau/25))) - math.Log(2) + z[9]
	for j := range 8 {
		lp += norm(z[j], mu, tau) + norm(schoolsY[j], z[j], schoolsSigma[j])
	}
	return lp
}

// TestEightSchoolsEnds: at λ = 0 the built model is zoo's eight_schools (non-centred) and at
// λ = 1 the centred program, value and gradient. The log densities are the same sums in a
// different order, so they agree to rounding: 1e-12 relative is ~1e4 ulps of the ≈ −50
// totals; a wrong term (a missing log tau, a σ^λ off by one) is O(1).
func TestEightSchoolsEnds(t *testing.T) {
	s := eightSchools(t, Normal)
	ncp, err := s.Model([]float64{NCP})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Model([]float64{CP})
	if err != nil {
		t.Fatal(err)
	}
	zm := zoo.EightSchools()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		z := make([]float64, 10)
		for i := range z {
			z[i] = 2 * r.NormFloat64()
		}
		got, g := logDensity(ncp, z)
		want, wg := logDensity(zm, z)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("NCP at %v: %.17g, zoo %.17g", z, got, want)
		}
		for i := range g {
			if math.Abs(g[i]-wg[i]) > 1e-10*math.Max(1, math.Abs(wg[i])) {
				t.Errorf("NCP gradient[%d] = %g, zoo %g", i, g[i], wg[i])
			}
		}
		got, _ = logDensity(cp, z)
		// The Cauchy's half-line normalisation: density.Cauchy is the full-line density, as in
		// Stan (tau ~ cauchy(0, 5) with <lower=0>), so the hand-written half-Cauchy above
		// carries an extra log 2 which it subtracts again.
		if want := cpEightSchools(z); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("CP at %v: %.17g, hand-written %.17g", z, got, want)
		}
		// Derived theta: equal to z's theta in CP, mu + tau·theta_tilde in NCP.
		row := ncp.Row(nil, z)
		for j := range 8 {
			if w := z[8] + math.Exp(z[9])*z[j]; math.Abs(row[10+j]-w) > 1e-14*math.Max(1, math.Abs(w)) {
				t.Errorf("NCP derived theta[%d] = %g, want %g", j, row[10+j], w)
			}
		}
	}
	if n := ncp.Columns(); n[0] != "theta_tilde[1]" || n[10] != "theta[1]" {
		t.Errorf("columns %v", n)
	}
}

// TestPartialJacobian: for every family and λ, the built density equals the centred density at
// θ(θ̃) plus the log Jacobian (1 − λ)·Σ log σ (the change of variables, exact), and the
// gradient matches central finite differences (h = 1e-6, error O(h²·f”') ≈ 1e-10; 1e-6
// tolerance).
func TestPartialJacobian(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, fam := range []Family{Normal, StudentT, Logistic, Laplace, Cauchy} {
		s := eightSchools(t, fam)
		cp, _ := s.Model([]float64{CP})
		for _, lam := range []float64{0, 0.3, 0.77, 1} {
			m, err := s.Model([]float64{lam})
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				z := make([]float64, 10)
				for i := range z {
					z[i] = 1.5 * r.NormFloat64()
				}
				got, g := logDensity(m, z)
				row := m.Row(nil, z)
				zc := append(append([]float64(nil), row[10:18]...), z[8], z[9])
				want, _ := logDensity(cp, zc)
				want += (1 - lam) * 8 * z[9]
				if math.Abs(got-want) > 1e-11*math.Max(1, math.Abs(want)) {
					t.Errorf("%v λ=%g: %.15g, CP + Jacobian %.15g", fam, lam, got, want)
				}
				for i := range z {
					zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
					zp[i] += 1e-6
					zm[i] -= 1e-6
					fp, _ := logDensity(m, zp)
					fm, _ := logDensity(m, zm)
					if fd := (fp - fm) / 2e-6; math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(g[i])) {
						if fam == Laplace && math.Abs(fd-g[i]) < 1e-2 {
							continue // a kink of |x| within h of a point: FD straddles it
						}
						t.Errorf("%v λ=%g: ∂/∂z[%d] = %.10g, FD %.10g", fam, lam, i, g[i], fd)
					}
				}
			}
		}
	}
}

// TestConverter: Convert maps a point of one centring to the point of another with the same θ
// (derived quantities agree) and back to itself.
func TestConverter(t *testing.T) {
	s := eightSchools(t, Normal)
	r := rand.New(rand.NewPCG(5, 6))
	for _, pair := range [][2]float64{{1, 0}, {0, 1}, {0.4, 0.9}, {1, 0.25}} {
		a, _ := s.Model([]float64{pair[0]})
		b, _ := s.Model([]float64{pair[1]})
		ab, err := s.Converter([]float64{pair[0]}, []float64{pair[1]})
		if err != nil {
			t.Fatal(err)
		}
		ba, _ := s.Converter([]float64{pair[1]}, []float64{pair[0]})
		z := make([]float64, 10)
		for i := range z {
			z[i] = r.NormFloat64()
		}
		u := make([]float64, 10)
		ab.Convert(u, z)
		ra, rb := a.Row(nil, z), b.Row(nil, u)
		for i := 8; i < 18; i++ {
			if math.Abs(ra[i]-rb[i]) > 1e-12*math.Max(1, math.Abs(ra[i])) {
				t.Errorf("λ %v: column %d: %g vs %g", pair, i, ra[i], rb[i])
			}
		}
		back := make([]float64, 10)
		ba.Convert(back, u)
		for i := range z {
			if math.Abs(back[i]-z[i]) > 1e-12*math.Max(1, math.Abs(z[i])) {
				t.Errorf("λ %v: round trip z[%d] = %g → %g", pair, i, z[i], back[i])
			}
		}
	}
}

func TestSpecErrors(t *testing.T) {
	s := eightSchools(t, Normal)
	if _, err := s.Model([]float64{1.5}); err == nil || err.Error() != `reparam: Spec.Model: lambda[0] = 1.5 (group "theta"), want in [0, 1]` {
		t.Errorf("lambda 1.5: %v", err)
	}
	if _, err := s.Model(nil); err == nil {
		t.Error("no lambda: no error")
	}
	s.Groups[0].Param = "tau"
	if _, err := s.Model([]float64{1}); err == nil || !strings.Contains(err.Error(), `Groups[0].Param: "tau" is constrained`) {
		t.Errorf("constrained group: %v", err)
	}
	s.Groups[0].Param = "nope"
	if _, err := s.Model([]float64{1}); err == nil || !strings.Contains(err.Error(), `no parameter "nope"`) {
		t.Errorf("unknown group: %v", err)
	}
	s = eightSchools(t, StudentT)
	s.Groups[0].Nu = 0
	if _, err := s.Model([]float64{1}); err == nil || !strings.Contains(err.Error(), "Nu") {
		t.Errorf("Nu 0: %v", err)
	}
}
