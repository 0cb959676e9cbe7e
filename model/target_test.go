package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/internal/race"
)

// Compile-time checks that the adapters are Targets.
var (
	_ Target = (*Model)(nil)
	_ Target = GradFunc{}
	_ Target = Func{}
)

// fdTol: central differences with h = 1e-5·max(1,|z|) on these smooth densities (|f| ≲ 100)
// have truncation error ≈1e-9 and rounding error ≈1e-9, so 1e-6 relative-or-absolute flags a
// wrong gradient and never a right one.
const fdTol = 1e-6

func checkTargetFD(t *testing.T, name string, tg Target, z []float64) {
	t.Helper()
	var tp ad.Tape
	g := make([]float64, len(z))
	Gradient(&tp, tg, z, g)
	zp := append([]float64(nil), z...)
	eval := func() float64 {
		var s ad.Tape
		return s.Float(tg.LogDensity(&s, s.Input(zp)))
	}
	for i := range z {
		h := 1e-5 * math.Max(1, math.Abs(z[i]))
		zp[i] = z[i] + h
		fp := eval()
		zp[i] = z[i] - h
		fm := eval()
		zp[i] = z[i]
		fd := (fp - fm) / (2 * h)
		if !near(g[i], fd, fdTol) || math.IsNaN(g[i]) {
			t.Errorf("%s: ∂/∂z[%d] = %.12g, finite differences %.12g", name, i, g[i], fd)
		}
	}
}

// testModel has a density in the constrained parameters of richLayout that touches every one
// of them (so wrong wiring of any parameter shows in the gradient).
func testModel(l *Layout, noJacobian bool) *Model {
	return &Model{Layout: l, NoJacobian: noJacobian, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		mu, a0, a1, b1, theta, A, L, s := p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
		lp := t.Neg(t.MulC(t.Square(mu), 0.5))
		lp = t.Add(lp, t.Sub(t.Log(a0), a0))
		lp = t.Add(lp, t.Add(t.Log(a1), t.Mul(b1, t.Const(2))))
		lp = t.Add(lp, t.Dot(t.Log(theta), t.Const(1.5, 2, 0.5)))
		Av := t.MatVec(A, t.Const(1, -1, 0.5))
		lp = t.Add(lp, t.Neg(t.MulC(t.Dot(Av, Av), 0.5)))
		Lv := t.MatVec(L, t.Const(0.3, -0.2, 1))
		lp = t.Add(lp, t.Sum(t.Mul(Lv, t.Const(1, 2, 3))))
		lp = t.Add(lp, t.Neg(t.Sum(t.Square(s))))
		return lp
	}}
}

func TestModelGradient(t *testing.T) {
	l := richLayout(t)
	r := rand.New(rand.NewPCG(7, 8))
	for range 3 {
		z := randZ(r, l.Dim())
		checkTargetFD(t, "Model", testModel(l, false), z)
		checkTargetFD(t, "Model NoJacobian", testModel(l, true), z)
	}
}

func TestModelJacobianSwitch(t *testing.T) {
	l := richLayout(t)
	r := rand.New(rand.NewPCG(9, 10))
	for range 5 {
		z := randZ(r, l.Dim())
		var tp ad.Tape
		on := tp.Float(testModel(l, false).LogDensity(&tp, tp.Input(z)))
		tp.Reset()
		off := tp.Float(testModel(l, true).LogDensity(&tp, tp.Input(z)))
		lj := l.ConstrainValues(z, make([]float64, l.Len()))
		// on − off = log J up to the rounding of one addition to |on| ≈ 10–100.
		if !near(on-off, lj, 1e-12) {
			t.Errorf("with − without Jacobian = %.15g, log J = %.15g", on-off, lj)
		}
	}
}

func TestModelAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	l := richLayout(t)
	m := testModel(l, false)
	z := randZ(rand.New(rand.NewPCG(11, 12)), l.Dim())
	g := make([]float64, len(z))
	var tp ad.Tape
	Gradient(&tp, m, z, g)
	if a := testing.AllocsPerRun(50, func() { Gradient(&tp, m, z, g) }); a != 0 {
		t.Errorf("Model gradient: %v allocations per call", a)
	}
}

// TestGradFunc: a hand-written N(0, diag(s²)) log density with its gradient gives the same
// value and gradient through the adapter, also composed with other nodes.
func TestGradFunc(t *testing.T) {
	s := []float64{1, 2, 0.5}
	gf := GradFunc{N: 3, F: func(x, grad []float64) float64 {
		v := 0.0
		for i, xi := range x {
			v -= 0.5 * xi * xi / (s[i] * s[i])
			grad[i] = -xi / (s[i] * s[i])
		}
		return v
	}}
	z := []float64{0.3, -1.1, 2}
	g := make([]float64, 3)
	var tp ad.Tape
	v := Gradient(&tp, gf, z, g)
	want := -0.5 * (0.09 + 1.21/4 + 4/0.25)
	if !near(v, want, 1e-15) {
		t.Errorf("value %.17g, want %.17g", v, want)
	}
	for i := range z {
		if w := -z[i] / (s[i] * s[i]); !near(g[i], w, 1e-15) {
			t.Errorf("grad[%d] = %g, want %g", i, g[i], w)
		}
	}
	// Composition: f(2z) chains through the fused node.
	checkTargetFD(t, "GradFunc∘2z", Func{N: 3, F: func(t *ad.Tape, z ad.Var) ad.Var {
		return gf.LogDensity(t, t.MulC(z, 2))
	}}, z)
	// A constant argument still evaluates.
	tp.Reset()
	if got := tp.Float(gf.LogDensity(&tp, tp.Const(z...))); !near(got, want, 1e-15) {
		t.Errorf("constant z: %g, want %g", got, want)
	}
	var tg Target = gf // converting the struct to an interface allocates once, here
	if a := testing.AllocsPerRun(50, func() { Gradient(&tp, tg, z, g) }); a != 0 {
		t.Errorf("GradFunc gradient: %v allocations per call", a)
	}
}

// ExampleModel writes eight schools (non-centred) as a Model over named constrained parameters.
func ExampleModel() {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	lay, err := NewLayout(
		Param{Name: "theta_trans", Dims: []int{8}},
		Param{Name: "mu"},
		Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
	)
	if err != nil {
		panic(err)
	}
	normal := func(t *ad.Tape, x, mu ad.Var, s float64) ad.Var { // Σ log N(x | mu, s) up to a constant
		d := t.MulC(t.Sub(x, mu), 1/s)
		return t.MulC(t.Dot(d, d), -0.5)
	}
	m := &Model{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		tt, mu, tau := p[0], p[1], p[2]
		theta := t.Add(mu, t.Mul(tau, tt))
		d := t.Div(t.Sub(t.ConstRef(y), theta), t.ConstRef(sigma))
		lp := t.Add(t.MulC(t.Dot(d, d), -0.5), t.MulC(t.Dot(tt, tt), -0.5))
		lp = t.Add(lp, normal(t, mu, t.Const(0), 5))
		// half-Cauchy(0, 5) on tau: −log(1 + (tau/5)²)
		return t.Sub(lp, t.Log1p(t.Square(t.MulC(tau, 0.2))))
	}}
	var tp ad.Tape
	z := make([]float64, m.Dim())
	grad := make([]float64, m.Dim())
	lp := Gradient(&tp, m, z, grad)
	fmt.Printf("dim %d, names %v…, log p(0) = %.4f\n", m.Dim(), lay.Names()[:2], lp)
	// Output: dim 10, names [theta_trans[1] theta_trans[2]]…, log p(0) = -4.1740
}
