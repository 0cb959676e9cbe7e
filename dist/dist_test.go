package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/vigo-bayes/vigo/internal/race"
)

// continuous builds each univariate continuous distribution from its parameters in
// struct-field order.
var continuous = map[string]func(p []float64) Continuous{
	"Normal":       func(p []float64) Continuous { return Normal{p[0], p[1]} },
	"StudentT":     func(p []float64) Continuous { return StudentT{p[0], p[1], p[2]} },
	"Cauchy":       func(p []float64) Continuous { return Cauchy{p[0], p[1]} },
	"Laplace":      func(p []float64) Continuous { return Laplace{p[0], p[1]} },
	"Logistic":     func(p []float64) Continuous { return Logistic{p[0], p[1]} },
	"LogNormal":    func(p []float64) Continuous { return LogNormal{p[0], p[1]} },
	"Exponential":  func(p []float64) Continuous { return Exponential{p[0]} },
	"Gamma":        func(p []float64) Continuous { return Gamma{p[0], p[1]} },
	"InverseGamma": func(p []float64) Continuous { return InverseGamma{p[0], p[1]} },
	"Beta":         func(p []float64) Continuous { return Beta{p[0], p[1]} },
	"Uniform":      func(p []float64) Continuous { return Uniform{p[0], p[1]} },
	"HalfNormal":   func(p []float64) Continuous { return HalfNormal{p[0]} },
	"HalfCauchy":   func(p []float64) Continuous { return HalfCauchy{p[0]} },
	"HalfStudentT": func(p []float64) Continuous { return HalfStudentT{p[0], p[1]} },
}

// near reports |got − want| ≤ tol·max(1, |want|) (relative for large values, absolute near
// zero), with equal infinities accepted.
func near(got, want, tol float64) bool {
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	if math.IsNaN(want) { // a finite difference that left the support: nothing to compare
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestContinuousReference(t *testing.T) {
	for name, rows := range refContinuous {
		mk := continuous[name]
		for _, r := range rows {
			d := mk(r.params)
			// Values: 1e-12 relative. The log densities are a few flops on exact inputs
			// (~1e-15); the CDFs go through erfc, incomplete beta/gamma continued fractions and
			// log1p(−e^v), tested to 1e-11 in internal/mathx but much closer here.
			const tol = 1e-12
			if got := d.LogProb(r.x); !near(got, r.lp, tol) {
				t.Errorf("%s%v.LogProb(%v) = %.17g, want %.17g", name, r.params, r.x, got, r.lp)
			}
			if got, _, _ := d.LogProbPartials(r.x); !near(got, r.lp, tol) {
				t.Errorf("%s%v.LogProbPartials(%v) = %.17g, want %.17g", name, r.params, r.x, got, r.lp)
			}
			if got := d.LogCDF(r.x); !near(got, r.lcdf, 1e-11) {
				t.Errorf("%s%v.LogCDF(%v) = %.17g, want %.17g", name, r.params, r.x, got, r.lcdf)
			}
			if got := d.LogCCDF(r.x); !near(got, r.lccdf, 1e-11) {
				t.Errorf("%s%v.LogCCDF(%v) = %.17g, want %.17g", name, r.params, r.x, got, r.lccdf)
			}
		}
	}
}

// fd returns the central difference (f(x+h) − f(x−h))/2h with h = 1e-6·max(|x|, 0.01), or
// NaN when the stencil leaves the support or crosses 0 (where most supports begin). Its error is about h²|f”'|/6 + ε|f|/h: at most
// ~1e-9 relative to f' at the points used here (the worst is 1e-3 from a support boundary,
// where f”' ~ 2/(1e-3)³ gives h²f”'/6 ≈ 3e-10·f'), so gradients are checked to 1e-6
// (relative above 1, absolute below).
func fd(f func(float64) float64, x float64) float64 {
	h := 1e-6 * math.Max(math.Abs(x), 0.01)
	if x != 0 && (x-h)*(x+h) <= 0 {
		return math.NaN()
	}
	a, b := f(x+h), f(x-h)
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.NaN()
	}
	return (a - b) / (2 * h)
}

const gradTol = 1e-6

// gradPoints are extra (params, x) points for the gradient checks, away from kinks and
// support boundaries, in the body and the tails.
var gradPoints = map[string][][]float64{
	"Normal":       {{0.3, 1.7, -0.4}, {0, 1, -12}, {0, 1, 7}},
	"StudentT":     {{4.5, 0.3, 1.7, -0.4}, {2.2, 0, 1, -60}, {80, 1, 2, 3}, {0.8, 0, 1, 5}},
	"Cauchy":       {{0.3, 1.7, -0.4}, {0, 1, -1e3}},
	"Laplace":      {{0.3, 1.7, -0.4}, {0.3, 1.7, 2.2}},
	"Logistic":     {{0.3, 1.7, -0.4}, {0, 1, 40}},
	"LogNormal":    {{0.3, 1.7, 0.4}, {0, 0.5, 30}},
	"Exponential":  {{1.7, 0.4}, {0.5, 40}},
	"Gamma":        {{2.5, 1.5, 0.8}, {0.4, 2, 0.01}, {30, 2, 25}, {3, 1, 40}},
	"InverseGamma": {{2.5, 1.5, 0.8}, {4, 0.5, 5}, {3, 1, 0.02}},
	"Beta":         {{2.5, 1.5, 0.8}, {0.4, 0.7, 0.01}, {40, 60, 0.55}, {3, 2, 0.999}},
	"Uniform":      {{-1, 2, 0.5}},
	"HalfNormal":   {{1.7, 0.4}, {0.5, 4}},
	"HalfCauchy":   {{1.7, 0.4}, {0.5, 400}},
	"HalfStudentT": {{3.5, 1.7, 0.4}, {10, 0.5, 6}},
}

// checkPartials compares f's analytic partials with central differences in x and in each
// parameter.
func checkPartials(t *testing.T, label string, mk func([]float64) Continuous, p []float64, x float64,
	f func(Continuous, float64) (float64, float64, Partials)) {
	t.Helper()
	v, dx, dp := f(mk(p), x)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return
	}
	val := func(q []float64, y float64) float64 { w, _, _ := f(mk(q), y); return w }
	if want := fd(func(y float64) float64 { return val(p, y) }, x); !near(dx, want, gradTol) {
		t.Errorf("%s%v at x=%v: ∂x = %.12g, finite difference %.12g", label, p, x, dx, want)
	}
	for i := range p {
		q := append([]float64(nil), p...)
		want := fd(func(s float64) float64 { q[i] = s; return val(q, x) }, p[i])
		if !near(dp[i], want, gradTol) {
			t.Errorf("%s%v at x=%v: ∂θ%d = %.12g, finite difference %.12g", label, p, x, i, dp[i], want)
		}
	}
}

