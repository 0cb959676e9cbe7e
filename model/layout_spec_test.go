package model

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
)

// allTransforms is a layout with every transform Spec knows, including dependent bounds that
// are affine in earlier scalars, matrix elements and per-element bounds.
func allTransforms(t *testing.T) *Layout {
	t.Helper()
	lay, err := NewLayout(
		Param{Name: "mu"},
		Param{Name: "sigma", Dims: []int{3}, Constraint: bijector.Lower(3, 0.3)},
		Param{Name: "neg", Dims: []int{2}, Constraint: bijector.Upper(2, -1.5)},
		Param{Name: "p", Dims: []int{2}, Constraint: bijector.Interval(2, -2, 5)},
		Param{Name: "cut", Dims: []int{3}, Constraint: bijector.Ordered(3)},
		Param{Name: "pcut", Dims: []int{3}, Constraint: bijector.PositiveOrdered(3)},
		Param{Name: "w", Dims: []int{4}, Constraint: bijector.Simplex(4)},
		Param{Name: "Lc", Dims: []int{3, 3}, Constraint: bijector.CholeskyCorr(3)},
		Param{Name: "Lv", Dims: []int{3, 2}, Constraint: bijector.CholeskyCov(3, 2)},
		Param{Name: "B", Dims: []int{2, 2}},
		Param{Name: "e", Dims: []int{2}, Constraint: bijector.Identity(2)},
		// Stan: real<lower=0, upper=1 - p[2]/7> beta1 (garch's shape).
		Param{Name: "beta1", Bounds: &Bounds{Lower: []Affine{{}}, Upper: []Affine{{Const: 1, Terms: []Term{{Name: "p[2]", Coef: -1.0 / 7}}}}}},
		// Per-element bounds depending on a matrix element and a scalar.
		Param{Name: "v", Dims: []int{2}, Bounds: &Bounds{
			Lower: []Affine{{Const: -10, Terms: []Term{{Name: "mu", Coef: 1}}}, {Terms: []Term{{Name: "B[2,1]", Coef: 2}}}},
			Upper: []Affine{{Const: 10, Terms: []Term{{Name: "mu", Coef: 1}}}, {Const: 4, Terms: []Term{{Name: "B[2,1]", Coef: 2}}}},
		}},
		// Stan's array[3] simplex[2] and a matrix whose free coordinates are column-major.
		Param{Name: "th", Dims: []int{3, 2}, Constraint: bijector.Repeat(bijector.Simplex(2), 3)},
		Param{Name: "Z", Dims: []int{2, 3}, Constraint: bijector.IdentityColMajor(2, 3)},
	)
	if err != nil {
		t.Fatal(err)
	}
	return lay
}

// TestLayoutSpecRoundTripsEveryTransform: Spec → JSON → LayoutFromSpec gives a layout with the
// same names that constrains bit for bit as the original, on the tape and in float64.
func TestLayoutSpecRoundTripsEveryTransform(t *testing.T) {
	lay := allTransforms(t)
	specs, err := lay.Spec()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"identity", "lower", "upper", "interval", "ordered", "positive_ordered", "simplex",
		"cholesky_factor_corr", "cholesky_factor_cov", "identity", "identity", "affine_interval", "affine_interval",
		"simplex", "identity"}
	for i, s := range specs {
		if s.Transform != want[i] {
			t.Errorf("parameter %s: transform %q, want %q", s.Name, s.Transform, want[i])
		}
	}
	if specs[13].Count != 3 || !specs[14].ColMajor || specs[6].Count != 0 || specs[9].ColMajor {
		t.Errorf("count/col_major: %+v %+v", specs[13], specs[14])
	}
	if *specs[1].Lower != 0.3 || specs[1].Upper != nil || *specs[2].Upper != -1.5 || *specs[3].Lower != -2 || *specs[3].Upper != 5 {
		t.Errorf("bounds not exact: %+v %+v %+v", specs[1], specs[2], specs[3])
	}
	b, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	var back []ParamSpec
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	lay2, err := LayoutFromSpec(back)
	if err != nil {
		t.Fatal(err)
	}
	if lay2.Dim() != lay.Dim() || !slices.Equal(lay2.Names(), lay.Names()) {
		t.Fatalf("rebuilt layout: dim %d names %v, want %d %v", lay2.Dim(), lay2.Names(), lay.Dim(), lay.Names())
	}
	r := rand.New(rand.NewPCG(5, 0))
	x1, x2 := make([]float64, lay.Len()), make([]float64, lay.Len())
	for range 20 {
		z := randZ(r, lay.Dim())
		j1, j2 := lay.ConstrainValues(z, x1), lay2.ConstrainValues(z, x2)
		if math.Float64bits(j1) != math.Float64bits(j2) || !slices.Equal(x1, x2) {
			t.Fatalf("at z=%v: %v %v vs %v %v", z, x1, j1, x2, j2)
		}
		var t1, t2 ad.Tape
		o1, o2 := make([]ad.Var, lay.NumParams()), make([]ad.Var, lay.NumParams())
		l1 := t1.Float(lay.Constrain(&t1, t1.Input(z), o1))
		l2 := t2.Float(lay2.Constrain(&t2, t2.Input(z), o2))
		if math.Float64bits(l1) != math.Float64bits(l2) || math.Abs(l1-j1) > 1e-12*(1+math.Abs(j1)) {
			t.Fatalf("tape log J %v vs %v (float64 %v)", l1, l2, j1)
		}
	}
}

