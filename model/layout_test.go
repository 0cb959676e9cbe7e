package model

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/internal/race"
)

// near reports |a − b| ≤ tol·max(1, |b|).
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// garchBounds is beta1's support (0, 1 − alpha1).
var garchBounds = &Bounds{Lower: []Affine{{Const: 0}}, Upper: []Affine{{Const: 1, Terms: []Term{{Name: "alpha1", Coef: -1}}}}}

// richLayout exercises every kind of parameter: scalars, a dependent interval, a simplex, an
// unconstrained matrix, a correlation Cholesky factor and a 3-d array.
func richLayout(t *testing.T) *Layout {
	t.Helper()
	l, err := NewLayout(
		Param{Name: "mu"},
		Param{Name: "alpha0", Constraint: bijector.Lower(1, 0)},
		Param{Name: "alpha1", Constraint: bijector.Interval(1, 0, 1)},
		Param{Name: "beta1", Bounds: garchBounds},
		Param{Name: "theta", Dims: []int{3}, Constraint: bijector.Simplex(3)},
		Param{Name: "A", Dims: []int{2, 3}},
		Param{Name: "L", Dims: []int{3, 3}, Constraint: bijector.CholeskyCorr(3)},
		Param{Name: "s", Dims: []int{2, 2, 2}, Constraint: bijector.Lower(8, -1)},
	)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNames(t *testing.T) {
	l := richLayout(t)
	want := []string{"mu", "alpha0", "alpha1", "beta1", "theta[1]", "theta[2]", "theta[3]",
		// Stan flattens containers column-major: first index fastest.
		"A[1,1]", "A[2,1]", "A[1,2]", "A[2,2]", "A[1,3]", "A[2,3]",
		"L[1,1]", "L[2,1]", "L[3,1]", "L[1,2]", "L[2,2]", "L[3,2]", "L[1,3]", "L[2,3]", "L[3,3]",
		"s[1,1,1]", "s[2,1,1]", "s[1,2,1]", "s[2,2,1]", "s[1,1,2]", "s[2,1,2]", "s[1,2,2]", "s[2,2,2]"}
	if got := l.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() =\n%v\nwant\n%v", got, want)
	}
	// Free sizes: 1+1+1+1 + 2 (simplex) + 6 + 3 (corr) + 8.
	if l.Dim() != 23 || l.Len() != len(want) || l.NumParams() != 8 {
		t.Errorf("Dim=%d Len=%d NumParams=%d, want 23, %d, 8", l.Dim(), l.Len(), l.NumParams(), len(want))
	}
	if l.Index("L") != 6 || l.Index("nope") != -1 {
		t.Errorf("Index(L)=%d, Index(nope)=%d", l.Index("L"), l.Index("nope"))
	}
}

func TestNewLayoutErrors(t *testing.T) {
	for _, c := range []struct {
		params []Param
		want   string
	}{
		{[]Param{{Name: "a"}, {Name: "a"}}, `parameter "a" declared twice`},
		{[]Param{{Name: ""}}, `invalid name ""`},
		{[]Param{{Name: "theta[1]"}}, `invalid name "theta[1]"`},
		{[]Param{{Name: "x", Dims: []int{3}, Constraint: bijector.Simplex(4)}}, `parameter "x": Dims=[3] hold 3 values, constraint simplex[4] has size 4`},
		{[]Param{{Name: "L", Dims: []int{2}, Constraint: bijector.CholeskyCorr(2)}}, "has size 4"},
		{[]Param{{Name: "x", Dims: []int{2, -1}}}, "negative dimension"},
		{[]Param{{Name: "b", Constraint: bijector.Lower(1, 0), Bounds: garchBounds}}, "both Constraint and Bounds"},
	} {
		_, err := NewLayout(c.params...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "model: NewLayout: ") {
			t.Errorf("NewLayout(%v) error %v, want one containing %q", c.params, err, c.want)
		}
	}
}

