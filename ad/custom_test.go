package ad

import (
	"math"
	"testing"
)

// scaledExp is a test Backwarder for y_i = a_i·exp(s·a_i) with a vector a and a scalar s (both
// may be constants); aux keeps exp(s·a_i).
type scaledExp struct{}

func (scaledExp) Backward(c Custom) {
	t := c.Tape()
	a, s := c.Arg(0), c.Arg(1)
	av, sv := t.Value(a), t.Float(s)
	e, g := c.Aux(), c.Grad()
	if ga := t.Grad(a); ga != nil {
		for i := range ga {
			ga[i] += g[i] * e[i] * (1 + sv*av[i])
		}
	}
	if gs := t.Grad(s); gs != nil {
		for i := range g {
			gs[0] += g[i] * e[i] * av[i] * av[i]
		}
	}
}

func recordScaledExp(t *Tape, a, s Var) Var {
	n := t.Size(a)
	c := t.Custom(scaledExp{}, n, n, a, s)
	y, e := c.Value(), c.Aux()
	av, sv := t.Value(a), t.Float(s)
	for i := range y {
		e[i] = math.Exp(sv * av[i])
		y[i] = av[i] * e[i]
	}
	return c.Var()
}

func TestCustomGradient(t *testing.T) {
	x := []float64{0.3, -0.7, 1.1, 0.2}
	// f(x) = Σ w ⊙ g(x[:3], x[3]) + Σ g(g(x[:3], x[3]), 0.5): the node used as an argument of
	// another one, a constant argument, and a weighted sum of its outputs.
	f := func(t *Tape, x Var) Var {
		a, s := t.Slice(x, 0, 3), t.Index(x, 3)
		y := recordScaledExp(t, a, s)
		w := t.Const(1, -2, 0.5)
		y2 := recordScaledExp(t, y, t.Const(0.5))
		return t.Add(t.Dot(y, w), t.Sum(y2))
	}
	checkGrad(t, "Custom", f, x)
}

func TestCustomRewindAndAllocs(t *testing.T) {
	var tp Tape
	x := []float64{0.3, -0.7, 1.1}
	run := func() float64 {
		tp.Reset()
		in := tp.Input(x)
		s := tp.Scalar(0.2)
		m := tp.Mark()
		for range 3 { // record, differentiate, rewind: fns must be trimmed with the nodes
			y := tp.Sum(recordScaledExp(&tp, in, s))
			tp.BackwardSince(m, y)
			tp.Rewind(m)
		}
		out := tp.Sum(recordScaledExp(&tp, in, s))
		tp.Backward(out)
		return tp.Grad(in)[0]
	}
	// ∂/∂x_0 of Σ x_i exp(0.2 x_i) is exp(0.2 x_0)(1 + 0.2 x_0): the rewound passes must not
	// leave stale contributions (exact up to rounding, hence 1e-15 relative).
	want := math.Exp(0.2*0.3) * (1 + 0.2*0.3)
	if got := run(); math.Abs(got-want) > 1e-15*want {
		t.Fatalf("grad = %v, want %v", got, want)
	}
	if n := len(tp.fns); n != 1 {
		t.Fatalf("len(fns) = %d after rewinds, want 1", n)
	}
	if a := testing.AllocsPerRun(20, func() { run() }); a != 0 {
		t.Fatalf("%v allocs per run, want 0", a)
	}
}

// CustomUninit's aux holds what earlier nodes left in the arena (here: a rewound node's
// non-zero aux), Custom's is zero; both have length naux and the same value and gradient rules.
func TestCustomUninitAux(t *testing.T) {
	var tp Tape
	in := tp.Input([]float64{0.3, -0.7, 1.1})
	m := tp.Mark()
	c := tp.Custom(scaledExp{}, 3, 8, in, tp.Const(0.2))
	for i := range c.Aux() {
		c.Aux()[i] = 42
	}
	tp.Rewind(m)
	u := tp.CustomUninit(scaledExp{}, 3, 8, in, tp.Const(0.2))
	if len(u.Aux()) != 8 || len(u.Value()) != 3 {
		t.Fatalf("len(aux) = %d, len(value) = %d, want 8, 3", len(u.Aux()), len(u.Value()))
	}
	for _, v := range u.Value() {
		if v != 0 {
			t.Fatalf("CustomUninit value %v, want zeros", u.Value())
		}
	}
	seen := false
	for _, v := range u.Aux() {
		seen = seen || v == 42
	}
	if !seen {
		t.Logf("CustomUninit reused no rewound memory (arena layout changed?); aux %v", u.Aux())
	}
	tp.Rewind(m)
	z := tp.Custom(scaledExp{}, 3, 8, in, tp.Const(0.2))
	for _, v := range z.Aux() {
		if v != 0 {
			t.Fatalf("Custom aux %v, want zeros", z.Aux())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("CustomUninit with naux < 0 did not panic")
		}
	}()
	tp.CustomUninit(scaledExp{}, 3, -1, in)
}