// opaque is a transform from outside package bijector: it cannot describe itself.
type opaque struct{ bijector.Bijector }

func TestLayoutSpecNamesAnUndescribedConstraint(t *testing.T) {
	lay, err := NewLayout(Param{Name: "a"}, Param{Name: "s", Constraint: opaque{bijector.Lower(1, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lay.Spec(); err == nil || !strings.Contains(err.Error(), "parameter s") || !strings.Contains(err.Error(), "Describer") {
		t.Fatalf("error %v, want one naming parameter s and bijector.Describer", err)
	}
}

func TestLayoutFromSpecErrorsNameTheField(t *testing.T) {
	ptr := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		spec ParamSpec
		want string
	}{
		{ParamSpec{Name: "s", Transform: "lower"}, `field "lower": missing`},
		{ParamSpec{Name: "s", Transform: "upper", Upper: ptr(math.NaN())}, `field "upper": NaN`},
		{ParamSpec{Name: "s", Transform: "spline"}, `field "transform": unknown transform "spline"`},
		{ParamSpec{Name: "s", Transform: "interval", Lower: ptr(2), Upper: ptr(1)}, "lower < upper"},
		{ParamSpec{Name: "s", Dims: []int{-1}, Transform: "identity"}, `field "dims"`},
		{ParamSpec{Name: "L", Dims: []int{2, 3}, Transform: "cholesky_factor_corr"}, `field "dims"`},
		{ParamSpec{Name: "w", Dims: []int{0}, Transform: "simplex"}, `field "dims"`},
		{ParamSpec{Name: "w", Dims: []int{3, 2}, Transform: "simplex", Count: 2}, `field "count": 2 copies of dims [3 2], want the product`},
		{ParamSpec{Name: "w", Dims: []int{6}, Transform: "simplex", Count: 3}, `field "count"`},
		{ParamSpec{Name: "w", Dims: []int{2, 3}, Transform: "simplex", Count: -1}, `field "count": -1, want ≥ 0`},
		{ParamSpec{Name: "w", Dims: []int{3, 2}, Transform: "lower", Lower: ptr(0), Count: 3}, `field "count": 3 copies of transform lower`},
		{ParamSpec{Name: "Z", Dims: []int{4}, Transform: "identity", ColMajor: true}, `field "col_major"`},
		{ParamSpec{Name: "b", Transform: "affine_interval", LowerAffine: []Affine{{}},
			UpperAffine: []Affine{{Const: 1, Terms: []Term{{Name: "nope", Coef: 1}}}}}, `field "upper_affine": "nope"`},
		{ParamSpec{Name: "b", Transform: "affine_interval", UpperAffine: []Affine{{}}}, `field "lower_affine": 0 bounds`},
		{ParamSpec{Name: "b", Transform: "affine_interval", LowerAffine: []Affine{{Const: math.Inf(1)}}, UpperAffine: []Affine{{}}}, `field "lower_affine": const +Inf`},
	} {
		_, err := LayoutFromSpec([]ParamSpec{c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "parameter "+c.spec.Name) {
			t.Errorf("%+v: error %v, want one naming the parameter and %s", c.spec, err, c.want)
		}
	}
}

func TestNewLayoutBoundsErrors(t *testing.T) {
	a := func(c float64, name string, coef float64) []Affine {
		return []Affine{{Const: c, Terms: []Term{{Name: name, Coef: coef}}}}
	}
	for _, c := range []struct {
		b    *Bounds
		want string
	}{
		{&Bounds{Lower: a(0, "mu", 1), Upper: a(1, "b", 1)}, `Bounds.Upper[0].Terms[0].Name="b"`},
		{&Bounds{Lower: a(0, "mu", math.NaN()), Upper: a(1, "mu", 1)}, `Bounds.Lower[0].Terms[0].Coef=NaN`},
		{&Bounds{Lower: []Affine{{Const: math.NaN()}}, Upper: a(1, "mu", 1)}, `Bounds.Lower[0].Const=NaN`},
		{&Bounds{Upper: a(1, "mu", 1)}, `field Bounds.Lower: 0 entries, want 1 or 2`},
	} {
		_, err := NewLayout(Param{Name: "mu"}, Param{Name: "b", Dims: []int{2}, Bounds: c.b})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `parameter "b"`) {
			t.Errorf("%+v: error %v, want one naming parameter b and %s", c.b, err, c.want)
		}
	}
}
