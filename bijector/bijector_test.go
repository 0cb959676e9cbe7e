package bijector

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
)

// tcase is a bijector under test with the constrained coordinates whose Jacobian with respect
// to u is square: log J must equal log|det| of that restricted Jacobian.
type tcase struct {
	name string
	b    Bijector
	rows []int // indices into x (row-major) forming the square Jacobian
}

func all(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// strictLower lists the cells (i, j), j < i, of a K×K row-major matrix, row by row.
func strictLower(k int) []int {
	var r []int
	for i := range k {
		for j := range i {
			r = append(r, i*k+j)
		}
	}
	return r
}

// lowerCells lists the cells (i, j), j ≤ min(i, n−1), of an m×n row-major matrix.
func lowerCells(m, n int) []int {
	var r []int
	for i := range m {
		for j := 0; j <= min(i, n-1); j++ {
			r = append(r, i*n+j)
		}
	}
	return r
}

// cases: the restricted coordinates are all of x for square maps, the first K−1 entries for a
// simplex, the strictly lower triangle for a correlation Cholesky factor and the lower
// triangle for a covariance Cholesky factor.
func cases() []tcase {
	return []tcase{
		{"identity3", Identity(3), all(3)},
		{"lower0", Lower(3, 0), all(3)},
		{"lower-1.5", Lower(2, -1.5), all(2)},
		{"upper2", Upper(3, 2), all(3)},
		{"interval-1,3", Interval(4, -1, 3), all(4)},
		{"interval01", Interval(2, 0, 1), all(2)},
		{"simplex1", Simplex(1), nil},
		{"simplex2", Simplex(2), all(1)},
		{"simplex5", Simplex(5), all(4)},
		{"simplex9", Simplex(9), all(8)},
		{"ordered1", Ordered(1), all(1)},
		{"ordered5", Ordered(5), all(5)},
		{"posordered4", PositiveOrdered(4), all(4)},
		{"posordered2", PositiveOrdered(2), all(2)},
		{"corr1", CholeskyCorr(1), nil},
		{"corr2", CholeskyCorr(2), strictLower(2)},
		{"corr4", CholeskyCorr(4), strictLower(4)},
		{"corr6", CholeskyCorr(6), strictLower(6)},
		{"cov3", CholeskyCov(3, 3), lowerCells(3, 3)},
		{"cov4x2", CholeskyCov(4, 2), lowerCells(4, 2)},
		{"repeat3simplex3", Repeat(Simplex(3), 3), []int{0, 1, 3, 4, 6, 7}},
		{"repeat2ordered3", Repeat(Ordered(3), 2), all(6)},
		{"repeat1posordered2", Repeat(PositiveOrdered(2), 1), all(2)},
		{"colmajor2x3", IdentityColMajor(2, 3), all(6)},
		{"colmajor3x1", IdentityColMajor(3, 1), all(3)},
	}
}

func randU(r *rand.Rand, n int, scale float64) []float64 {
	u := make([]float64, n)
	for i := range u {
		u[i] = scale * r.NormFloat64()
	}
	return u
}

// forward runs b.Forward on a fresh tape and returns copies of x and log J.
func forward(b Bijector, u []float64) ([]float64, float64) {
	var t ad.Tape
	x, lj := b.Forward(&t, t.Input(u))
	return append([]float64(nil), t.Value(x)...), t.Float(lj)
}

// near reports |a − b| ≤ tol·max(1, |b|).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func TestForwardMatchesConstrain(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases() {
		for range 5 {
			u := randU(r, c.b.FreeSize(), 2)
			x, lj := forward(c.b, u)
			x2 := make([]float64, c.b.Size())
			lj2 := c.b.Constrain(u, x2)
			// The tape sums prefix sums in a tree (Hillis–Steele) and Constrain left to right;
			// the rounding differs by a few ulps times log₂ K, far below 1e-13.
			for i := range x {
				if !near(x[i], x2[i], 1e-13) {
					t.Errorf("%s u=%v: Forward x[%d]=%.17g, Constrain %.17g", c.name, u, i, x[i], x2[i])
				}
			}
			if !near(lj, lj2, 1e-13) {
				t.Errorf("%s u=%v: Forward logJ=%.17g, Constrain %.17g", c.name, u, lj, lj2)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases() {
		for _, scale := range []float64{0.1, 1, 4} {
			u := randU(r, c.b.FreeSize(), scale)
			x := make([]float64, c.b.Size())
			c.b.Constrain(u, x)
			u2 := make([]float64, len(u))
			if err := c.b.Free(x, u2); err != nil {
				t.Fatalf("%s: Free(Constrain(u=%v)): %v", c.name, u, err)
			}
			// u → x → u: each inverse is well conditioned for |u| ≲ 10 (no subtraction of
			// nearly equal numbers larger than the result), so errors stay ≲ 1e-14; 1e-9
			// leaves room for the condition number of the Cholesky correlation map.
			for i := range u {
				if !near(u2[i], u[i], 1e-9) {
					t.Errorf("%s: u[%d]=%.17g → %.17g", c.name, i, u[i], u2[i])
				}
			}
			// x → u → x.
			x2 := make([]float64, len(x))
			c.b.Constrain(u2, x2)
			for i := range x {
				if !near(x2[i], x[i], 1e-12) {
					t.Errorf("%s: x[%d]=%.17g → %.17g", c.name, i, x[i], x2[i])
				}
			}
		}
	}
}

// jacobian returns the Jacobian of x[rows] with respect to u, built by one Backward pass per
// output coordinate.
func jacobian(b Bijector, u []float64, rows []int) *mat.Dense {
	var t ad.Tape
	in := t.Input(u)
	x, _ := b.Forward(&t, in)
	J := mat.NewDense(len(rows), len(u), nil)
	for r, i := range rows {
		t.Backward(t.Index(x, i))
		g := t.Grad(in)
		for c := range u {
			J.Set(r, c, g[c])
		}
	}
	return J
}

func TestLogJacobian(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range cases() {
		if c.b.FreeSize() == 0 {
			continue
		}
		if len(c.rows) != c.b.FreeSize() {
			t.Fatalf("%s: %d rows for %d free coordinates", c.name, len(c.rows), c.b.FreeSize())
		}
		for range 3 {
			u := randU(r, c.b.FreeSize(), 1.5)
			_, lj := forward(c.b, u)
			want, _ := mat.LogDet(jacobian(c.b, u, c.rows))
			// The AD Jacobian is exact up to rounding (≈1e-15 per entry); LU on ≤ 15×15
			// matrices with condition numbers ≲ 1e3 keeps log|det| within 1e-11.
			if !near(lj, want, 1e-10) {
				t.Errorf("%s u=%v: logJ=%.15g, log|det J|=%.15g", c.name, u, lj, want)
			}
		}
	}
}

// fdTol: central differences with h = 1e-5·max(1,|u|) have truncation error O(h²) ≈ 1e-10
// and rounding error O(ε/h) ≈ 1e-11 for these smooth maps with O(1)–O(10) derivatives;
// 1e-6 flags any wrong partial and never a right one.
const fdTol = 1e-6

// objective is Σ w_i x_i + log J with distinct weights, so every output's adjoint matters.
func objective(t *ad.Tape, b Bijector, u ad.Var) ad.Var {
	x, lj := b.Forward(t, u)
	w := make([]float64, t.Size(x))
	for i := range w {
		w[i] = 1 + 0.37*float64(i) - 0.05*float64(i*i)
	}
	return t.Add(t.Dot(t.Slice(x, 0, len(w)), t.Const(w...)), lj)
}

func checkFD(t *testing.T, name string, f func(t *ad.Tape, u ad.Var) ad.Var, u []float64) {
	t.Helper()
	var tp ad.Tape
	in := tp.Input(u)
	out := f(&tp, in)
	tp.Backward(out)
	g := append([]float64(nil), tp.Grad(in)...)
	up := append([]float64(nil), u...)
	eval := func() float64 {
		var s ad.Tape
		return s.Float(f(&s, s.Input(up)))
	}
	for i := range u {
		h := 1e-5 * math.Max(1, math.Abs(u[i]))
		up[i] = u[i] + h
		fp := eval()
		up[i] = u[i] - h
		fm := eval()
		up[i] = u[i]
		fd := (fp - fm) / (2 * h)
		if !near(g[i], fd, fdTol) || math.IsNaN(g[i]) {
			t.Errorf("%s at %v: ∂/∂u[%d] = %.12g, finite differences %.12g", name, u, i, g[i], fd)
		}
	}
}

func TestGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range cases() {
		if c.b.FreeSize() == 0 {
			continue
		}
		for range 3 {
			u := randU(r, c.b.FreeSize(), 1.5)
			checkFD(t, c.name, func(t *ad.Tape, v ad.Var) ad.Var { return objective(t, c.b, v) }, u)
		}
	}
}

// TestTails: for |u| up to 700 every transform stays finite where the math allows, with
// finite gradients.
func TestTails(t *testing.T) {
	for _, c := range cases() {
		for _, v := range []float64{-700, -40, 40, 700} {
			u := make([]float64, c.b.FreeSize())
			for i := range u {
				u[i] = v * (1 - 0.01*float64(i)) // e^{700} ≈ 1e304: sums of a few stay finite
			}
			var tp ad.Tape
			in := tp.Input(u)
			x, lj := c.b.Forward(&tp, in)
			for i, xi := range tp.Value(x) {
				if math.IsNaN(xi) || math.IsInf(xi, 0) {
					t.Errorf("%s u=%g: x[%d] = %g", c.name, v, i, xi)
				}
			}
			if l := tp.Float(lj); math.IsNaN(l) || math.IsInf(l, 0) {
				t.Errorf("%s u=%g: logJ = %g", c.name, v, l)
			}
			if c.b.FreeSize() == 0 {
				continue
			}
			tp.Backward(objective(&tp, c.b, in))
			for i, g := range tp.Grad(in) {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Errorf("%s u=%g: gradient[%d] = %g", c.name, v, i, g)
				}
			}
		}
	}
}

