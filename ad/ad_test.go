package ad

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/internal/race"
)

// Tolerance for comparing AD gradients with central finite differences. With step
// h = 1e-5·max(1,|x|) the truncation error is O(h²·f”') ≈ 1e-10 and the rounding error
// O(ε·|f|/h) ≈ 1e-11·|f|; for the smooth test functions below (|f| ≲ 100) both stay well under
// 1e-6, so a relative-or-absolute tolerance of 1e-6 catches any wrong partial while never
// flagging a correct one.
const fdTol = 1e-6

type fn func(t *Tape, x Var) Var

// fdGrad is the central finite-difference gradient of f at x.
func fdGrad(f fn, x []float64) []float64 {
	g := make([]float64, len(x))
	xp := append([]float64(nil), x...)
	var t Tape
	eval := func() float64 {
		t.Reset()
		return t.Float(f(&t, t.Input(xp)))
	}
	for i := range x {
		h := 1e-5 * math.Max(1, math.Abs(x[i]))
		xp[i] = x[i] + h
		fp := eval()
		xp[i] = x[i] - h
		fm := eval()
		xp[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// adGrad returns f(x) and its AD gradient.
func adGrad(f fn, x []float64) (float64, []float64) {
	var t Tape
	in := t.Input(x)
	out := f(&t, in)
	t.Backward(out)
	return t.Float(out), append([]float64(nil), t.Grad(in)...)
}

func checkGrad(t *testing.T, name string, f fn, x []float64) {
	t.Helper()
	_, g := adGrad(f, x)
	want := fdGrad(f, x)
	for i := range g {
		if d := math.Abs(g[i] - want[i]); d > fdTol*math.Max(1, math.Abs(want[i])) || math.IsNaN(g[i]) {
			t.Errorf("%s: ∂f/∂x[%d] = %.12g, finite differences %.12g", name, i, g[i], want[i])
		}
	}
}

var x5 = []float64{0.3, -1.2, 0.7, 2.1, -0.4}
var pos5 = []float64{0.3, 1.2, 0.7, 2.1, 0.4}

// wsum reduces a vector to a scalar with distinct weights so every element's adjoint is tested.
func wsum(t *Tape, v Var) Var {
	n := t.Size(v)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 + 0.37*float64(i) - 0.05*float64(i*i)
	}
	return t.Dot(v, t.Const(w...))
}

func TestUnaryGradients(t *testing.T) {
	cases := []struct {
		name string
		f    func(*Tape, Var) Var
		x    []float64
	}{
		{"Neg", (*Tape).Neg, x5},
		{"Exp", (*Tape).Exp, x5},
		{"Log", (*Tape).Log, pos5},
		{"Log1p", (*Tape).Log1p, pos5},
		{"Expm1", (*Tape).Expm1, x5},
		{"Sqrt", (*Tape).Sqrt, pos5},
		{"Square", (*Tape).Square, x5},
		{"Abs", (*Tape).Abs, x5},
		{"Softplus", (*Tape).Softplus, []float64{-40, -3, 0.2, 5, 40}},
		{"Sigmoid", (*Tape).Sigmoid, []float64{-40, -3, 0.2, 5, 30}},
		{"LogSigmoid", (*Tape).LogSigmoid, []float64{-40, -3, 0.2, 5, 30}},
		{"Tanh", (*Tape).Tanh, x5},
		{"Relu", (*Tape).Relu, x5},
		{"Lgamma", (*Tape).Lgamma, []float64{0.3, 1.2, 4.7, 12.1, 0.05}},
		{"AddC", func(t *Tape, a Var) Var { return t.AddC(a, 2.5) }, x5},
		{"MulC", func(t *Tape, a Var) Var { return t.MulC(a, -1.5) }, x5},
		{"PowC", func(t *Tape, a Var) Var { return t.PowC(a, 2.7) }, pos5},
		{"Map", func(t *Tape, a Var) Var {
			y, v, d := t.Map(a)
			for i, xi := range t.Value(a) {
				v[i], d[i] = math.Sin(xi), math.Cos(xi)
			}
			return y
		}, x5},
	}
	for _, c := range cases {
		checkGrad(t, c.name, func(t *Tape, x Var) Var { return wsum(t, c.f(t, x)) }, c.x)
	}
}

func TestBinaryGradientsWithBroadcast(t *testing.T) {
	ops := []struct {
		name string
		f    func(*Tape, Var, Var) Var
		pos  bool
	}{
		{"Add", (*Tape).Add, false},
		{"Sub", (*Tape).Sub, false},
		{"Mul", (*Tape).Mul, false},
		{"Div", (*Tape).Div, true},
		{"Pow", (*Tape).Pow, true},
	}
	// x holds a (3 elements) then b; shapes tested: vec∘vec, scalar∘vec, vec∘scalar.
	shapes := []struct {
		name   string
		na, nb int
	}{{"vv", 3, 3}, {"sv", 1, 3}, {"vs", 3, 1}}
	for _, o := range ops {
		for _, s := range shapes {
			x := []float64{0.5, -1.3, 2.2, 0.8, 1.7, -0.6}[:s.na+s.nb]
			if o.pos {
				x = []float64{0.5, 1.3, 2.2, 0.8, 1.7, 0.6}[:s.na+s.nb]
			}
			checkGrad(t, o.name+"/"+s.name, func(t *Tape, v Var) Var {
				a, b := t.Slice(v, 0, s.na), t.Slice(v, s.na, s.na+s.nb)
				return wsum(t, o.f(t, a, b))
			}, x)
		}
	}
}

func TestReductionGradients(t *testing.T) {
	checkGrad(t, "Sum", func(t *Tape, x Var) Var { return t.Sum(t.Square(x)) }, x5)
	checkGrad(t, "Mean", func(t *Tape, x Var) Var { return t.Mean(t.Exp(x)) }, x5)
	checkGrad(t, "Dot", func(t *Tape, x Var) Var { return t.Dot(t.Slice(x, 0, 2), t.Slice(x, 3, 5)) }, x5)
	checkGrad(t, "DotSelf", func(t *Tape, x Var) Var { return t.Dot(x, x) }, x5)
	checkGrad(t, "LogSumExp", func(t *Tape, x Var) Var { return t.LogSumExp(x) }, []float64{700, 699, -3, 701, 0})
	checkGrad(t, "CumSum", func(t *Tape, x Var) Var { return wsum(t, t.CumSum(x)) }, x5)
	checkGrad(t, "Index", func(t *Tape, x Var) Var { return t.Mul(t.Index(x, 3), t.Index(x, 1)) }, x5)
	checkGrad(t, "Gather", func(t *Tape, x Var) Var { return wsum(t, t.Gather(x, []int{4, 0, 0, 2})) }, x5)
	checkGrad(t, "Concat", func(t *Tape, x Var) Var {
		return wsum(t, t.Concat(t.Slice(x, 3, 5), t.Const(1, 2), t.Exp(t.Slice(x, 0, 2)), x))
	}, x5)
}

// matrix inputs used below
var m6 = []float64{0.3, -1.2, 0.7, 2.1, -0.4, 1.1}

func TestMatrixGradients(t *testing.T) {
	checkGrad(t, "MatVec", func(t *Tape, x Var) Var {
		A := t.AsMatrix(t.Slice(x, 0, 6), 2, 3)
		return wsum(t, t.MatVec(A, t.Slice(x, 6, 9)))
	}, append(append([]float64{}, m6...), 0.5, -0.2, 1.4))
	A := Mat{Rows: 2, Cols: 3, Data: m6}
	checkGrad(t, "MatVecC", func(t *Tape, x Var) Var { return wsum(t, t.MatVecC(A, x)) }, []float64{0.5, -0.2, 1.4})
	checkGrad(t, "MatTVecC", func(t *Tape, x Var) Var { return wsum(t, t.MatTVecC(A, x)) }, []float64{0.5, -0.2})
	checkGrad(t, "MatMul", func(t *Tape, x Var) Var {
		a := t.AsMatrix(t.Slice(x, 0, 6), 2, 3)
		b := t.AsMatrix(t.Slice(x, 6, 12), 3, 2)
		return wsum(t, t.MatMul(a, b))
	}, append(append([]float64{}, m6...), 1.0, 0.2, -0.3, 0.9, 0.4, -1.1))
	checkGrad(t, "Transpose", func(t *Tape, x Var) Var {
		return wsum(t, t.Transpose(t.AsMatrix(x, 2, 3)))
	}, m6)
}

// spd returns the lower triangle of a well-conditioned SPD 3×3 matrix built from x, as a
// full matrix node; only the lower triangle is an input so FD perturbs each entry once.
func spd(t *Tape, x Var) Var {
	// x = 6 lower-triangular entries of A (row-major): A00, A10, A11, A20, A21, A22
	z := t.Const(0)
	e := func(i int) Var { return t.Index(x, i) }
	return t.AsMatrix(t.Concat(e(0), z, z, e(1), e(2), z, e(3), e(4), e(5)), 3, 3)
}

var spd6 = []float64{4, 1.2, 3, -0.5, 0.7, 2.5}

func TestLinalgGradients(t *testing.T) {
	checkGrad(t, "Cholesky", func(t *Tape, x Var) Var { return wsum(t, t.Cholesky(spd(t, x))) }, spd6)
	checkGrad(t, "LogDetViaCholesky", func(t *Tape, x Var) Var {
		return t.MulC(t.Sum(t.Log(t.Diag(t.Cholesky(spd(t, x))))), 2)
	}, spd6)
	checkGrad(t, "TriSolveVec", func(t *Tape, x Var) Var {
		L := t.Cholesky(spd(t, t.Slice(x, 0, 6)))
		return wsum(t, t.TriSolve(L, t.Slice(x, 6, 9)))
	}, append(append([]float64{}, spd6...), 0.3, -1, 2))
	checkGrad(t, "TriSolveMat", func(t *Tape, x Var) Var {
		L := t.Cholesky(spd(t, t.Slice(x, 0, 6)))
		return wsum(t, t.TriSolve(L, t.AsMatrix(t.Slice(x, 6, 12), 3, 2)))
	}, append(append([]float64{}, spd6...), 0.3, -1, 2, 0.1, 0.5, -0.7))
	checkGrad(t, "LogDet", func(t *Tape, x Var) Var { return t.LogDet(t.AsMatrix(x, 3, 3)) },
		[]float64{0.5, 2, -1, 1.5, 0.3, 0.8, -0.7, 1.1, 2.4})
}

func TestLinalgValues(t *testing.T) {
	var tp Tape
	// A = [[4,2],[2,3]]: L = [[2,0],[1,√2]], log det = log 8.
	A := tp.AsMatrix(tp.Const(4, 2, 2, 3), 2, 2)
	L := tp.Value(tp.Cholesky(A))
	want := []float64{2, 0, 1, math.Sqrt2}
	for i := range want {
		if math.Abs(L[i]-want[i]) > 1e-15 {
			t.Fatalf("Cholesky = %v, want %v", L, want)
		}
	}
	if ld := tp.Float(tp.LogDet(A)); math.Abs(ld-math.Log(8)) > 1e-14 {
		t.Fatalf("LogDet = %v, want log 8", ld)
	}
	// Not positive definite: NaN, no panic.
	B := tp.AsMatrix(tp.Const(1, 2, 2, 1), 2, 2)
	if l := tp.Value(tp.Cholesky(B)); !math.IsNaN(l[0]) {
		t.Fatalf("Cholesky of indefinite matrix = %v, want NaN", l)
	}
}

func TestFusedNode(t *testing.T) {
	// f(a, b) = Σ a_i² b + b³ via a fused node with hand partials; a and b twice (a Var passed
	// twice must accumulate).
	f := func(t *Tape, x Var) Var {
		a, b := t.Slice(x, 0, 3), t.Slice(x, 3, 4)
		av, bv := t.Value(a), t.Value(b)[0]
		fb := t.Fused()
		da := fb.Partial(a)
		db := fb.Partial(b)
		db2 := fb.Partial(b)
		if fb.Partial(t.Const(1)) != nil {
			panic("constant got partials")
		}
		s := 0.0
		for i, ai := range av {
			s += ai * ai * bv
			da[i] = 2 * ai * bv
			db[0] += ai * ai
		}
		db2[0] = 3 * bv * bv
		return t.Exp(fb.Done(s + bv*bv*bv))
	}
	checkGrad(t, "Fused", f, []float64{0.3, -0.2, 0.5, 0.7})
	checkGrad(t, "FusedVec", func(t *Tape, x Var) Var {
		v := t.Value(x)
		return t.FusedVec(v[0]*v[1], []Var{x}, [][]float64{{v[1], v[0]}})
	}, []float64{1.5, -2})
}

func TestResetReusesMemoryWithoutAllocation(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	var tp Tape
	x := []float64{0.1, 0.2, 0.3, 0.4}
	run := func() {
		tp.Reset()
		in := tp.Input(x)
		L := tp.Cholesky(tp.AsMatrix(tp.Const(4, 2, 2, 3), 2, 2))
		y := tp.TriSolve(L, tp.Slice(in, 0, 2))
		out := tp.Add(tp.Sum(tp.Exp(in)), tp.LogSumExp(tp.Concat(y, in)))
		tp.Backward(out)
	}
	run()
	if a := testing.AllocsPerRun(100, run); a != 0 {
		t.Fatalf("steady-state evaluation allocates %v times per run, want 0", a)
	}
}

func TestMarkRewindAndInnerGradient(t *testing.T) {
	var tp Tape
	x := tp.Input([]float64{1.5, -0.5})
	outer := tp.Sum(tp.Square(x)) // ∂/∂x = 2x
	m := tp.Mark()
	inner := tp.Sum(tp.Exp(x)) // ∂/∂x = eˣ
	tp.ZeroGrad(x)
	tp.BackwardSince(m, inner)
	g := tp.Grad(x)
	if math.Abs(g[0]-math.Exp(1.5)) > 1e-15 || math.Abs(g[1]-math.Exp(-0.5)) > 1e-15 {
		t.Fatalf("inner gradient %v", g)
	}
	tp.Rewind(m)
	if tp.Len() != int(outer.id)+1 {
		t.Fatalf("Rewind left %d nodes", tp.Len())
	}
	tp.Backward(outer)
	if g := tp.Grad(x); g[0] != 3 || g[1] != -1 {
		t.Fatalf("outer gradient after rewind %v", g)
	}
}

func TestMisusePanicsWithMessage(t *testing.T) {
	var tp Tape
	a, b := tp.Input([]float64{1, 2}), tp.Input([]float64{1, 2, 3})
	defer func() {
		r := recover()
		if r == nil || fmt.Sprint(r) != "ad: elementwise op on sizes 2 and 3" {
			t.Fatalf("panic = %v", r)
		}
	}()
	tp.Add(a, b)
}

func TestDenseGradients(t *testing.T) {
	// X (3×2) W (2×4) b (4), all inputs; every activation.
	x := []float64{0.3, -1.2, 0.7, 2.1, -0.4, 1.1, // X
		0.5, -0.3, 0.8, -1.0, 0.2, 0.6, -0.9, 0.4, // W
		0.1, -0.2, 0.05, 0.3} // b
	for _, act := range []Activation{Linear, ReLU, Tanh, Sigmoid} {
		checkGrad(t, "Dense/"+act.String(), func(t *Tape, v Var) Var {
			X := t.AsMatrix(t.Slice(v, 0, 6), 3, 2)
			W := t.AsMatrix(t.Slice(v, 6, 14), 2, 4)
			return wsum(t, t.Dense(X, W, t.Slice(v, 14, 18), act))
		}, x)
		Xc := Mat{Rows: 3, Cols: 2, Data: x[:6]}
		checkGrad(t, "DenseC/"+act.String(), func(t *Tape, v Var) Var {
			W := t.AsMatrix(t.Slice(v, 0, 8), 2, 4)
			return wsum(t, t.DenseC(Xc, W, t.Slice(v, 8, 12), act))
		}, x[6:])
	}
}

func TestOpsOnConstantsBackwardWithoutPanic(t *testing.T) {
	var tp Tape
	x := tp.Scalar(0.5) // one live input so Backward has something to reach
	c := tp.Const(0.3, 1.2, 0.7)
	m := tp.AsMatrix(tp.Const(4, 2, 2, 3), 2, 2)
	parts := []Var{
		tp.Exp(c), tp.Log(c), tp.Log1p(c), tp.Expm1(c), tp.Sqrt(c), tp.Square(c), tp.Abs(c),
		tp.Softplus(c), tp.Sigmoid(c), tp.LogSigmoid(c), tp.Tanh(c), tp.Relu(c), tp.Lgamma(c),
		tp.CumSum(c), tp.Gather(c, []int{2, 0}), tp.Concat(c, c), tp.Mul(c, c), tp.Div(c, c),
		tp.Pow(c, c), tp.Sub(c, c), tp.MulC(c, 2), tp.PowC(c, 2), tp.Neg(c),
		tp.Cholesky(m), tp.TriSolve(tp.Cholesky(m), tp.Const(1, 2)), tp.Transpose(m),
		tp.MatVec(m, tp.Const(1, 2)), tp.MatMul(m, m), tp.Diag(m),
	}
	out := tp.Mul(x, tp.LogDet(m))
	for _, p := range parts {
		out = tp.Add(out, tp.Sum(p))
	}
	out = tp.Add(out, tp.Add(tp.Mean(c), tp.Add(tp.Dot(c, c), tp.LogSumExp(c))))
	tp.Backward(out)
	if g := tp.Grad(x)[0]; math.Abs(g-math.Log(8)) > 1e-14 {
		t.Fatalf("∂out/∂x = %v, want log 8", g)
	}
}

func TestBackwardSinceKeepsAdjointsOfSourcesBeforeTheMark(t *testing.T) {
	// Views recorded after the mark share the adjoint of a source recorded before it; repeated
	// inner passes must accumulate into it, not wipe it (found by the objective package).
	var tp Tape
	P := tp.Input([]float64{1, 2, 3})
	m := tp.Mark()
	for range 2 {
		tp.BackwardSince(m, tp.Sum(tp.Slice(P, 0, 2)))
		tp.Rewind(m)
	}
	if g := tp.Grad(P); g[0] != 2 || g[1] != 2 || g[2] != 0 {
		t.Fatalf("accumulated gradient %v, want [2 2 0]", g)
	}
}
