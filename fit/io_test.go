package fit

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// allTransforms is a layout with every transform DescribeLayout knows, including dependent
// bounds that are affine in earlier scalars, matrix elements and per-element bounds.
func allTransforms(t *testing.T) *model.Layout {
	t.Helper()
	lay, err := model.NewLayout(
		model.Param{Name: "mu"},
		model.Param{Name: "sigma", Dims: []int{3}, Constraint: bijector.Lower(3, 0.3)},
		model.Param{Name: "neg", Dims: []int{2}, Constraint: bijector.Upper(2, -1.5)},
		model.Param{Name: "p", Dims: []int{2}, Constraint: bijector.Interval(2, -2, 5)},
		model.Param{Name: "cut", Dims: []int{3}, Constraint: bijector.Ordered(3)},
		model.Param{Name: "pcut", Dims: []int{3}, Constraint: bijector.PositiveOrdered(3)},
		model.Param{Name: "w", Dims: []int{4}, Constraint: bijector.Simplex(4)},
		model.Param{Name: "Lc", Dims: []int{3, 3}, Constraint: bijector.CholeskyCorr(3)},
		model.Param{Name: "Lv", Dims: []int{3, 2}, Constraint: bijector.CholeskyCov(3, 2)},
		model.Param{Name: "B", Dims: []int{2, 2}},
		// Stan: real<lower=0, upper=1 - p[2]/7> beta1 (garch's shape).
		model.Param{Name: "beta1", Bounds: func(t *ad.Tape, prev []ad.Var) (lo, hi ad.Var) {
			return t.Const(0), t.AddC(t.MulC(t.Index(prev[3], 1), -1.0/7), 1)
		}},
		// Per-element bounds depending on a matrix element and a scalar.
		model.Param{Name: "v", Dims: []int{2}, Bounds: func(t *ad.Tape, prev []ad.Var) (lo, hi ad.Var) {
			b21 := t.Index(prev[9], 2) // B[2,1], row-major element 2
			lo = t.Concat(t.Sub(prev[0], t.Const(10)), t.MulC(b21, 2))
			hi = t.Concat(t.AddC(prev[0], 10), t.AddC(t.MulC(b21, 2), 4))
			return lo, hi
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return lay
}

func TestDescribeLayoutRoundTripsEveryTransform(t *testing.T) {
	lay := allTransforms(t)
	specs, err := DescribeLayout(lay)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"identity", "lower", "upper", "interval", "ordered", "positive_ordered", "simplex",
		"cholesky_factor_corr", "cholesky_factor_cov", "identity", "affine_interval", "affine_interval"}
	for i, s := range specs {
		if s.Transform != want[i] {
			t.Errorf("parameter %s: transform %q, want %q", s.Name, s.Transform, want[i])
		}
	}
	if *specs[1].Lower != 0.3 || *specs[2].Upper != -1.5 || *specs[3].Lower != -2 || *specs[3].Upper != 5 {
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
	lay2, err := NewLayoutFromSpecs(back)
	if err != nil {
		t.Fatal(err)
	}
	if lay2.Dim() != lay.Dim() || !equalStrings(lay2.Names(), lay.Names()) {
		t.Fatalf("rebuilt layout: dim %d names %v, want %d %v", lay2.Dim(), lay2.Names(), lay.Dim(), lay.Names())
	}
	s := rng.New(5, 0)
	z := make([]float64, lay.Dim())
	x1, x2 := make([]float64, lay.Len()), make([]float64, lay.Len())
	for range 20 {
		for i := range z {
			z[i] = 2 * s.NormFloat64()
		}
		j1, j2 := lay.ConstrainValues(z, x1), lay2.ConstrainValues(z, x2)
		for i := range x1 {
			// The fixed transforms are rebuilt with the same constructors, so they agree bit for
			// bit; the affine bounds are recomputed as const + Σ coef·x, a few ulps away from
			// the original expression (e.g. 1 + (−1/7)·x vs 1 − x/7).
			if d := math.Abs(x1[i] - x2[i]); d > 1e-14*(1+math.Abs(x1[i])) {
				t.Errorf("%s: %v vs %v", lay.Names()[i], x1[i], x2[i])
			}
		}
		if math.Abs(j1-j2) > 1e-12*(1+math.Abs(j1)) {
			t.Errorf("log J %v vs %v", j1, j2)
		}
	}
}

func TestDescribeLayoutRejectsCurvedBounds(t *testing.T) {
	lay, err := model.NewLayout(
		model.Param{Name: "a", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "b", Bounds: func(t *ad.Tape, prev []ad.Var) (lo, hi ad.Var) {
			return t.Const(0), t.Exp(prev[0])
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	_, err = DescribeLayout(lay)
	if err == nil || !strings.Contains(err.Error(), "parameter b") || !strings.Contains(err.Error(), "not affine") {
		t.Fatalf("error %v, want one naming parameter b and saying the bounds are not affine", err)
	}
}

func TestNewLayoutFromSpecsErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		spec ParamSpec
		want string
	}{
		{ParamSpec{Name: "s", Transform: "lower"}, `"lower"`},
		{ParamSpec{Name: "s", Transform: "spline"}, `unknown transform "spline"`},
		{ParamSpec{Name: "s", Transform: "interval", Lower: ptr(2), Upper: ptr(1)}, "lower < upper"},
		{ParamSpec{Name: "L", Dims: []int{2, 3}, Transform: "cholesky_factor_corr"}, `"dims"`},
		{ParamSpec{Name: "b", Transform: "affine_interval", LowerAffine: []AffineBound{{}},
			UpperAffine: []AffineBound{{Const: 1, Terms: []BoundTerm{{Name: "nope", Coef: 1}}}}}, `"nope"`},
	} {
		_, err := NewLayoutFromSpecs([]ParamSpec{c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "parameter "+c.spec.Name) {
			t.Errorf("%+v: error %v, want one naming the parameter and %s", c.spec, err, c.want)
		}
	}
}

func ptr(v float64) *float64 { return &v }
