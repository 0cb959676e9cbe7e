package fit

import (
	"bytes"
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

func TestStanCSVRoundTrip(t *testing.T) {
	c := &StanCSV{
		Comments: []string{"vigo = test", "two\nlines"},
		Names:    []string{"lp__", "lp_approx__", "mu", "theta[1]", "L[2,1]"},
		Values: []float64{
			-1.5, math.Inf(-1), 0.1, 1e-300, math.Copysign(0, -1),
			math.NaN(), 2, math.Inf(1), 123456789.123456789, 5e-324,
		},
	}
	var buf bytes.Buffer
	if err := WriteStanCSV(&buf, c); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"# vigo = test\n", "# two\n# lines\n", "lp__,lp_approx__,mu,theta.1,L.2.1\n", "nan,2,inf,"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	back, err := ReadStanCSV("x.csv", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !equalStrings(back.Names, c.Names) || back.Rows() != 2 || len(back.Comments) != 3 {
		t.Fatalf("names %v rows %d comments %q", back.Names, back.Rows(), back.Comments)
	}
	for i, v := range c.Values {
		if math.Float64bits(v) != math.Float64bits(back.Values[i]) && !(math.IsNaN(v) && math.IsNaN(back.Values[i])) {
			t.Errorf("value %d: %v read back as %v", i, v, back.Values[i])
		}
	}
	if col := back.Column("theta.1"); len(col) != 2 || col[1] != 123456789.123456789 {
		t.Errorf("Column(theta.1) = %v", col)
	}
	_, err = ReadStanCSV("bad.csv", strings.NewReader("# c\na,b\n1,2\n3\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("short row: error %v, want file and line 4", err)
	}
	_, err = ReadStanCSV("bad.csv", strings.NewReader("a,b\n1,x\n"))
	if err == nil || !strings.Contains(err.Error(), "column b") {
		t.Errorf("bad number: error %v, want the column", err)
	}
}

func TestDottedAndBracketNames(t *testing.T) {
	for _, c := range [][2]string{{"mu", "mu"}, {"theta[1]", "theta.1"}, {"L[2,10]", "L.2.10"}, {"lp__", "lp__"}} {
		if got := DottedName(c[0]); got != c[1] {
			t.Errorf("DottedName(%q) = %q, want %q", c[0], got, c[1])
		}
		if got := BracketName(c[1]); got != c[0] {
			t.Errorf("BracketName(%q) = %q, want %q", c[1], got, c[0])
		}
	}
	if got := BracketName("a.b"); got != "a.b" {
		t.Errorf("BracketName(a.b) = %q", got)
	}
}

func FuzzReadStanCSV(f *testing.F) {
	f.Add("# x\na,b.1\n1,2\nnan,-inf\n")
	f.Add("a\n\n1\n")
	f.Add(",\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ReadStanCSV("fuzz", strings.NewReader(s))
		if err != nil {
			return
		}
		if len(c.Values)%len(c.Names) != 0 {
			t.Fatalf("%d values for %d names", len(c.Values), len(c.Names))
		}
	})
}