func TestContinuousGradients(t *testing.T) {
	for name, mk := range continuous {
		var pts [][]float64
		for _, r := range refContinuous[name] {
			pts = append(pts, append(append([]float64(nil), r.params...), r.x))
		}
		pts = append(pts, gradPoints[name]...)
		for _, pt := range pts {
			p, x := pt[:len(pt)-1], pt[len(pt)-1]
			checkPartials(t, name+".LogProbPartials", mk, p, x, Continuous.LogProbPartials)
			checkPartials(t, name+".LogCDFPartials", mk, p, x, Continuous.LogCDFPartials)
			checkPartials(t, name+".LogCCDFPartials", mk, p, x, Continuous.LogCCDFPartials)
		}
	}
}

// TestNamedGradients checks that the named LogProbGrad forms agree with LogProbPartials.
func TestNamedGradients(t *testing.T) {
	x := 0.7
	check := func(name string, lp, dx float64, dp ...float64) {
		t.Helper()
		d := continuous[name]
		var p []float64
		switch name {
		case "StudentT":
			p = []float64{3.5, 0.2, 1.3}
		case "Exponential", "HalfNormal", "HalfCauchy":
			p = []float64{1.3}
		case "HalfStudentT":
			p = []float64{3.5, 1.3}
		case "Beta", "Gamma", "InverseGamma":
			p = []float64{2.5, 1.3}
		default:
			p = []float64{0.2, 1.3}
		}
		wl, wx, wp := d(p).LogProbPartials(x)
		if lp != wl || dx != wx {
			t.Errorf("%s: LogProbGrad = %v, %v; LogProbPartials = %v, %v", name, lp, dx, wl, wx)
		}
		for i, v := range dp {
			if v != wp[i] {
				t.Errorf("%s: LogProbGrad ∂θ%d = %v, LogProbPartials %v", name, i, v, wp[i])
			}
		}
	}
	{
		lp, dx, a, b := Normal{0.2, 1.3}.LogProbGrad(x)
		check("Normal", lp, dx, a, b)
	}
	{
		lp, dx, a, b, c := StudentT{3.5, 0.2, 1.3}.LogProbGrad(x)
		check("StudentT", lp, dx, a, b, c)
	}
	{
		lp, dx, a, b := Cauchy{0.2, 1.3}.LogProbGrad(x)
		check("Cauchy", lp, dx, a, b)
	}
	{
		lp, dx, a, b := Laplace{0.2, 1.3}.LogProbGrad(x)
		check("Laplace", lp, dx, a, b)
	}
	{
		lp, dx, a, b := Logistic{0.2, 1.3}.LogProbGrad(x)
		check("Logistic", lp, dx, a, b)
	}
	{
		lp, dx, a, b := LogNormal{0.2, 1.3}.LogProbGrad(x)
		check("LogNormal", lp, dx, a, b)
	}
	{
		lp, dx, a := Exponential{1.3}.LogProbGrad(x)
		check("Exponential", lp, dx, a)
	}
	{
		lp, dx, a, b := Gamma{2.5, 1.3}.LogProbGrad(x)
		check("Gamma", lp, dx, a, b)
	}
	{
		lp, dx, a, b := InverseGamma{2.5, 1.3}.LogProbGrad(x)
		check("InverseGamma", lp, dx, a, b)
	}
	{
		lp, dx, a, b := Beta{2.5, 1.3}.LogProbGrad(x)
		check("Beta", lp, dx, a, b)
	}
	{
		lp, dx, a, b := Uniform{0.2, 1.3}.LogProbGrad(x)
		check("Uniform", lp, dx, a, b)
	}
	{
		lp, dx, a := HalfNormal{1.3}.LogProbGrad(x)
		check("HalfNormal", lp, dx, a)
	}
	{
		lp, dx, a := HalfCauchy{1.3}.LogProbGrad(x)
		check("HalfCauchy", lp, dx, a)
	}
	{
		lp, dx, a, b := HalfStudentT{3.5, 1.3}.LogProbGrad(x)
		check("HalfStudentT", lp, dx, a, b)
	}
}