func TestSimplexTails(t *testing.T) {
	// u = −700 for every coordinate: x_1 = σ(−700 − log 2) ≈ 4.9e-305 and x_2 ≈ e^{−700} are
	// tiny but representable, x_3 ≈ 1; log space must keep them positive and exact to ~1e-13.
	b := Simplex(3)
	x := make([]float64, 3)
	b.Constrain([]float64{-700, -700}, x)
	// /usr/bin/python3 -c "from mpmath import *; mp.dps=30; print(exp(-700-log(2))/(1+exp(-700-log(2))))"
	want0 := 4.92983827187988542835268647393e-305
	if !near(x[0]/want0, 1, 1e-12) || !(x[1] > 0) || x[2] != 1 {
		t.Errorf("Simplex(3) at u=−700: x = %v, want [%g, ≈%g, 1]", x, want0, want0*2)
	}
	u := make([]float64, 2)
	if err := b.Free(x, u); err != nil || !near(u[0], -700, 1e-12) || !near(u[1], -700, 1e-12) {
		t.Errorf("Simplex(3).Free at the tail: u = %v, err = %v", u, err)
	}
}

// Reference values from Stan's definitions evaluated in 40-digit arithmetic, with log J
// confirmed by the numerical Jacobian determinant:
//
//	/usr/bin/python3 testdata/ref.py   (mpmath 1.2.1, mp.dps = 40), which implements
//	simplex: z = inv_logit(u_k − log(K−k)); x_k = (1 − Σ_{j<k} x_j)·z; x_K = 1 − Σ;
//	         lj = Σ log z + log(1−z) + log(1 − Σ_{j<k} x_j)
//	corr:    Stan Math's cholesky_corr_constrain loop (sum_sqs form) and its lp increments,
//	         plus log|det| of mpmath.diff Jacobians of the strictly lower triangle.
func TestReferenceValues(t *testing.T) {
	x := make([]float64, 4)
	lj := Simplex(4).Constrain([]float64{0.3, -1.2, 2.0}, x)
	wantX := []float64{0.31032244201237045213, 0.090269168710885662347, 0.52795715779038509914, 0.071451231486358786381}
	for i := range x {
		if !near(x[i], wantX[i], 1e-15) {
			t.Errorf("Simplex(4) x[%d] = %.17g, want %.17g", i, x[i], wantX[i])
		}
	}
	if !near(lj, -6.8525829734116704091, 1e-14) {
		t.Errorf("Simplex(4) logJ = %.17g, want -6.8525829734116704091", lj)
	}
	L := make([]float64, 9)
	lj = CholeskyCorr(3).Constrain([]float64{0.5, -0.7, 1.1}, L)
	wantL := []float64{1, 0, 0, 0.4621171572600097585, 0.88681888397007390866, 0, -0.60436777711716349631, 0.63776194135564896447, 0.47749271841645120364}
	for i := range L {
		if !near(L[i], wantL[i], 1e-15) {
			t.Errorf("CholeskyCorr(3) L[%d] = %.17g, want %.17g", i, L[i], wantL[i])
		}
	}
	if !near(lj, -1.945911980409573117, 1e-14) {
		t.Errorf("CholeskyCorr(3) logJ = %.17g, want -1.945911980409573117", lj)
	}
	// The offset log(K−k) makes u = 0 the uniform simplex (exact property of the transform).
	x5 := make([]float64, 5)
	Simplex(5).Constrain(make([]float64, 4), x5)
	for i, v := range x5 {
		if !near(v, 0.2, 1e-15) {
			t.Errorf("Simplex(5) at u=0: x[%d] = %.17g, want 0.2", i, v)
		}
	}
}

