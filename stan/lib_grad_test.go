package stan

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// argMatches reports whether v fits a (a small version of the checker's rules, for tests).
func argMatches(a Arg, v Value) bool {
	t := v.Type
	switch a.Class {
	case Any:
		return true
	case Reals:
		return (t.Array == 0 && t.Base != Matrix && t.Base != Func) || (t.Array == 1 && (t.Base == Real || t.Base == Int))
	case Ints:
		return t.Base == Int && t.Array <= 1
	case Vectors:
		return (t.Base == Vector || t.Base == RowVector) && t.Array <= 1
	}
	if t == a.Type {
		return true
	}
	return t.Base == Int && a.Type.Base == Real && t.Array == a.Type.Array
}

// call evaluates built-in name on args with the first matching signature.
func call(c *Ctx, name string, args ...Value) (Value, error) {
	// First a signature without promotion, then any.
	for pass := range 2 {
		for _, s := range libTable.Lookup(name) {
			if len(s.Args) != len(args) {
				continue
			}
			ok := true
			for i, a := range s.Args {
				ok = ok && argMatches(a, args[i]) && (pass == 1 || a.Class != Exact || a.Type == args[i].Type)
			}
			if ok {
				return s.Fn(c, args)
			}
		}
	}
	return Value{}, fmt.Errorf("no signature of %s matches", name)
}

// Value builders over slices of one input node x.
type vb struct {
	c *Ctx
	x ad.Var
}

func (b vb) real(i int) Value { return realV(b.c.T.Index(b.x, i)) }
func (b vb) vec(lo, hi int) Value {
	return Value{Type: TVector, Dims: []int{hi - lo}, Var: b.c.T.Slice(b.x, lo, hi)}
}
func (b vb) rowvec(lo, hi int) Value {
	return Value{Type: TRowVector, Dims: []int{hi - lo}, Var: b.c.T.Slice(b.x, lo, hi)}
}
func (b vb) arr(lo, hi int) Value {
	return Value{Type: tArrReal, Dims: []int{hi - lo}, Var: b.c.T.Slice(b.x, lo, hi)}
}
func (b vb) mat(lo, r, k int) Value {
	return Value{Type: TMatrix, Dims: []int{r, k}, Var: b.c.T.AsMatrix(b.c.T.Slice(b.x, lo, lo+r*k), r, k)}
}

// sym is the symmetric n×n matrix whose lower triangle is read row-major from x[lo:].
func (b vb) sym(lo, n int) Value {
	idx := make([]int, n*n)
	for i := range n {
		for j := range n {
			r, c := max(i, j), min(i, j)
			idx[i*n+j] = lo + r*n + c
		}
	}
	return Value{Type: TMatrix, Dims: []int{n, n}, Var: b.c.T.AsMatrix(b.c.T.Gather(b.x, idx), n, n)}
}
func (b vb) drow(xs ...float64) Value {
	return Value{Type: TRowVector, Dims: []int{len(xs)}, Var: b.c.T.Const(xs...)}
}
func (b vb) data(xs ...float64) Value {
	return Value{Type: TVector, Dims: []int{len(xs)}, Var: b.c.T.Const(xs...)}
}
func (b vb) dmat(r, k int, xs ...float64) Value {
	return Value{Type: TMatrix, Dims: []int{r, k}, Var: b.c.T.AsMatrix(b.c.T.Const(xs...), r, k)}
}

// gradCase is a built-in applied to arguments made from one parameter vector x; the result is
// reduced to a scalar by a fixed weighted sum, whose gradient is checked against central
// differences.
type gradCase struct {
	name string
	x    []float64
	args func(b vb) []Value
}

// evalCase returns the weighted sum of the result and its gradient.
func evalCase(gc gradCase, x []float64, grad []float64) (float64, error) {
	t := &ad.Tape{}
	c := &Ctx{T: t, Call: testCall}
	xv := t.Input(x)
	out, err := call(c, gc.name, gc.args(vb{c, xv})...)
	if err != nil {
		return 0, err
	}
	if out.Type.Base == Int {
		return 0, fmt.Errorf("int result")
	}
	n := out.Len()
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 + 0.37*float64(i%7) - 0.11*float64(i%3)
	}
	v := t.Dot(out.Var, t.Const(w...))
	if grad != nil {
		t.Backward(v)
		copy(grad, t.Grad(xv))
	}
	return t.Float(v), nil
}