func TestInvalidParameters(t *testing.T) {
	// Invalid parameters give NaN, outcomes outside the support −Inf (package doc).
	nan := []Continuous{
		Normal{0, -1}, Normal{0, 0}, StudentT{0, 0, 1}, StudentT{3, 0, -1}, Cauchy{0, -1},
		Laplace{0, -1}, Logistic{0, -2}, LogNormal{0, -1}, Exponential{-1}, Gamma{-1, 1},
		Gamma{1, 0}, InverseGamma{1, -1}, Beta{0, 1}, Uniform{1, 1}, HalfNormal{-1},
		HalfCauchy{-1}, HalfStudentT{-1, 1}, Normal{math.NaN(), 1},
	}
	for _, d := range nan {
		if v := d.LogProb(0.5); !math.IsNaN(v) {
			t.Errorf("%#v.LogProb(0.5) = %v, want NaN", d, v)
		}
		if v, _, _ := d.LogProbPartials(0.5); !math.IsNaN(v) {
			t.Errorf("%#v.LogProbPartials(0.5) = %v, want NaN", d, v)
		}
		if v := d.LogCDF(0.5); !math.IsNaN(v) {
			t.Errorf("%#v.LogCDF(0.5) = %v, want NaN", d, v)
		}
		if v := d.LogCCDF(0.5); !math.IsNaN(v) {
			t.Errorf("%#v.LogCCDF(0.5) = %v, want NaN", d, v)
		}
	}
	out := []struct {
		d Continuous
		x float64
	}{
		{LogNormal{0, 1}, -1}, {Exponential{1}, -1}, {Gamma{2, 1}, -1}, {InverseGamma{2, 1}, 0},
		{Beta{2, 2}, 1.5}, {Uniform{0, 1}, 2}, {HalfNormal{1}, -1}, {HalfCauchy{1}, -1},
		{HalfStudentT{3, 1}, -1}, {truncAsContinuous{Truncated[Continuous]{Normal{0, 1}, 0, 1}}, 2},
	}
	for _, c := range out {
		if v := c.d.LogProb(c.x); !math.IsInf(v, -1) {
			t.Errorf("%#v.LogProb(%v) = %v, want -Inf", c.d, c.x, v)
		}
	}
	// Boundary conventions: 0·log 0 = 0.
	if v := (Gamma{1, 2}).LogProb(0); !near(v, math.Log(2), 1e-15) {
		t.Errorf("Gamma{1,2}.LogProb(0) = %v, want log 2", v)
	}
	if v := (Beta{1, 3}).LogProb(0); !near(v, math.Log(3), 1e-15) {
		t.Errorf("Beta{1,3}.LogProb(0) = %v, want log 3", v)
	}
	if v := (BinomialLogit{-1, 0}).LogProb(0); !math.IsNaN(v) {
		t.Errorf("BinomialLogit{N=-1}.LogProb = %v, want NaN", v)
	}
	if v := (NegBinomial2{1, -1}).LogProb(0); !math.IsNaN(v) {
		t.Errorf("NegBinomial2{phi=-1}.LogProb = %v, want NaN", v)
	}
	for _, v := range []float64{(PoissonLog{1}).LogProb(-1), (BinomialLogit{3, 0}).LogProb(4),
		(BernoulliLogit{0}).LogProb(2), (CategoricalLogit{[]float64{1, 2}}).LogProb(2),
		(Dirichlet{[]float64{1, 2}}).LogProb([]float64{-0.1, 1.1})} {
		if !math.IsInf(v, -1) {
			t.Errorf("out-of-support discrete/multivariate log density = %v, want -Inf", v)
		}
	}
	if v := (LKJCholesky{0}).LogProb([]float64{1, 0, 0, 1}); !math.IsNaN(v) {
		t.Errorf("LKJCholesky{0}.LogProb = %v, want NaN", v)
	}
	if v := (MultiNormalCholesky{[]float64{0}, []float64{-1}}).LogProb([]float64{0}); !math.IsNaN(v) {
		t.Errorf("MultiNormalCholesky with L_00 = -1: %v, want NaN", v)
	}
}

// TestHalfIsTruncated checks the half forms against the generic truncation of the full
// distribution at 0 (same density, normaliser log ½ with zero parameter partials).
func TestHalfIsTruncated(t *testing.T) {
	cases := []struct {
		half, full Continuous
		map1       func(Partials) Partials // full-distribution partials → half partials
	}{
		{HalfNormal{1.7}, Normal{0, 1.7}, func(p Partials) Partials { return Partials{p[1]} }},
		{HalfCauchy{1.7}, Cauchy{0, 1.7}, func(p Partials) Partials { return Partials{p[1]} }},
		{HalfStudentT{3.5, 1.7}, StudentT{3.5, 0, 1.7}, func(p Partials) Partials { return Partials{p[0], p[2]} }},
	}
	for _, c := range cases {
		for _, x := range []float64{0.1, 1.3, 25} {
			hl, hdx, hdp := c.half.LogProbPartials(x)
			var tl, tdx float64
			var tdp Partials
			switch d := c.full.(type) {
			case Normal:
				tl, tdx, tdp = Truncated[Normal]{d, 0, math.Inf(1)}.LogProbPartials(x)
			case Cauchy:
				tl, tdx, tdp = Truncated[Cauchy]{d, 0, math.Inf(1)}.LogProbPartials(x)
			case StudentT:
				tl, tdx, tdp = Truncated[StudentT]{d, 0, math.Inf(1)}.LogProbPartials(x)
			}
			tdp = c.map1(tdp)
			// 1e-12: the truncated normaliser log(1 − F(0)) = log ½ is computed through the
			// CDF code (erfc / atan / incomplete beta), exact to a few ulps.
			if !near(hl, tl, 1e-12) || !near(hdx, tdx, 1e-12) || !near(hdp[0], tdp[0], 1e-12) || !near(hdp[1], tdp[1], 1e-12) {
				t.Errorf("%#v at %v: half %v %v %v, truncated %v %v %v", c.half, x, hl, hdx, hdp, tl, tdx, tdp)
			}
			if hc, tc := c.half.LogCCDF(x), c.full.LogCCDF(x)+math.Ln2; !near(hc, tc, 1e-12) {
				t.Errorf("%#v.LogCCDF(%v) = %v, want 2·(1−F) = %v", c.half, x, hc, tc)
			}
		}
	}
}