func TestReductions(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		b    Bijector
		want string
	}{
		{Interval(2, -inf, inf), "identity[2]"},
		{Interval(2, -inf, 3), "upper[2](3)"},
		{Interval(2, 1, inf), "lower[2](1)"},
		{Lower(1, -inf), "identity[1]"},
		{Upper(1, inf), "identity[1]"},
		{Interval(1, 0, 1), "interval[1](0, 1)"},
	} {
		if got := c.b.(interface{ String() string }).String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestFreeErrors(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		b    Bijector
		x    []float64
		want string
	}{
		{Simplex(3), []float64{0.5, 0.5, 0.2}, "bijector: Simplex.Free: x sums to 1.2"},
		{Simplex(3), []float64{0.5, 0.5, 0}, "x[2] = 0, want > 0"},
		{Simplex(2), []float64{nan, 1}, "x[0] = NaN"},
		{Lower(2, 0), []float64{1, -1}, "bijector: Lower.Free: x[1] = -1, want finite and > 0"},
		{Lower(1, 0), []float64{math.Inf(1)}, "x[0] = +Inf"},
		{Upper(1, 0), []float64{0}, "x[0] = 0, want finite and < 0"},
		{Interval(1, 0, 1), []float64{1}, "x[0] = 1, want in (0, 1)"},
		{Interval(1, 0, 1), []float64{nan}, "x[0] = NaN"},
		{Ordered(3), []float64{0, 2, 2}, "x[2] = 2 ≤ x[1] = 2, want strictly increasing"},
		{PositiveOrdered(2), []float64{-1, 2}, "x[0] = -1, want > 0"},
		{Ordered(2), []float64{-1.7e308, 1.7e308}, "overflows"},
		{Identity(1), []float64{math.Inf(-1)}, "Identity.Free: x[0] = -Inf, want finite"},
		{CholeskyCorr(2), []float64{1, 0, 0.5, 0.5}, "row 1 has squared norm 0.5"},
		{CholeskyCorr(2), []float64{1, 0.1, 0, 1}, "x[0,1] = 0.1 above the diagonal"},
		{CholeskyCorr(2), []float64{1, 0, 1, 0}, "x[1,1] = 0 on the diagonal"},
		{CholeskyCov(2, 2), []float64{1, 0, 3, -2}, "CholeskyCov.Free: x[1,1] = -2 on the diagonal, want > 0"},
	} {
		u := make([]float64, c.b.FreeSize())
		err := c.b.Free(c.x, u)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v.Free(%v) = %v, want error containing %q", c.b, c.x, err, c.want)
		}
	}
}