func checkGradCase(t *testing.T, gc gradCase) {
	t.Helper()
	g := make([]float64, len(gc.x))
	if _, err := evalCase(gc, gc.x, g); err != nil {
		t.Errorf("%s: %v", gc.name, err)
		return
	}
	xp := append([]float64(nil), gc.x...)
	for i := range gc.x {
		h := 1e-6 * math.Max(1, math.Abs(gc.x[i]))
		xp[i] = gc.x[i] + h
		fp, _ := evalCase(gc, xp, nil)
		xp[i] = gc.x[i] - h
		fm, _ := evalCase(gc, xp, nil)
		xp[i] = gc.x[i]
		fd := (fp - fm) / (2 * h)
		// Central differences with h = 1e-6 have error O(h²·f''') + O(ε/h) ≈ 1e-9·scale.
		if math.Abs(fd-g[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: ∂/∂x[%d] = %.10g, finite difference %.10g", gc.name, i, g[i], fd)
		}
	}
}

// testCall is the user-function caller of the tests: "decay" is y' = −θ₁ y (old interface),
// "decay_new" is y' = −k y with a real argument k (new interface), "lv" is Lotka–Volterra.
func testCall(t *ad.Tape, name string, args []Value) (Value, error) {
	switch name {
	case "decay":
		y, th := args[1], args[2]
		return Value{Type: tArrReal, Dims: y.Dims, Var: t.Neg(t.Mul(t.Index(th.Var, 0), y.Var))}, nil
	case "decay_new":
		y, k := args[1], args[2]
		return Value{Type: TVector, Dims: y.Dims, Var: t.Neg(t.Mul(k.Var, y.Var))}, nil
	case "lv":
		y, th := args[1].Var, args[2].Var
		u, v := t.Index(y, 0), t.Index(y, 1)
		a, b, g, d := t.Index(th, 0), t.Index(th, 1), t.Index(th, 2), t.Index(th, 3)
		du := t.Mul(t.Sub(a, t.Mul(b, v)), u)
		dv := t.Mul(t.Sub(t.Mul(d, u), g), v)
		return Value{Type: tArrReal, Dims: []int{2}, Var: t.Concat(du, dv)}, nil
	}
	return Value{}, fmt.Errorf("unknown function %s", name)
}

func TestGradientsMath(t *testing.T) {
	pos := []float64{0.3, 0.7, 1.9, 0.45}
	unit := []float64{0.2, 0.5, 0.9, 0.35}
	any := []float64{-1.3, 0.4, 2.2, -0.2}
	for _, name := range []string{"exp", "log", "log1p", "expm1", "inv_logit", "log_inv_logit", "lgamma",
		"sqrt", "square", "tanh", "tgamma", "digamma", "inv", "inv_sqrt", "inv_square", "cbrt", "log2",
		"log10", "sin", "cos", "atan", "sinh", "cosh", "asinh", "erf", "erfc", "Phi", "Phi_approx",
		"inv_cloglog", "log1p_exp", "log1m_inv_logit", "exp2", "trigamma"} {
		checkGradCase(t, gradCase{name, pos, func(b vb) []Value { return []Value{b.vec(0, 4)} }})
	}
	for _, name := range []string{"log1m", "logit", "inv_Phi", "asin", "acos", "atanh"} {
		checkGradCase(t, gradCase{name, unit, func(b vb) []Value { return []Value{b.vec(0, 4)} }})
	}
	checkGradCase(t, gradCase{"log1m_exp", []float64{-0.3, -2, -0.01}, func(b vb) []Value { return []Value{b.arr(0, 3)} }})
	checkGradCase(t, gradCase{"fabs", any, func(b vb) []Value { return []Value{b.mat(0, 2, 2)} }})
	for _, name := range []string{"pow", "fmin", "fmax", "hypot", "lbeta", "lchoose", "log_diff_exp", "log_sum_exp", "atan2"} {
		x := []float64{3.1, 2.2, 4.5, 1.3, 1.7}
		checkGradCase(t, gradCase{name, x, func(b vb) []Value { return []Value{b.real(4), b.real(3)} }})
		if name != "log_sum_exp" && name != "atan2" {
			checkGradCase(t, gradCase{name, x, func(b vb) []Value { return []Value{b.vec(0, 2), b.vec(2, 4)} }})
			checkGradCase(t, gradCase{name, x, func(b vb) []Value { return []Value{b.vec(2, 4), b.real(3)} }})
			checkGradCase(t, gradCase{name, x, func(b vb) []Value { return []Value{b.real(2), b.vec(0, 2)} }})
		}
	}
	for _, name := range []string{"sum", "mean", "log_sum_exp", "prod", "variance", "sd", "max", "min"} {
		checkGradCase(t, gradCase{name, any, func(b vb) []Value { return []Value{b.vec(0, 4)} }})
		checkGradCase(t, gradCase{name, any, func(b vb) []Value { return []Value{b.mat(0, 2, 2)} }})
	}
	checkGradCase(t, gradCase{"prod", []float64{0, 2, 3}, func(b vb) []Value { return []Value{b.arr(0, 3)} }})
	checkGradCase(t, gradCase{"log_mix", []float64{0.3, -1, -2.5}, func(b vb) []Value { return []Value{b.real(0), b.real(1), b.real(2)} }})
	checkGradCase(t, gradCase{"log_mix", []float64{0.3, 0.7, -1, -2.5}, func(b vb) []Value { return []Value{b.vec(0, 2), b.vec(2, 4)} }})
	checkGradCase(t, gradCase{"cumulative_sum", any, func(b vb) []Value { return []Value{b.vec(0, 4)} }})
	// Operators.
	m6 := []float64{0.5, -1.2, 2, 0.3, 1.1, -0.7, 0.9, 1.4, -0.4}
	for _, tc := range []struct {
		op   string
		args func(b vb) []Value
	}{
		{"add", func(b vb) []Value { return []Value{b.vec(0, 3), b.real(4)} }},
		{"subtract", func(b vb) []Value { return []Value{b.real(4), b.mat(0, 2, 2)} }},
		{"multiply", func(b vb) []Value { return []Value{b.mat(0, 2, 3), b.vec(6, 9)} }},
		{"multiply", func(b vb) []Value { return []Value{b.rowvec(0, 2), b.mat(2, 2, 3)} }},
		{"multiply", func(b vb) []Value { return []Value{b.rowvec(0, 3), b.vec(3, 6)} }},
		{"multiply", func(b vb) []Value { return []Value{b.vec(0, 3), b.rowvec(3, 5)} }},
		{"multiply", func(b vb) []Value { return []Value{b.mat(0, 2, 2), b.mat(4, 2, 2)} }},
		{"divide", func(b vb) []Value { return []Value{b.vec(0, 3), b.real(8)} }},
		{"elt_divide", func(b vb) []Value { return []Value{b.real(3), b.vec(6, 9)} }},
		{"elt_multiply", func(b vb) []Value { return []Value{b.vec(0, 3), b.vec(3, 6)} }},
		{"minus", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"transpose", func(b vb) []Value { return []Value{b.mat(0, 2, 3)} }},
	} {
		checkGradCase(t, gradCase{tc.op, m6, tc.args})
	}
}

func TestGradientsMatrix(t *testing.T) {
	// An SPD matrix A = [[4,1,0.5],[1,3,0.2],[0.5,0.2,2]] and a lower-triangular L.
	spd := []float64{4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}
	low := []float64{2, 0, 0, 0.5, 1.5, 0, -0.3, 0.2, 1.1}
	v3 := []float64{0.7, -1.1, 0.4}
	x := append(append(append([]float64(nil), spd...), low...), v3...)
	for _, tc := range []struct {
		name string
		args func(b vb) []Value
	}{
		{"cholesky_decompose", func(b vb) []Value { return []Value{b.sym(0, 3)} }},
		{"inverse", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"log_determinant", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"determinant", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"mdivide_left_tri_low", func(b vb) []Value { return []Value{b.mat(9, 3, 3), b.vec(18, 21)} }},
		{"mdivide_left_tri_low", func(b vb) []Value { return []Value{b.mat(9, 3, 3), b.mat(0, 3, 3)} }},
		{"mdivide_right_tri_low", func(b vb) []Value { return []Value{b.rowvec(18, 21), b.mat(9, 3, 3)} }},
		{"mdivide_right_tri_low", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.mat(9, 3, 3)} }},
		{"mdivide_left", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"multiply_lower_tri_self_transpose", func(b vb) []Value { return []Value{b.mat(9, 3, 3)} }},
		{"quad_form", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"quad_form", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.mat(9, 3, 3)} }},
		{"quad_form_diag", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"diag_pre_multiply", func(b vb) []Value { return []Value{b.vec(18, 21), b.mat(0, 3, 3)} }},
		{"diag_post_multiply", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"crossprod", func(b vb) []Value { return []Value{b.mat(9, 3, 3)} }},
		{"tcrossprod", func(b vb) []Value { return []Value{b.mat(9, 3, 3)} }},
		{"columns_dot_product", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.mat(9, 3, 3)} }},
		{"rows_dot_product", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.mat(9, 3, 3)} }},
		{"columns_dot_self", func(b vb) []Value { return []Value{b.mat(9, 3, 3)} }},
		{"rows_dot_self", func(b vb) []Value { return []Value{b.mat(9, 3, 3)} }},
		{"dot_self", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"dot_product", func(b vb) []Value { return []Value{b.vec(18, 21), b.vec(0, 3)} }},
		{"softmax", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"log_softmax", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"diag_matrix", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"diagonal", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"add_diag", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"trace", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"append_col", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.vec(18, 21)} }},
		{"append_col", func(b vb) []Value { return []Value{b.vec(18, 21), b.mat(9, 3, 3)} }},
		{"append_row", func(b vb) []Value { return []Value{b.mat(0, 3, 3), b.rowvec(18, 21)} }},
		{"append_row", func(b vb) []Value { return []Value{b.real(0), b.vec(18, 21)} }},
		{"to_vector", func(b vb) []Value { return []Value{b.mat(0, 3, 3)} }},
		{"to_matrix", func(b vb) []Value {
			return []Value{b.vec(0, 6), {Type: TInt, Ints: []int{2}}, {Type: TInt, Ints: []int{3}}}
		}},
		{"block", func(b vb) []Value {
			return []Value{b.mat(0, 3, 3), intV(2), intV(1), intV(2), intV(2)}
		}},
		{"sub_col", func(b vb) []Value { return []Value{b.mat(0, 3, 3), intV(2), intV(3), intV(2)} }},
		{"col", func(b vb) []Value { return []Value{b.mat(0, 3, 3), intV(2)} }},
		{"row", func(b vb) []Value { return []Value{b.mat(0, 3, 3), intV(3)} }},
		{"segment", func(b vb) []Value { return []Value{b.vec(18, 21), intV(2), intV(2)} }},
		{"rep_matrix", func(b vb) []Value { return []Value{b.vec(18, 21), intV(2)} }},
		{"rep_matrix", func(b vb) []Value { return []Value{b.rowvec(18, 21), intV(2)} }},
		{"rep_vector", func(b vb) []Value { return []Value{b.real(3), intV(4)} }},
		{"rep_array", func(b vb) []Value { return []Value{b.vec(18, 21), intV(2)} }},
		{"sort_asc", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"reverse", func(b vb) []Value { return []Value{b.vec(18, 21)} }},
		{"eigenvalues_sym", func(b vb) []Value { return []Value{b.sym(0, 3)} }},
		{"eigenvectors_sym", func(b vb) []Value { return []Value{b.sym(0, 3)} }},
		{"gp_exp_quad_cov", func(b vb) []Value {
			pts := Value{Type: tArrReal, Dims: []int{3}, Var: b.c.T.Const(0.1, 0.8, 2.0)}
			return []Value{pts, b.real(0), b.real(4)}
		}},
	} {
		checkGradCase(t, gradCase{tc.name, x, tc.args})
	}
}