func TestTruncated(t *testing.T) {
	inf := math.Inf(1)
	// Normaliser values from mpmath:
	//	/usr/bin/python3 -c "import mpmath as mp; mp.mp.dps=30; f=lambda x: mp.ncdf((x-0.5)/2); print(mp.log(f(3)-f(-1)), mp.log(mp.ncdf(-(40-0.5)/2)), mp.log(f(-30)-f(-31)))"
	want := []struct {
		d    Truncated[Normal]
		logZ float64
	}{
		{Truncated[Normal]{Normal{0.5, 2}, -1, 3}, -0.40388205087032923059},
		{Truncated[Normal]{Normal{0.5, 2}, 40, inf}, -198.93588948907094978},
		{Truncated[Normal]{Normal{0.5, 2}, -31, -30}, -119.92943994889890813},
	}
	for _, w := range want {
		// 1e-12: log Φ is accurate to ~1e-15 relative; the difference of two tail masses in
		// log space (log1mexp) keeps that.
		if got := w.d.LogNormalizer(); !near(got, w.logZ, 1e-12) {
			t.Errorf("%+v.LogNormalizer() = %.17g, want %.17g", w.d, got, w.logZ)
		}
	}
	// Gradients of the normaliser in the parameters and bounds, and of the truncated density,
	// against central differences, for several families and bound patterns.
	type tcase struct {
		name   string
		mk     func([]float64) Continuous
		p      []float64
		lo, hi float64
		x      float64
	}
	cases := []tcase{
		{"Normal", continuous["Normal"], []float64{0.5, 2}, -1, 3, 0.3},
		{"Normal", continuous["Normal"], []float64{0.5, 2}, 20, inf, 21},
		{"Normal", continuous["Normal"], []float64{0.5, 2}, math.Inf(-1), -20, -21},
		{"StudentT", continuous["StudentT"], []float64{3.5, 0.5, 2}, -1, 3, 0.3},
		{"StudentT", continuous["StudentT"], []float64{3.5, 0.5, 2}, 0, inf, 1},
		{"Gamma", continuous["Gamma"], []float64{2.5, 1.5}, 0.5, 3, 1},
		{"Gamma", continuous["Gamma"], []float64{2.5, 1.5}, 6, inf, 7},
		{"InverseGamma", continuous["InverseGamma"], []float64{2.5, 1.5}, 0.5, 3, 1},
		{"Beta", continuous["Beta"], []float64{2.5, 1.5}, 0.1, 0.9, 0.5},
		{"Beta", continuous["Beta"], []float64{2.5, 1.5}, 0.95, 0.99, 0.97},
		{"Cauchy", continuous["Cauchy"], []float64{0.5, 2}, -1, 300, 0.3},
		{"Laplace", continuous["Laplace"], []float64{0.5, 2}, 1, 3, 2},
		{"Logistic", continuous["Logistic"], []float64{0.5, 2}, -1, 3, 0.3},
		{"LogNormal", continuous["LogNormal"], []float64{0.5, 2}, 1, 30, 3},
		{"Exponential", continuous["Exponential"], []float64{1.5}, 0.5, 3, 1},
		{"Uniform", continuous["Uniform"], []float64{-1, 5}, 0.5, 3, 1},
	}
	trunc := func(c tcase, p []float64, lo, hi float64) (lz float64, dp Partials, dlo, dhi float64) {
		return Truncated[Continuous]{c.mk(p), lo, hi}.LogNormalizerPartials()
	}
	for _, c := range cases {
		lz, dp, dlo, dhi := trunc(c, c.p, c.lo, c.hi)
		lzOf := func(p []float64, lo, hi float64) float64 { v, _, _, _ := trunc(c, p, lo, hi); return v }
		for i := range c.p {
			q := append([]float64(nil), c.p...)
			want := fd(func(s float64) float64 { q[i] = s; return lzOf(q, c.lo, c.hi) }, c.p[i])
			if !near(dp[i], want, gradTol) {
				t.Errorf("%s%v T[%v,%v]: ∂logZ/∂θ%d = %.10g, finite difference %.10g", c.name, c.p, c.lo, c.hi, i, dp[i], want)
			}
		}
		if !math.IsInf(c.lo, 0) {
			if want := fd(func(s float64) float64 { return lzOf(c.p, s, c.hi) }, c.lo); !near(dlo, want, gradTol) {
				t.Errorf("%s%v T[%v,%v]: ∂logZ/∂L = %.10g, finite difference %.10g", c.name, c.p, c.lo, c.hi, dlo, want)
			}
		}
		if !math.IsInf(c.hi, 0) {
			if want := fd(func(s float64) float64 { return lzOf(c.p, c.lo, s) }, c.hi); !near(dhi, want, gradTol) {
				t.Errorf("%s%v T[%v,%v]: ∂logZ/∂U = %.10g, finite difference %.10g", c.name, c.p, c.lo, c.hi, dhi, want)
			}
		}
		// The truncated density: value and parameter partials.
		mkT := func(p []float64) Continuous { return truncAsContinuous{Truncated[Continuous]{c.mk(p), c.lo, c.hi}} }
		checkPartials(t, "Truncated "+c.name, mkT, c.p, c.x, Continuous.LogProbPartials)
		if got, want := mkT(c.p).LogProb(c.x), c.mk(c.p).LogProb(c.x)-lz; !near(got, want, 1e-14) {
			t.Errorf("Truncated %s: LogProb %v, want %v", c.name, got, want)
		}
	}
	if v := (Truncated[Normal]{Normal{0, 1}, 2, 1}).LogNormalizer(); !math.IsNaN(v) {
		t.Errorf("Truncated with Lower > Upper: log Z = %v, want NaN", v)
	}
}