// TestMatrixOrder pins the two orders: z and tape nodes are row-major, Names and the flat
// value vectors column-major.
func TestMatrixOrder(t *testing.T) {
	l, err := NewLayout(Param{Name: "A", Dims: []int{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	z := []float64{11, 12, 13, 21, 22, 23} // A[i,j] = 10i + j, row-major
	x := make([]float64, 6)
	l.ConstrainValues(z, x)
	if want := []float64{11, 21, 12, 22, 13, 23}; !slices.Equal(x, want) {
		t.Errorf("ConstrainValues = %v, want %v (column-major)", x, want)
	}
	var tp ad.Tape
	out := make([]ad.Var, 1)
	l.Constrain(&tp, tp.Input(z), out)
	if r, c := tp.Shape(out[0]); r != 2 || c != 3 || !slices.Equal(tp.Value(out[0]), z) {
		t.Errorf("Constrain: %d×%d %v, want 2×3 %v", r, c, tp.Value(out[0]), z)
	}
	z2 := make([]float64, 6)
	if err := l.Free(x, z2); err != nil || !slices.Equal(z2, z) {
		t.Errorf("Free = %v, %v, want %v", z2, err, z)
	}
}

func randZ(r *rand.Rand, n int) []float64 {
	z := make([]float64, n)
	for i := range z {
		z[i] = 1.3 * r.NormFloat64()
	}
	return z
}

func TestLayoutRoundTrip(t *testing.T) {
	l := richLayout(t)
	r := rand.New(rand.NewPCG(1, 2))
	names := l.Names()
	for range 10 {
		z := randZ(r, l.Dim())
		x := make([]float64, l.Len())
		lj := l.ConstrainValues(z, x)

		// The tape gives the same values (row-major per parameter) and log J.
		var tp ad.Tape
		out := make([]ad.Var, l.NumParams())
		ljv := l.Constrain(&tp, tp.Input(z), out)
		var flat []float64
		for i, p := range l.Params() {
			v := tp.Value(out[i])
			perm := colMajorPerm(p.Dims)
			for k := range v {
				if perm == nil {
					flat = append(flat, v[k])
				} else {
					flat = append(flat, v[perm[k]])
				}
			}
		}
		for k := range x {
			// Tape and float64 paths differ only in summation order inside the bijectors.
			if !near(flat[k], x[k], 1e-13) {
				t.Errorf("%s: tape %.17g, ConstrainValues %.17g", names[k], flat[k], x[k])
			}
		}
		if !near(tp.Float(ljv), lj, 1e-13) {
			t.Errorf("log J: tape %.17g, ConstrainValues %.17g", tp.Float(ljv), lj)
		}
		// beta1 ∈ (0, 1 − alpha1).
		if a1, b1 := x[2], x[3]; !(b1 > 0 && b1 < 1-a1) {
			t.Errorf("beta1 = %g outside (0, 1 − alpha1 = %g)", b1, 1-a1)
		}

		z2 := make([]float64, l.Dim())
		if err := l.Free(x, z2); err != nil {
			t.Fatal(err)
		}
		for i := range z {
			// Each bijector's inverse is well conditioned for |z| ≲ 5 (see bijector tests).
			if !near(z2[i], z[i], 1e-9) {
				t.Errorf("z[%d] = %.17g → %.17g", i, z[i], z2[i])
			}
		}
		// FreeNamed from a map keyed by Stan names, with an extra (generated) quantity.
		m := map[string]float64{"lp__": -3}
		for k, n := range names {
			m[n] = x[k]
		}
		z3 := make([]float64, l.Dim())
		if err := l.FreeMap(m, z3); err != nil || !slices.Equal(z3, z2) {
			t.Errorf("FreeMap = %v, %v; want %v", z3, err, z2)
		}
	}
}

func TestFreeErrors(t *testing.T) {
	l := richLayout(t)
	z := make([]float64, l.Dim())
	x := make([]float64, l.Len())
	l.ConstrainValues(z, x)
	names := l.Names()
	idx := func(n string) int { return slices.Index(names, n) }

	bad := slices.Clone(x)
	bad[idx("alpha0")] = -1
	wantErr(t, l.Free(bad, z), "model: Layout.Free: parameter alpha0: bijector: Lower.Free: x[0] = -1, want finite and > 0")

	bad = slices.Clone(x)
	bad[idx("beta1")] = 1 - x[idx("alpha1")] + 0.01
	wantErr(t, l.Free(bad, z), "parameter beta1: bijector: VarInterval.Free", "want in (0, ")

	bad = slices.Clone(x)
	bad[idx("A[2,1]")] = math.NaN()
	wantErr(t, l.Free(bad, z), "parameter A: A[2,1] = NaN, want finite")

	bad = slices.Clone(x)
	bad[idx("L[1,2]")] = 0.5 // above the diagonal (L[1,2] is row 0, column 1)
	wantErr(t, l.Free(bad, z), "parameter L: bijector: CholeskyCorr.Free: x[0,1] = 0.5 above the diagonal")

	m := map[string]float64{}
	for k, n := range names {
		if n != "theta[2]" {
			m[n] = x[k]
		}
	}
	wantErr(t, l.FreeMap(m, z), "model: Layout.FreeNamed: no value for theta[2]")
}

// jacobianLogDet returns log|det ∂x/∂z| for a layout whose transforms are all square.
func jacobianLogDet(l *Layout, z []float64) float64 {
	var tp ad.Tape
	in := tp.Input(z)
	out := make([]ad.Var, l.NumParams())
	l.Constrain(&tp, in, out)
	J := mat.NewDense(l.Dim(), l.Dim(), nil)
	row := 0
	for _, v := range out {
		for k := range tp.Size(v) {
			tp.Backward(tp.Index(v, k))
			for c, g := range tp.Grad(in) {
				J.Set(row, c, g)
			}
			row++
		}
	}
	ld, _ := mat.LogDet(J)
	return ld
}

// TestDependentBoundsJacobian: with beta1 ∈ (0, 1 − alpha1) the map z → x is triangular, and
// the layout's log J must equal log|det ∂x/∂z| of the whole map.
func TestDependentBoundsJacobian(t *testing.T) {
	l, err := NewLayout(
		Param{Name: "mu"},
		Param{Name: "alpha0", Constraint: bijector.Lower(1, 0)},
		Param{Name: "alpha1", Constraint: bijector.Interval(1, 0, 1)},
		Param{Name: "beta1", Bounds: garchBounds},
		// A vector parameter with a shared lower bound mu and per-element upper bounds
		// mu + k·alpha0 + 1 (above mu since alpha0 > 0).
		Param{Name: "v", Dims: []int{3}, Bounds: &Bounds{
			Lower: []Affine{{Terms: []Term{{Name: "mu", Coef: 1}}}},
			Upper: []Affine{
				{Const: 1, Terms: []Term{{Name: "mu", Coef: 1}, {Name: "alpha0", Coef: 1}}},
				{Const: 1, Terms: []Term{{Name: "mu", Coef: 1}, {Name: "alpha0", Coef: 2}}},
				{Const: 1, Terms: []Term{{Name: "mu", Coef: 1}, {Name: "alpha0", Coef: 3}}},
			}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		z := randZ(r, l.Dim())
		var tp ad.Tape
		lj := tp.Float(l.Constrain(&tp, tp.Input(z), make([]ad.Var, l.NumParams())))
		// AD Jacobian entries are exact to rounding; LU of a 7×7 triangular-like matrix keeps
		// log|det| to ≈1e-14.
		if want := jacobianLogDet(l, z); !near(lj, want, 1e-10) {
			t.Errorf("log J = %.15g, log|det ∂x/∂z| = %.15g", lj, want)
		}
		x := make([]float64, l.Len())
		if lj2 := l.ConstrainValues(z, x); !near(lj2, lj, 1e-13) {
			t.Errorf("ConstrainValues log J = %.17g, tape %.17g", lj2, lj)
		}
		z2 := make([]float64, l.Dim())
		if err := l.Free(x, z2); err != nil {
			t.Fatal(err)
		}
		for i := range z {
			if !near(z2[i], z[i], 1e-9) {
				t.Errorf("z[%d] = %.17g → %.17g", i, z[i], z2[i])
			}
		}
	}
}

func TestConstrainValuesAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	l := richLayout(t)
	z := randZ(rand.New(rand.NewPCG(5, 6)), l.Dim())
	x := make([]float64, l.Len())
	z2 := make([]float64, l.Dim())
	l.ConstrainValues(z, x)
	if a := testing.AllocsPerRun(50, func() { l.ConstrainValues(z, x) }); a != 0 {
		t.Errorf("ConstrainValues: %v allocations per call", a)
	}
	if a := testing.AllocsPerRun(50, func() {
		if err := l.Free(x, z2); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Free: %v allocations per call", a)
	}
}

// TestReferenceDraws turns posteriordb reference draws into z with FreeNamed and back: the
// constrained values must come back to rounding. garch11 has the dependent bound,
// hmm_example two simplices and a positive-ordered vector.
func TestReferenceDraws(t *testing.T) {
	dir := posteriordbDir(t)
	layouts := map[string][]Param{
		"garch-garch11": {
			{Name: "mu"},
			{Name: "alpha0", Constraint: bijector.Lower(1, 0)},
			{Name: "alpha1", Constraint: bijector.Interval(1, 0, 1)},
			{Name: "beta1", Bounds: garchBounds},
		},
		"hmm_example-hmm_example": {
			{Name: "theta1", Dims: []int{2}, Constraint: bijector.Simplex(2)},
			{Name: "theta2", Dims: []int{2}, Constraint: bijector.Simplex(2)},
			{Name: "mu", Dims: []int{2}, Constraint: bijector.PositiveOrdered(2)},
		},
	}
	for post, params := range layouts {
		l, err := NewLayout(params...)
		if err != nil {
			t.Fatal(err)
		}
		d, err := LoadDraws(filepath.Join(dir, "draws", post+".json.zip"))
		if err != nil {
			t.Fatal(err)
		}
		row := make([]float64, len(d.Names))
		lookup := func(name string) (float64, bool) {
			p := d.Index(name)
			if p < 0 {
				return 0, false
			}
			return row[p], true
		}
		z := make([]float64, l.Dim())
		x := make([]float64, l.Len())
		for c := range d.Chains {
			for i := 0; i < d.ChainLen(); i += 97 {
				row = d.Row(c, i)
				if err := l.FreeNamed(lookup, z); err != nil {
					t.Fatalf("%s chain %d draw %d: %v", post, c, i, err)
				}
				l.ConstrainValues(z, x)
				for k, n := range l.Names() {
					want, _ := lookup(n)
					// Draws are printed with 15 significant digits, so the simplex sums to 1
					// within ≈1e-15; the round trip renormalises by at most that.
					if !near(x[k], want, 1e-12) {
						t.Errorf("%s chain %d draw %d: %s = %.17g → %.17g", post, c, i, n, want, x[k])
					}
				}
			}
		}
	}
}

// TestDependentBoundsTapeAllocs: recording a layout with a dependent bound on a reused tape
// allocates nothing.
func TestDependentBoundsTapeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	l := richLayout(t)
	z := randZ(rand.New(rand.NewPCG(7, 8)), l.Dim())
	out := make([]ad.Var, l.NumParams())
	var tp ad.Tape
	run := func() {
		tp.Reset()
		l.Constrain(&tp, tp.Input(z), out)
	}
	run()
	if a := testing.AllocsPerRun(50, run); a != 0 {
		t.Errorf("Constrain: %v allocations per call", a)
	}
}