// TestMatrixValues checks layouts against values worked by hand (Stan Functions Reference:
// to_vector and to_matrix(v, m, n) are column-major; append_col joins rows).
func TestMatrixValues(t *testing.T) {
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	b := vb{c, tp.Input([]float64{1, 2, 3, 4, 5, 6})}
	m := b.mat(0, 2, 3) // [[1 2 3] [4 5 6]]
	for _, tc := range []struct {
		name string
		args []Value
		want []float64
	}{
		{"to_vector", []Value{m}, []float64{1, 4, 2, 5, 3, 6}},
		{"to_matrix", []Value{b.vec(0, 6), intV(2), intV(3)}, []float64{1, 3, 5, 2, 4, 6}},
		{"append_col", []Value{m, b.data(7, 8)}, []float64{1, 2, 3, 7, 4, 5, 6, 8}},
		{"append_row", []Value{m, b.rowvec(0, 3)}, []float64{1, 2, 3, 4, 5, 6, 1, 2, 3}},
		{"transpose", []Value{m}, []float64{1, 4, 2, 5, 3, 6}},
		{"multiply", []Value{m, b.data(1, 0, -1)}, []float64{-2, -2}},
		{"block", []Value{m, intV(1), intV(2), intV(2), intV(2)}, []float64{2, 3, 5, 6}},
		{"rep_matrix", []Value{b.vec(0, 2), intV(3)}, []float64{1, 1, 1, 2, 2, 2}},
		{"cumulative_sum", []Value{b.vec(0, 3)}, []float64{1, 3, 6}},
		{"softmax", []Value{b.data(0, 0)}, []float64{0.5, 0.5}},
		{"diag_pre_multiply", []Value{b.data(2, -1), m}, []float64{2, 4, 6, -4, -5, -6}},
		{"sd", []Value{b.vec(0, 3)}, []float64{1}},
		{"variance", []Value{b.vec(0, 6)}, []float64{3.5}},
		{"quad_form_diag", []Value{b.dmat(2, 2, 1, 2, 3, 4), b.data(2, 3)}, []float64{4, 12, 18, 36}},
		{"mdivide_right_tri_low", []Value{b.drow(4, 6), b.dmat(2, 2, 2, 0, 1, 3)}, []float64{1, 2}},
		{"inverse", []Value{b.dmat(2, 2, 4, 7, 2, 6)}, []float64{0.6, -0.7, -0.2, 0.4}},
		{"eigenvalues_sym", []Value{b.dmat(2, 2, 2, 1, 1, 2)}, []float64{1, 3}},
	} {
		out, err := call(c, tc.name, tc.args...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := tp.Value(out.Var)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestOperatorErrors(t *testing.T) {
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	b := vb{c, tp.Input([]float64{1, 2, 3, 4, 5})}
	for _, tc := range []struct {
		name string
		args []Value
		want string
	}{
		{"add", []Value{b.vec(0, 2), b.vec(0, 3)}, "add: size of first argument (2) and second argument (3) must match"},
		{"multiply", []Value{b.mat(0, 2, 2), b.vec(0, 3)}, "multiply: columns of matrix (2) and size of vector (3) must match"},
		{"divide", []Value{intV(1), intV(0)}, "divide: integer division by zero"},
		{"segment", []Value{b.vec(0, 3), intV(3), intV(2)}, "segment: slice [3, 4] out of range for size 3"},
		{"cholesky_decompose", []Value{b.dmat(2, 2, 1, 2, 2, 1)}, "cholesky_decompose: Matrix m is not positive definite"},
	} {
		_, err := call(c, tc.name, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	v, err := call(c, "divide", intV(-7), intV(2))
	if err != nil || v.Ints[0] != -3 {
		t.Errorf("-7 / 2 = %v (%v), want -3 (truncation)", v.Ints, err)
	}
	v, _ = call(c, "modulus", intV(-7), intV(2))
	if v.Ints[0] != -1 {
		t.Errorf("-7 %% 2 = %v, want -1", v.Ints)
	}
	if !strings.Contains(fmt.Sprint(Builtins().Lookup("pow")[0].Name), "pow") {
		t.Error("pow not registered")
	}
}

// libTable is the built-in table of the tests (built once; read-only).
var libTable = Builtins()

// TestIntAndShapeFunctions checks integer-valued and shape built-ins against values worked by
// hand from the Stan Functions Reference's definitions.
func TestIntAndShapeFunctions(t *testing.T) {
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	b := vb{c, tp.Input([]float64{3, 1, 2, 5, 4, 6})}
	m := b.mat(0, 2, 3)
	arrVec := Value{Type: tArrVector, Dims: []int{3, 2}, Var: b.x}
	for _, tc := range []struct {
		name string
		args []Value
		want []int
	}{
		{"size", []Value{m}, []int{6}},
		{"size", []Value{arrVec}, []int{3}},
		{"num_elements", []Value{arrVec}, []int{6}},
		{"dims", []Value{arrVec}, []int{3, 2}},
		{"rows", []Value{m}, []int{2}},
		{"cols", []Value{b.rowvec(0, 4)}, []int{4}},
		{"rank", []Value{b.vec(0, 6), intV(4)}, []int{4}},
		{"sort_indices_asc", []Value{b.vec(0, 4)}, []int{2, 3, 1, 4}},
		{"sort_indices_desc", []Value{ints(3, 1, 2)}, []int{1, 3, 2}},
		{"sort_asc", []Value{ints(3, 1, 2)}, []int{1, 2, 3}},
		{"reverse", []Value{ints(3, 1, 2)}, []int{2, 1, 3}},
		{"cumulative_sum", []Value{ints(3, 1, 2)}, []int{3, 4, 6}},
		{"sum", []Value{ints(3, 1, 2)}, []int{6}},
		{"max", []Value{ints(3, 1, 2)}, []int{3}},
		{"min", []Value{ints(3, 1, 2)}, []int{1}},
		{"min", []Value{intV(3), intV(-2)}, []int{-2}},
		{"choose", []Value{intV(6), intV(2)}, []int{15}},
		{"int_step", []Value{cr(c, 0)}, []int{0}},
		{"is_nan", []Value{cr(c, math.NaN())}, []int{1}},
		{"is_inf", []Value{cr(c, math.Inf(-1))}, []int{1}},
		{"to_int", []Value{cr(c, -2.7)}, []int{-2}},
		{"logical_lt", []Value{cr(c, 1), intV(2)}, []int{1}},
		{"logical_negation", []Value{intV(0)}, []int{1}},
		{"to_array_1d", []Value{Value{Type: tArrInt2, Dims: []int{2, 2}, Ints: []int{1, 2, 3, 4}}}, []int{1, 2, 3, 4}},
		{"append_array", []Value{ints(1, 2), ints(3)}, []int{1, 2, 3}},
		{"segment", []Value{ints(5, 6, 7, 8), intV(2), intV(2)}, []int{6, 7}},
		{"rep_array", []Value{intV(7), intV(2), intV(2)}, []int{7, 7, 7, 7}},
	} {
		out, err := call(c, tc.name, tc.args...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slicesEqual(out.Ints, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, out.Ints, tc.want)
		}
	}
	// Real-valued shape functions.
	for _, tc := range []struct {
		name string
		args []Value
		want []float64
		dims []int
	}{
		{"to_array_1d", []Value{m}, []float64{3, 5, 1, 4, 2, 6}, []int{6}},
		{"tail", []Value{arrVec, intV(1)}, []float64{4, 6}, []int{1, 2}},
		{"head", []Value{arrVec, intV(2)}, []float64{3, 1, 2, 5}, []int{2, 2}},
		{"linspaced_vector", []Value{intV(3), cr(c, 0), cr(c, 1)}, []float64{0, 0.5, 1}, []int{3}},
		{"one_hot_vector", []Value{intV(3), intV(2)}, []float64{0, 1, 0}, []int{3}},
		{"identity_matrix", []Value{intV(2)}, []float64{1, 0, 0, 1}, []int{2, 2}},
		{"to_row_vector", []Value{m}, []float64{3, 5, 1, 4, 2, 6}, []int{6}},
		{"to_matrix", []Value{ints(1, 2, 3, 4, 5, 6), intV(3), intV(2)}, []float64{1, 4, 2, 5, 3, 6}, []int{3, 2}},
		{"rep_matrix", []Value{cr(c, 2), intV(1), intV(2)}, []float64{2, 2}, []int{1, 2}},
		{"log_softmax", []Value{b.data(0, 0)}, []float64{-math.Ln2, -math.Ln2}, []int{2}},
		{"gp_exp_quad_cov", []Value{Value{Type: tArrReal, Dims: []int{2}, Var: tp.Const(0, 1)}, cr(c, 2), cr(c, 0.5)},
			[]float64{4, 4 * math.Exp(-2), 4 * math.Exp(-2), 4}, []int{2, 2}},
	} {
		out, err := call(c, tc.name, tc.args...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := tp.Value(out.Var)
		ok := len(got) == len(tc.want) && slicesEqual(out.Dims, tc.dims)
		for i := range got {
			ok = ok && math.Abs(got[i]-tc.want[i]) < 1e-12
		}
		if !ok {
			t.Errorf("%s: %v dims %v, want %v dims %v", tc.name, got, out.Dims, tc.want, tc.dims)
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