// truncAsContinuous adapts Truncated to Continuous for checkPartials (only LogProb and
// LogProbPartials are used).
type truncAsContinuous struct{ Truncated[Continuous] }

func (truncAsContinuous) LogCDF(float64) float64  { panic("unused") }
func (truncAsContinuous) LogCCDF(float64) float64 { panic("unused") }
func (truncAsContinuous) LogCDFPartials(float64) (float64, float64, Partials) {
	panic("unused")
}
func (truncAsContinuous) LogCCDFPartials(float64) (float64, float64, Partials) {
	panic("unused")
}

func TestDiscreteReference(t *testing.T) {
	for name, rows := range refDiscrete {
		for _, r := range rows {
			p := r.params
			var got float64
			switch name {
			case "BernoulliLogit":
				got = BernoulliLogit{p[0]}.LogProb(r.k)
			case "BinomialLogit":
				got = BinomialLogit{int(p[0]), p[1]}.LogProb(r.k)
			case "PoissonLog":
				got = PoissonLog{p[0]}.LogProb(r.k)
			case "NegBinomial2":
				got = NegBinomial2{p[0], p[1]}.LogProb(r.k)
			case "NegBinomial2Log":
				got = NegBinomial2Log{p[0], p[1]}.LogProb(r.k)
			default:
				t.Fatalf("no case for %s", name)
			}
			// 1e-12 relative: lgamma and log1p(e^x) are accurate to a few ulps; the NB2
			// log-gamma difference uses Stirling's series for φ = 1e8 (plain lgamma
			// differences would lose 8 digits there).
			if !near(got, r.lp, 1e-12) {
				t.Errorf("%s%v.LogProb(%d) = %.17g, want %.17g", name, p, r.k, got, r.lp)
			}
		}
	}
}

func TestDiscreteGradients(t *testing.T) {
	for _, eta := range []float64{-3, 0.4, 8} {
		for _, k := range []int{0, 1} {
			_, d := BernoulliLogit{eta}.LogProbGrad(k)
			if w := fd(func(e float64) float64 { return BernoulliLogit{e}.LogProb(k) }, eta); !near(d, w, gradTol) {
				t.Errorf("BernoulliLogit{%v}(%d): ∂η = %v, fd %v", eta, k, d, w)
			}
		}
		for _, k := range []int{0, 3, 20} {
			_, d := BinomialLogit{20, eta}.LogProbGrad(k)
			if w := fd(func(e float64) float64 { return BinomialLogit{20, e}.LogProb(k) }, eta); !near(d, w, gradTol) {
				t.Errorf("BinomialLogit{20,%v}(%d): ∂η = %v, fd %v", eta, k, d, w)
			}
			_, d = PoissonLog{eta}.LogProbGrad(k)
			if w := fd(func(e float64) float64 { return PoissonLog{e}.LogProb(k) }, eta); !near(d, w, gradTol) {
				t.Errorf("PoissonLog{%v}(%d): ∂η = %v, fd %v", eta, k, d, w)
			}
		}
	}
	for _, mp := range [][2]float64{{3, 2}, {0.5, 0.1}, {100, 1e4}, {20, 1e-3}, {7, 40}} {
		for _, k := range []int{0, 4, 90} {
			mu, phi := mp[0], mp[1]
			_, dmu, dphi := NegBinomial2{mu, phi}.LogProbGrad(k)
			if w := fd(func(m float64) float64 { return NegBinomial2{m, phi}.LogProb(k) }, mu); !near(dmu, w, gradTol) {
				t.Errorf("NegBinomial2{%v,%v}(%d): ∂μ = %v, fd %v", mu, phi, k, dmu, w)
			}
			if w := fd(func(f float64) float64 { return NegBinomial2{mu, f}.LogProb(k) }, phi); !near(dphi, w, gradTol) {
				t.Errorf("NegBinomial2{%v,%v}(%d): ∂φ = %v, fd %v", mu, phi, k, dphi, w)
			}
			eta := math.Log(mu)
			lp, deta, dphi2 := NegBinomial2Log{eta, phi}.LogProbGrad(k)
			if !near(lp, NegBinomial2{mu, phi}.LogProb(k), 1e-12) {
				t.Errorf("NegBinomial2Log{%v,%v}(%d) = %v, NegBinomial2 %v", eta, phi, k, lp, NegBinomial2{mu, phi}.LogProb(k))
			}
			if w := fd(func(e float64) float64 { return NegBinomial2Log{e, phi}.LogProb(k) }, eta); !near(deta, w, gradTol) {
				t.Errorf("NegBinomial2Log{%v,%v}(%d): ∂η = %v, fd %v", eta, phi, k, deta, w)
			}
			if w := fd(func(f float64) float64 { return NegBinomial2Log{eta, f}.LogProb(k) }, phi); !near(dphi2, w, gradTol) {
				t.Errorf("NegBinomial2Log{%v,%v}(%d): ∂φ = %v, fd %v", eta, phi, k, dphi2, w)
			}
		}
	}
}

// fdSlice checks analytic partials g of f at x (in place perturbation) by central differences.
func fdSlice(t *testing.T, label string, f func([]float64) float64, x, g []float64, skip func(i int) bool) {
	t.Helper()
	for i := range x {
		if skip != nil && skip(i) {
			continue
		}
		x0 := x[i]
		w := fd(func(s float64) float64 { x[i] = s; return f(x) }, x0)
		x[i] = x0
		if !near(g[i], w, gradTol) {
			t.Errorf("%s: ∂[%d] = %.12g, finite difference %.12g", label, i, g[i], w)
		}
	}
}