func TestVarInterval(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	// n = 1 (fused path) and n = 3 with scalar lo / vector hi (composite path).
	for _, n := range []int{1, 3} {
		for range 3 {
			u := randU(r, n, 2)
			lo := []float64{-0.5 + 0.2*r.NormFloat64()}
			hi := make([]float64, n)
			for i := range hi {
				hi[i] = 1 + r.Float64()
			}
			// Value and log J against the float64 form.
			var tp ad.Tape
			x, lj := VarInterval(&tp, tp.Input(u), tp.Input(lo), tp.Input(hi))
			x2 := make([]float64, n)
			lj2 := VarIntervalConstrain(u, lo, hi, x2)
			for i := range x2 {
				if !near(tp.Value(x)[i], x2[i], 1e-14) {
					t.Errorf("n=%d: x[%d] = %.17g, Constrain %.17g", n, i, tp.Value(x)[i], x2[i])
				}
			}
			if !near(tp.Float(lj), lj2, 1e-14) {
				t.Errorf("n=%d: logJ = %.17g, Constrain %.17g", n, tp.Float(lj), lj2)
			}
			// log J = Σ log dx_i/du_i (the Jacobian in u is diagonal for fixed bounds).
			want := 0.0
			for i := range n {
				var s ad.Tape
				in := s.Input(u)
				xv, _ := VarInterval(&s, in, s.Const(lo...), s.Const(hi...))
				s.Backward(s.Index(xv, i))
				want += math.Log(s.Grad(in)[i])
			}
			if !near(lj2, want, 1e-12) {
				t.Errorf("n=%d: logJ = %.15g, Σ log dx/du = %.15g", n, lj2, want)
			}
			// Round trip.
			u2 := make([]float64, n)
			if err := VarIntervalFree(x2, lo, hi, u2); err != nil {
				t.Fatal(err)
			}
			for i := range u {
				if !near(u2[i], u[i], 1e-9) {
					t.Errorf("n=%d: u[%d] = %.17g → %.17g", n, i, u[i], u2[i])
				}
			}
			// Gradient with respect to u, lo and hi together.
			all := append(append(append([]float64(nil), u...), lo...), hi...)
			checkFD(t, "VarInterval", func(t *ad.Tape, v ad.Var) ad.Var {
				x, lj := VarInterval(t, t.Slice(v, 0, n), t.Slice(v, n, n+1), t.Slice(v, n+1, 2*n+1))
				w := make([]float64, n)
				for i := range w {
					w[i] = 1 + 0.3*float64(i)
				}
				return t.Add(t.Dot(x, t.Const(w...)), lj)
			}, all)
		}
	}
	// Empty or reversed bounds give NaN, not a panic; Free reports them.
	var tp ad.Tape
	x, lj := VarInterval(&tp, tp.Input([]float64{0}), tp.Const(1), tp.Const(1))
	if !math.IsNaN(tp.Float(x)) || !math.IsNaN(tp.Float(lj)) {
		t.Errorf("empty interval: x = %g, logJ = %g, want NaN", tp.Float(x), tp.Float(lj))
	}
	if err := VarIntervalFree([]float64{0.5}, []float64{0}, []float64{math.Inf(1)}, make([]float64, 1)); err == nil {
		t.Error("VarIntervalFree with infinite bound: no error")
	}
	if err := VarIntervalFree([]float64{0.7}, []float64{0}, []float64{0.6}, make([]float64, 1)); err == nil ||
		!strings.Contains(err.Error(), "x[0] = 0.7, want in (0, 0.6)") {
		t.Errorf("VarIntervalFree outside: %v", err)
	}
}

// TestForwardAllocs: in steady state a Forward on a reset tape allocates nothing.
func TestForwardAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, c := range cases() {
		var tp ad.Tape
		u := randU(rand.New(rand.NewPCG(1, 1)), c.b.FreeSize(), 1)
		run := func() {
			tp.Reset()
			in := tp.Input(u)
			_, lj := c.b.Forward(&tp, in)
			if !tp.IsConst(lj) {
				tp.Backward(lj)
			}
		}
		run()
		if a := testing.AllocsPerRun(20, run); a != 0 {
			t.Errorf("%s: %v allocations per Forward+Backward", c.name, a)
		}
	}
}

func TestScan(t *testing.T) {
	// Segments [0,3), [3,4), [4,9): prefix sums restart at each segment.
	start := []int{0, 0, 0, 3, 4, 4, 4, 4, 4}
	s := newScan(start)
	var tp ad.Tape
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	got := tp.Value(s.apply(&tp, tp.Input(v), tp.Const(0)))
	want := []float64{1, 3, 6, 4, 5, 11, 18, 26, 35}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("scan = %v, want %v", got, want)
		}
	}
}