func TestMultivariate(t *testing.T) {
	eta := []float64{0.5, -1, 2, 0}
	deta := make([]float64, 4)
	for y, want := range refCategorical {
		d := CategoricalLogit{eta}
		// 1e-14: one logsumexp over four terms.
		if got := d.LogProb(y); !near(got, want, 1e-14) {
			t.Errorf("CategoricalLogit.LogProb(%d) = %v, want %v", y, got, want)
		}
		d.LogProbGrad(deta, y)
		fdSlice(t, fmt.Sprintf("CategoricalLogit(%d)", y), func(e []float64) float64 { return CategoricalLogit{e}.LogProb(y) }, eta, deta, nil)
	}

	alpha := []float64{0.5, 2, 3.5}
	theta := []float64{0.2, 0.3, 0.5}
	dth, dal := make([]float64, 3), make([]float64, 3)
	lp := Dirichlet{alpha}.LogProbGrad(dth, dal, theta)
	// 1e-13: three lgammas, exact to a few ulps.
	if !near(lp, refDirichlet, 1e-13) {
		t.Errorf("Dirichlet.LogProb = %.17g, want %.17g", lp, refDirichlet)
	}
	fdSlice(t, "Dirichlet ∂θ", func(th []float64) float64 { return Dirichlet{alpha}.LogProb(th) }, theta, dth, nil)
	fdSlice(t, "Dirichlet ∂α", func(a []float64) float64 { return Dirichlet{a}.LogProb(theta) }, alpha, dal, nil)

	mu := []float64{0.5, -1, 2}
	L := []float64{1.5, 0, 0, 0.3, 0.8, 0, -0.4, 0.2, 2.0}
	y := []float64{1, 0.5, -1}
	dy, dmu, dL := make([]float64, 3), make([]float64, 3), make([]float64, 9)
	mvn := MultiNormalCholesky{mu, L}
	lp = mvn.LogProbGrad(dy, dmu, dL, y)
	// 1e-13: a 3×3 triangular solve and three logs.
	if !near(lp, refMultiNormal, 1e-13) || !near(mvn.LogProb(y), refMultiNormal, 1e-13) {
		t.Errorf("MultiNormalCholesky.LogProb = %.17g / %.17g, want %.17g", lp, mvn.LogProb(y), refMultiNormal)
	}
	fdSlice(t, "MultiNormalCholesky ∂y", func(v []float64) float64 { return MultiNormalCholesky{mu, L}.LogProb(v) }, y, dy, nil)
	fdSlice(t, "MultiNormalCholesky ∂μ", func(v []float64) float64 { return MultiNormalCholesky{v, L}.LogProb(y) }, mu, dmu, nil)
	fdSlice(t, "MultiNormalCholesky ∂L", func(v []float64) float64 { return MultiNormalCholesky{mu, v}.LogProb(y) }, L, dL,
		func(i int) bool { return i%3 > i/3 })

	// LKJ: normaliser against Lewandowski et al.'s formula (a different closed form).
	for _, r := range refLKJNorm {
		lc, _ := LKJCholesky{r[1]}.LogNormalizer(int(r[0]))
		// 1e-12: sums of K lgammas of moderate arguments.
		if !near(lc, r[2], 1e-12) {
			t.Errorf("LKJCholesky{%v}.LogNormalizer(%v) = %.17g, want %.17g", r[1], r[0], lc, r[2])
		}
	}
	// K = 3, η = 1: the volume of 3×3 correlation matrices is π²/2 (Rousseeuw & Molenberghs 1994).
	if lc, _ := (LKJCholesky{1}).LogNormalizer(3); !near(lc, math.Log(math.Pi*math.Pi/2), 1e-14) {
		t.Errorf("LKJ volume K=3: %v, want log(π²/2)", lc)
	}
	Lc := make([]float64, 16)
	LKJCholesky{2}.Rand(Lc, rand.New(rand.NewPCG(1, 2)))
	dLc := make([]float64, 16)
	lp, de := LKJCholesky{1.7}.LogProbGrad(dLc, Lc)
	if w := fd(func(e float64) float64 { return LKJCholesky{e}.LogProb(Lc) }, 1.7); !near(de, w, gradTol) {
		t.Errorf("LKJCholesky ∂η = %v, fd %v", de, w)
	}
	fdSlice(t, "LKJCholesky ∂L", func(v []float64) float64 { return LKJCholesky{1.7}.LogProb(v) }, Lc, dLc,
		func(i int) bool { return i%4 != i/4 })
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		t.Errorf("LKJCholesky.LogProb of a draw = %v", lp)
	}
}

func TestWrongLengthPanics(t *testing.T) {
	cases := map[string]func(){
		"Dirichlet.LogProbGrad: len(theta)=2, want 3": func() { Dirichlet{[]float64{1, 2, 3}}.LogProb([]float64{0.5, 0.5}) },
		"MultiNormalCholesky.LogProb: len(L)=3, want 4": func() {
			MultiNormalCholesky{[]float64{0, 0}, []float64{1, 0, 1}}.LogProb([]float64{0, 0})
		},
		"LKJCholesky.LogProbGrad: len(L)=3 is not a square K×K": func() { LKJCholesky{1}.LogProb([]float64{1, 0, 1}) },
		"CategoricalLogit.LogProbGrad: len(deta)=1, want 2":     func() { CategoricalLogit{[]float64{0, 0}}.LogProbGrad(make([]float64, 1), 0) },
	}
	for msg, f := range cases {
		func() {
			defer func() {
				if r := recover(); r != "dist: "+msg {
					t.Errorf("panic %q, want %q", r, "dist: "+msg)
				}
			}()
			f()
		}()
	}
}

func TestNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	r := rand.New(rand.NewPCG(1, 1))
	eta := []float64{0.1, 0.2, 0.3}
	d3 := make([]float64, 3)
	L := []float64{1, 0, 0, 0.3, 0.9, 0, 0.1, 0.2, 1.1}
	d9 := make([]float64, 9)
	s := 0.0
	n := testing.AllocsPerRun(50, func() {
		_, a, b, c := Normal{0, 1}.LogProbGrad(0.3)
		s += a + b + c + StudentT{3, 0, 1}.LogCDF(0.4) + Gamma{2, 1}.LogCCDF(3) + Gamma{2, 1}.Rand(r)
		s += Beta{0.5, 0.5}.Rand(r) + float64(PoissonLog{5}.Rand(r)) + float64(BinomialLogit{100, 0}.Rand(r))
		s += CategoricalLogit{eta}.LogProbGrad(d3, 1) + Dirichlet{eta}.LogProbGrad(d3, nil, []float64{0.2, 0.3, 0.5})
		s += MultiNormalCholesky{eta, L}.LogProbGrad(d3, nil, d9, eta)
		lp, _ := LKJCholesky{2}.LogProbGrad(d9, L)
		s += lp + Truncated[Normal]{Normal{0, 1}, -1, 2}.LogProb(0.5)
		Dirichlet{eta}.Rand(d3, r)
		LKJCholesky{2}.Rand(d9, r)
	})
	if n != 0 {
		t.Errorf("allocations per call: %v, want 0", n)
	}
	_ = s
}

// moments returns the sample mean, its Monte Carlo standard error, the sample variance and
// the MCSE of the variance estimate, sqrt((m₄ − v²)/n), for independent draws.
func moments(x []float64) (m, seM, v, seV float64) {
	n := float64(len(x))
	for _, xi := range x {
		m += xi
	}
	m /= n
	m4 := 0.0
	for _, xi := range x {
		d := (xi - m) * (xi - m)
		v += d
		m4 += d * d
	}
	v /= n
	m4 /= n
	return m, math.Sqrt(v / n), v, math.Sqrt((m4 - v*v) / n)
}

// The sampler tests draw n independent variates with a fixed seed and require the sample
// mean and variance within 5 Monte Carlo standard errors of the exact moments, and the
// empirical CDF at three points within 5 binomial standard errors of exp(LogCDF). For a
// correct sampler each check fails with probability ≈ 6e-7 (normal tail beyond 5σ), and the
// seeds are fixed, so the test is deterministic; a wrong variance or shape moves the
// statistic by many standard errors at n = 20000.
const nDraws = 20000

type momenter interface {
	Continuous
	Mean() float64
	Variance() float64
}

func TestContinuousSamplers(t *testing.T) {
	ds := []Continuous{
		Normal{1, 2}, StudentT{10, 1, 2}, Cauchy{1, 2}, Laplace{1, 2}, Logistic{1, 2},
		LogNormal{0.2, 0.5}, Exponential{2}, Gamma{2.5, 2}, Gamma{0.3, 1}, InverseGamma{6, 2},
		Beta{2, 3}, Beta{0.3, 0.6}, Uniform{-1, 3}, HalfNormal{2}, HalfCauchy{2}, HalfStudentT{10, 2},
	}
	x := make([]float64, nDraws)
	for i, d := range ds {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		for j := range x {
			x[j] = d.Rand(r)
		}
		if mm, ok := d.(momenter); ok && !math.IsInf(mm.Variance(), 0) && !math.IsNaN(mm.Variance()) {
			m, seM, v, seV := moments(x)
			if math.Abs(m-mm.Mean()) > 5*seM {
				t.Errorf("%#v: sample mean %v, want %v ± 5·%v", d, m, mm.Mean(), seM)
			}
			if math.Abs(v-mm.Variance()) > 5*seV {
				t.Errorf("%#v: sample variance %v, want %v ± 5·%v", d, v, mm.Variance(), seV)
			}
		}
		sort.Float64s(x)
		for _, q := range []float64{0.1, 0.5, 0.9} {
			xq := x[int(q*nDraws)]
			p := math.Exp(d.LogCDF(xq))
			emp := float64(sort.SearchFloat64s(x, xq)) / nDraws
			se := math.Sqrt(p * (1 - p) / nDraws)
			if math.Abs(emp-p) > 5*se {
				t.Errorf("%#v: empirical CDF at %v = %v, LogCDF gives %v ± 5·%v", d, xq, emp, p, se)
			}
		}
	}
	// Truncated by rejection: empirical CDF against (F(x) − F(L))/Z.
	tr := Truncated[Normal]{Normal{0, 1}, -0.5, 2}
	r := rand.New(rand.NewPCG(99, 1))
	for j := range x {
		x[j] = tr.Rand(r)
	}
	sort.Float64s(x)
	for _, q := range []float64{0.1, 0.5, 0.9} {
		xq := x[int(q*nDraws)]
		p := (math.Exp(tr.Dist.LogCDF(xq)) - math.Exp(tr.Dist.LogCDF(-0.5))) / math.Exp(tr.LogNormalizer())
		emp := float64(sort.SearchFloat64s(x, xq)) / nDraws
		if se := math.Sqrt(p * (1 - p) / nDraws); math.Abs(emp-p) > 5*se {
			t.Errorf("Truncated Normal: empirical CDF at %v = %v, want %v ± 5·%v", xq, emp, p, se)
		}
	}
}

func TestDiscreteSamplers(t *testing.T) {
	type dcase struct {
		name     string
		draw     func(*rand.Rand) int
		mean, vr float64
	}
	lg := func(e float64) float64 { return 1 / (1 + math.Exp(-e)) }
	cases := []dcase{
		{"BernoulliLogit{0.7}", BernoulliLogit{0.7}.Rand, lg(0.7), lg(0.7) * (1 - lg(0.7))},
		{"BinomialLogit{10,-0.4}", BinomialLogit{10, -0.4}.Rand, 10 * lg(-0.4), 10 * lg(-0.4) * (1 - lg(-0.4))},
		{"BinomialLogit{5000,1.2}", BinomialLogit{5000, 1.2}.Rand, 5000 * lg(1.2), 5000 * lg(1.2) * (1 - lg(1.2))},
		{"PoissonLog{log 3}", PoissonLog{math.Log(3)}.Rand, 3, 3},
		{"PoissonLog{log 700}", PoissonLog{math.Log(700)}.Rand, 700, 700},
		{"NegBinomial2{12, 3}", NegBinomial2{12, 3}.Rand, 12, 12 + 144.0/3},
		{"NegBinomial2Log{log 5, 50}", NegBinomial2Log{math.Log(5), 50}.Rand, 5, 5 + 25.0/50},
	}
	x := make([]float64, nDraws)
	for i, c := range cases {
		r := rand.New(rand.NewPCG(uint64(i), 11))
		for j := range x {
			x[j] = float64(c.draw(r))
		}
		m, seM, v, seV := moments(x)
		if math.Abs(m-c.mean) > 5*seM || math.Abs(v-c.vr) > 5*seV {
			t.Errorf("%s: mean %v (want %v ± 5·%v), variance %v (want %v ± 5·%v)", c.name, m, c.mean, seM, v, c.vr, seV)
		}
	}
	// Categorical frequencies against softmax.
	eta := []float64{0.5, -1, 2, 0}
	counts := make([]float64, 4)
	r := rand.New(rand.NewPCG(5, 5))
	for range nDraws {
		counts[CategoricalLogit{eta}.Rand(r)]++
	}
	for y, c := range counts {
		p := math.Exp(refCategorical[y])
		if se := math.Sqrt(p * (1 - p) / nDraws); math.Abs(c/nDraws-p) > 5*se {
			t.Errorf("CategoricalLogit: frequency of %d = %v, want %v ± 5·%v", y, c/nDraws, p, se)
		}
	}
}

func TestMultivariateSamplers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	// Dirichlet: marginal θ_i ~ Beta(α_i, Σα − α_i).
	alpha := []float64{0.2, 1, 3}
	th := make([]float64, 3)
	cols := make([][]float64, 3)
	for i := range cols {
		cols[i] = make([]float64, nDraws)
	}
	for j := range nDraws {
		Dirichlet{alpha}.Rand(th, r)
		for i := range th {
			cols[i][j] = th[i]
		}
	}
	for i, a := range alpha {
		b := Beta{a, 4.2 - a}
		m, seM, v, seV := moments(cols[i])
		if math.Abs(m-b.Mean()) > 5*seM || math.Abs(v-b.Variance()) > 5*seV {
			t.Errorf("Dirichlet θ[%d]: mean %v var %v, want %v ± 5·%v, %v ± 5·%v", i, m, v, b.Mean(), seM, b.Variance(), seV)
		}
	}
	// MultiNormalCholesky: mean μ and Var(y_i) = Σ_j L_ij².
	mu := []float64{0.5, -1, 2}
	L := []float64{1.5, 0, 0, 0.3, 0.8, 0, -0.4, 0.2, 2.0}
	y := make([]float64, 3)
	for j := range nDraws {
		MultiNormalCholesky{mu, L}.Rand(y, r)
		for i := range y {
			cols[i][j] = y[i]
		}
	}
	for i := range 3 {
		vr := 0.0
		for j := 0; j <= i; j++ {
			vr += L[i*3+j] * L[i*3+j]
		}
		m, seM, v, seV := moments(cols[i])
		if math.Abs(m-mu[i]) > 5*seM || math.Abs(v-vr) > 5*seV {
			t.Errorf("MultiNormalCholesky y[%d]: mean %v var %v, want %v, %v", i, m, v, mu[i], vr)
		}
	}
	// LKJ: every off-diagonal correlation has mean 0 and variance 1/(2η + K − 1)
	// (marginal 2·Beta(η−1+K/2, η−1+K/2) − 1, Lewandowski et al. 2009 §3.2); rows of L have
	// unit norm.
	const K, eta = 4, 1.5
	Lc := make([]float64, K*K)
	c10, c30 := make([]float64, nDraws), make([]float64, nDraws)
	for j := range nDraws {
		LKJCholesky{eta}.Rand(Lc, r)
		c10[j] = Lc[4]
		c30[j] = Lc[12] // Ω₃₀ = L₃₀·L₀₀
		for i := range K {
			nrm := 0.0
			for _, v := range Lc[i*K : i*K+i+1] {
				nrm += v * v
			}
			if math.Abs(nrm-1) > 1e-12 {
				t.Fatalf("LKJ draw row %d has norm² %v", i, nrm)
			}
		}
	}
	for _, c := range [][]float64{c10, c30} {
		m, seM, v, seV := moments(c)
		if want := 1.0 / (2*eta + K - 1); math.Abs(m) > 5*seM || math.Abs(v-want) > 5*seV {
			t.Errorf("LKJ correlation: mean %v var %v, want 0 ± 5·%v, %v ± 5·%v", m, v, seM, want, seV)
		}
	}
}
