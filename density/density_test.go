package density

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/race"
)

// buildFunc records a log density on t from the given argument Vars.
type buildFunc func(t *ad.Tape, vs []ad.Var) ad.Var

// eval records build on a fresh tape with every argument an Input (or a Const when konst[j])
// and returns the value and the gradients (nil for constants).
func eval(build buildFunc, vals [][]float64, konst []bool) (float64, [][]float64) {
	var t ad.Tape
	vs := make([]ad.Var, len(vals))
	for j, v := range vals {
		if konst != nil && konst[j] {
			vs[j] = t.Const(v...)
		} else {
			vs[j] = t.Input(v)
		}
	}
	out := build(&t, vs)
	t.Backward(out)
	g := make([][]float64, len(vals))
	for j := range vs {
		if gr := t.Grad(vs[j]); gr != nil {
			g[j] = append([]float64(nil), gr...)
		}
	}
	return t.Float(out), g
}

// near reports |got − want| ≤ tol·max(1, |want|).
func near(got, want, tol float64) bool {
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// checkFD compares the tape gradient of build at vals with central differences (h = 1e-6 ·
// max(|x|, 0.01), truncation error ~h²f”' ≲ 1e-10 relative at the smooth points used), to
// 1e-6 relative (absolute below 1) — the same rule as dist's tests.
func checkFD(t *testing.T, label string, build buildFunc, vals [][]float64) {
	t.Helper()
	_, g := eval(build, vals, nil)
	for j := range vals {
		for i := range vals[j] {
			x0 := vals[j][i]
			h := 1e-6 * math.Max(math.Abs(x0), 0.01)
			vals[j][i] = x0 + h
			fp, _ := eval(build, vals, nil)
			vals[j][i] = x0 - h
			fm, _ := eval(build, vals, nil)
			vals[j][i] = x0
			want := (fp - fm) / (2 * h)
			if !near(g[j][i], want, 1e-6) {
				t.Errorf("%s: ∂/∂arg%d[%d] = %.12g, finite difference %.12g", label, j, i, g[j][i], want)
			}
		}
	}
}

// famCase is a family with a tape builder, a dist reference, and valid parameter values.
type famCase struct {
	name   string
	build  buildFunc                            // y, params...
	ref    func(y float64, p []float64) float64 // dist log density
	ys     []float64                            // observations (in the support)
	params [][]float64                          // a few valid parameter values per parameter
}

var famCases = []famCase{
	{"Normal", func(t *ad.Tape, v []ad.Var) ad.Var { return Normal(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Normal{Mu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{-1.2, 0.3, 2.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"StudentT", func(t *ad.Tape, v []ad.Var) ad.Var { return StudentT(t, v[0], v[1], v[2], v[3]) },
		func(y float64, p []float64) float64 { return dist.StudentT{Nu: p[0], Mu: p[1], Sigma: p[2]}.LogProb(y) },
		[]float64{-1.2, 0.3, 2.5}, [][]float64{{3.5, 7, 1.5}, {0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Cauchy", func(t *ad.Tape, v []ad.Var) ad.Var { return Cauchy(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Cauchy{Mu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{-1.2, 0.3, 2.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Laplace", func(t *ad.Tape, v []ad.Var) ad.Var { return Laplace(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Laplace{Mu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{-1.2, 0.3, 2.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Logistic", func(t *ad.Tape, v []ad.Var) ad.Var { return Logistic(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Logistic{Mu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{-1.2, 0.3, 2.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"LogNormal", func(t *ad.Tape, v []ad.Var) ad.Var { return LogNormal(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.LogNormal{Mu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Exponential", func(t *ad.Tape, v []ad.Var) ad.Var { return Exponential(t, v[0], v[1]) },
		func(y float64, p []float64) float64 { return dist.Exponential{Rate: p[0]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{1.3, 0.7, 2}}},
	{"Gamma", func(t *ad.Tape, v []ad.Var) ad.Var { return Gamma(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Gamma{Shape: p[0], Rate: p[1]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{2.5, 0.7, 4}, {1.3, 0.7, 2}}},
	{"InverseGamma", func(t *ad.Tape, v []ad.Var) ad.Var { return InverseGamma(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.InverseGamma{Shape: p[0], Scale: p[1]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{2.5, 0.7, 4}, {1.3, 0.7, 2}}},
	{"Beta", func(t *ad.Tape, v []ad.Var) ad.Var { return Beta(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Beta{Alpha: p[0], Beta: p[1]}.LogProb(y) },
		[]float64{0.2, 0.5, 0.85}, [][]float64{{2.5, 0.7, 4}, {1.3, 0.7, 2}}},
	{"Uniform", func(t *ad.Tape, v []ad.Var) ad.Var { return Uniform(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.Uniform{Min: p[0], Max: p[1]}.LogProb(y) },
		[]float64{0.2, 0.5, 0.85}, [][]float64{{-1, 0, -0.5}, {1, 2, 3}}},
	{"HalfNormal", func(t *ad.Tape, v []ad.Var) ad.Var { return HalfNormal(t, v[0], v[1]) },
		func(y float64, p []float64) float64 { return dist.HalfNormal{Sigma: p[0]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{1.3, 0.7, 2}}},
	{"HalfCauchy", func(t *ad.Tape, v []ad.Var) ad.Var { return HalfCauchy(t, v[0], v[1]) },
		func(y float64, p []float64) float64 { return dist.HalfCauchy{Sigma: p[0]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{1.3, 0.7, 2}}},
	{"HalfStudentT", func(t *ad.Tape, v []ad.Var) ad.Var { return HalfStudentT(t, v[0], v[1], v[2]) },
		func(y float64, p []float64) float64 { return dist.HalfStudentT{Nu: p[0], Sigma: p[1]}.LogProb(y) },
		[]float64{0.2, 1.3, 4.5}, [][]float64{{3.5, 7, 1.5}, {1.3, 0.7, 2}}},
	{"Truncated(Normal)[−1,3]", func(t *ad.Tape, v []ad.Var) ad.Var { return Truncated(t, NormalFamily, v[0], -1, 3, v[1], v[2]) },
		func(y float64, p []float64) float64 {
			return dist.Truncated[dist.Normal]{Dist: dist.Normal{Mu: p[0], Sigma: p[1]}, Lower: -1, Upper: 3}.LogProb(y)
		},
		[]float64{-0.2, 0.3, 2.5}, [][]float64{{0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Truncated(StudentT)[0,∞)", func(t *ad.Tape, v []ad.Var) ad.Var {
		return Truncated(t, StudentTFamily, v[0], 0, math.Inf(1), v[1], v[2], v[3])
	},
		func(y float64, p []float64) float64 {
			return dist.Truncated[dist.StudentT]{Dist: dist.StudentT{Nu: p[0], Mu: p[1], Sigma: p[2]}, Lower: 0, Upper: math.Inf(1)}.LogProb(y)
		},
		[]float64{0.2, 1.3, 4.5}, [][]float64{{3.5, 7, 1.5}, {0.1, -0.4, 1}, {1.3, 0.7, 2}}},
	{"Truncated(Gamma)[0.1,5]", func(t *ad.Tape, v []ad.Var) ad.Var { return Truncated(t, GammaFamily, v[0], 0.1, 5, v[1], v[2]) },
		func(y float64, p []float64) float64 {
			return dist.Truncated[dist.Gamma]{Dist: dist.Gamma{Shape: p[0], Rate: p[1]}, Lower: 0.1, Upper: 5}.LogProb(y)
		},
		[]float64{0.2, 1.3, 4.5}, [][]float64{{2.5, 0.7, 4}, {1.3, 0.7, 2}}},
}

// scalarsOf returns one-element slices of the first entries of ps.
func firstOf(ps [][]float64) [][]float64 {
	out := make([][]float64, len(ps))
	for j, p := range ps {
		out[j] = []float64{p[0]}
	}
	return out
}

func TestUnivariateValueAndGradient(t *testing.T) {
	for _, c := range famCases {
		n := len(c.ys)
		// Three broadcast patterns: all vectors; vector y with scalar parameters; scalar y with
		// vector parameters.
		patterns := []struct {
			label string
			vals  [][]float64
		}{
			{"vectors", append([][]float64{c.ys}, c.params...)},
			{"scalar params", append([][]float64{c.ys}, firstOf(c.params)...)},
			{"scalar y", append([][]float64{{c.ys[1]}}, c.params...)},
		}
		for _, pat := range patterns {
			label := c.name + " " + pat.label
			// Deep copies: checkFD perturbs in place.
			vals := make([][]float64, len(pat.vals))
			for j, v := range pat.vals {
				vals[j] = append([]float64(nil), v...)
			}
			got, _ := eval(c.build, vals, nil)
			want := 0.0
			p := make([]float64, len(vals)-1)
			for i := range n {
				for j := range p {
					p[j] = vals[j+1][min(i, len(vals[j+1])-1)]
				}
				want += c.ref(vals[0][min(i, len(vals[0])-1)], p)
			}
			// 1e-13: the same dist code per observation, summed in the same order (the
			// hand-written Normal loop and the hoisted scalar normaliser reassociate sums).
			if !near(got, want, 1e-13) {
				t.Errorf("%s: value %.17g, Σ dist = %.17g", label, got, want)
			}
			checkFD(t, label, c.build, vals)
		}
	}
}

// TestNCopies checks Stan's "repeat as vector" identity: N copies of one observation with
// broadcast parameters give N times the value and N times the parameter gradients, and with
// parameters repeated as vectors each element gets the single-observation gradient.
func TestNCopies(t *testing.T) {
	const n = 7
	for _, c := range famCases {
		one := append([][]float64{{c.ys[1]}}, firstOf(c.params)...)
		v1, g1 := eval(c.build, one, nil)
		rep := func(x float64) []float64 {
			s := make([]float64, n)
			for i := range s {
				s[i] = x
			}
			return s
		}
		bc := [][]float64{rep(c.ys[1])}
		vec := [][]float64{rep(c.ys[1])}
		for _, p := range one[1:] {
			bc = append(bc, []float64{p[0]})
			vec = append(vec, rep(p[0]))
		}
		vb, gb := eval(c.build, bc, nil)
		vv, gv := eval(c.build, vec, nil)
		// 1e-13 relative: N-term sums versus one product.
		if !near(vb, n*v1, 1e-13) || !near(vv, n*v1, 1e-13) {
			t.Errorf("%s: N copies %v / %v, want N × %v = %v", c.name, vb, vv, v1, n*v1)
		}
		for j := range one {
			for i := range n {
				if !near(gv[j][i], g1[j][0], 1e-13) {
					t.Errorf("%s: vector copies ∂arg%d[%d] = %v, want %v", c.name, j, i, gv[j][i], g1[j][0])
				}
			}
			if j > 0 && !near(gb[j][0], n*g1[j][0], 1e-13) {
				t.Errorf("%s: broadcast ∂arg%d = %v, want N × %v", c.name, j, gb[j][0], g1[j][0])
			}
		}
	}
}

// TestConstArguments checks that constant arguments give the same value, no gradient slot,
// and unchanged gradients for the others.
func TestConstArguments(t *testing.T) {
	for _, c := range famCases {
		for _, vals := range [][][]float64{append([][]float64{c.ys}, c.params...), append([][]float64{c.ys}, firstOf(c.params)...)} {
			constArgs(t, c, vals)
		}
	}
}

func constArgs(t *testing.T, c famCase, vals [][]float64) {
	t.Helper()
	{
		v0, g0 := eval(c.build, vals, nil)
		for j := range vals {
			konst := make([]bool, len(vals))
			konst[j] = true
			v, g := eval(c.build, vals, konst)
			if v != v0 {
				t.Errorf("%s: const arg%d changes the value: %v vs %v", c.name, j, v, v0)
			}
			if g[j] != nil {
				t.Errorf("%s: const arg%d has a gradient", c.name, j)
			}
			for k := range vals {
				if k != j && fmt.Sprint(g[k]) != fmt.Sprint(g0[k]) {
					t.Errorf("%s: const arg%d changes ∂arg%d: %v vs %v", c.name, j, k, g[k], g0[k])
				}
			}
		}
	}
}

func TestInvalidAndOutOfSupport(t *testing.T) {
	var tp ad.Tape
	y := tp.Const(1, 2)
	if v := tp.Float(Normal(&tp, y, tp.Scalar(0), tp.Scalar(-1))); !math.IsNaN(v) {
		t.Errorf("Normal with σ = -1: %v, want NaN", v)
	}
	if v := tp.Float(Normal(&tp, y, tp.Scalar(0), tp.Input([]float64{1, 0}))); !math.IsNaN(v) {
		t.Errorf("Normal with σ = {1, 0}: %v, want NaN", v)
	}
	if v := tp.Float(Gamma(&tp, tp.Const(-1, 2), tp.Scalar(2), tp.Scalar(1))); !math.IsInf(v, -1) {
		t.Errorf("Gamma at y = -1: %v, want -Inf", v)
	}
	if v := tp.Float(StudentT(&tp, y, tp.Scalar(-3), tp.Scalar(0), tp.Scalar(1))); !math.IsNaN(v) {
		t.Errorf("StudentT with ν = -3: %v, want NaN", v)
	}
	if v := tp.Float(Truncated(&tp, NormalFamily, tp.Const(0.5, 4), -1, 3, tp.Scalar(0), tp.Scalar(1))); !math.IsInf(v, -1) {
		t.Errorf("Truncated Normal at y = 4 > 3: %v, want -Inf", v)
	}
	if v := tp.Float(PoissonLog(&tp, []int{1, -1}, tp.Scalar(0))); !math.IsInf(v, -1) {
		t.Errorf("PoissonLog at k = -1: %v, want -Inf", v)
	}
	if v := tp.Float(BernoulliLogit(&tp, []int{1, 2}, tp.Scalar(0))); !math.IsInf(v, -1) {
		t.Errorf("BernoulliLogit at y = 2: %v, want -Inf", v)
	}
	if v := tp.Float(NegBinomial2(&tp, []int{1}, tp.Scalar(1), tp.Scalar(-1))); !math.IsNaN(v) {
		t.Errorf("NegBinomial2 with φ = -1: %v, want NaN", v)
	}
}

func TestWrongLengthPanics(t *testing.T) {
	var tp ad.Tape
	x3 := tp.Input([]float64{1, 2, 3})
	x2 := tp.Input([]float64{1, 2})
	s := tp.Scalar(1)
	cases := map[string]func(){
		"density: Normal: len(mu)=2, want 1 or 3":                 func() { Normal(&tp, x3, x2, s) },
		"density: StudentT: len(sigma)=2, want 1 or 3":            func() { StudentT(&tp, x3, s, s, x2) },
		"density: PoissonLog: len(eta)=3, want 1 or len(k)=2":     func() { PoissonLog(&tp, []int{1, 2}, x3) },
		"density: BinomialLogit: len(n)=2, want 1 or len(k)=3":    func() { BinomialLogit(&tp, []int{1, 2, 3}, []int{4, 5}, s) },
		"density: Dirichlet: len(theta)=3, want len(alpha)=2":     func() { Dirichlet(&tp, x3, x2) },
		"density: NormalIDGLM: len(beta)=3, want XT.Rows=2":       func() { NormalIDGLM(&tp, []float64{1}, ad.Mat{Rows: 2, Cols: 1, Data: []float64{1, 2}}, s, x3, s) },
		"density: BernoulliLogitGLM: XT is 2×1 with len(Data)=2":  func() { BernoulliLogitGLM(&tp, []int{1, 0}, ad.Mat{Rows: 2, Cols: 1, Data: []float64{1, 2}}, s, x2) },
		"density: MultiNormalCholesky: len(y)=2, want a multiple": func() { MultiNormalCholesky(&tp, x2, x3, tp.Input(make([]float64, 9))) },
	}
	for msg, f := range cases {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.HasPrefix(r, msg) {
					t.Errorf("panic %q, want prefix %q", r, msg)
				}
			}()
			f()
		}()
	}
}

func TestDiscrete(t *testing.T) {
	ys := []int{0, 1, 1, 0}
	ks := []int{0, 3, 7, 1}
	ns := []int{2, 5, 9, 4}
	eta := []float64{-0.7, 0.3, 1.1, 2.4}
	phi := []float64{0.8, 3, 40, 2}
	mu := []float64{0.5, 2.5, 6, 1}
	type dcase struct {
		name  string
		build buildFunc
		vals  [][]float64
		want  float64
	}
	sum := func(f func(i int) float64) float64 {
		s := 0.0
		for i := range 4 {
			s += f(i)
		}
		return s
	}
	cases := []dcase{
		{"BernoulliLogit", func(t *ad.Tape, v []ad.Var) ad.Var { return BernoulliLogit(t, ys, v[0]) }, [][]float64{eta},
			sum(func(i int) float64 { return dist.BernoulliLogit{Eta: eta[i]}.LogProb(ys[i]) })},
		{"BernoulliLogit scalar", func(t *ad.Tape, v []ad.Var) ad.Var { return BernoulliLogit(t, ys, v[0]) }, [][]float64{{-0.7}},
			sum(func(i int) float64 { return dist.BernoulliLogit{Eta: -0.7}.LogProb(ys[i]) })},
		{"BinomialLogit", func(t *ad.Tape, v []ad.Var) ad.Var { return BinomialLogit(t, ks, ns, v[0]) }, [][]float64{eta},
			sum(func(i int) float64 { return dist.BinomialLogit{N: ns[i], Eta: eta[i]}.LogProb(ks[i]) })},
		{"BinomialLogit scalar n", func(t *ad.Tape, v []ad.Var) ad.Var { return BinomialLogit(t, ks, []int{9}, v[0]) }, [][]float64{{0.3}},
			sum(func(i int) float64 { return dist.BinomialLogit{N: 9, Eta: 0.3}.LogProb(ks[i]) })},
		{"PoissonLog", func(t *ad.Tape, v []ad.Var) ad.Var { return PoissonLog(t, ks, v[0]) }, [][]float64{eta},
			sum(func(i int) float64 { return dist.PoissonLog{Eta: eta[i]}.LogProb(ks[i]) })},
		{"PoissonLog scalar", func(t *ad.Tape, v []ad.Var) ad.Var { return PoissonLog(t, ks, v[0]) }, [][]float64{{1.1}},
			sum(func(i int) float64 { return dist.PoissonLog{Eta: 1.1}.LogProb(ks[i]) })},
		{"NegBinomial2", func(t *ad.Tape, v []ad.Var) ad.Var { return NegBinomial2(t, ks, v[0], v[1]) }, [][]float64{mu, phi},
			sum(func(i int) float64 { return dist.NegBinomial2{Mu: mu[i], Phi: phi[i]}.LogProb(ks[i]) })},
		{"NegBinomial2 scalar φ", func(t *ad.Tape, v []ad.Var) ad.Var { return NegBinomial2(t, ks, v[0], v[1]) }, [][]float64{mu, {3}},
			sum(func(i int) float64 { return dist.NegBinomial2{Mu: mu[i], Phi: 3}.LogProb(ks[i]) })},
		{"NegBinomial2Log", func(t *ad.Tape, v []ad.Var) ad.Var { return NegBinomial2Log(t, ks, v[0], v[1]) }, [][]float64{eta, phi},
			sum(func(i int) float64 { return dist.NegBinomial2Log{Eta: eta[i], Phi: phi[i]}.LogProb(ks[i]) })},
		{"CategoricalLogit shared", func(t *ad.Tape, v []ad.Var) ad.Var { return CategoricalLogit(t, ks[:3], v[0]) },
			[][]float64{{0.2, -1, 0.5, 1.5, 0, 0.3, -0.2, 0.9}},
			dist.CategoricalLogit{Eta: []float64{0.2, -1, 0.5, 1.5, 0, 0.3, -0.2, 0.9}}.LogProb(0) +
				dist.CategoricalLogit{Eta: []float64{0.2, -1, 0.5, 1.5, 0, 0.3, -0.2, 0.9}}.LogProb(3) +
				dist.CategoricalLogit{Eta: []float64{0.2, -1, 0.5, 1.5, 0, 0.3, -0.2, 0.9}}.LogProb(7)},
		{"CategoricalLogit rows", func(t *ad.Tape, v []ad.Var) ad.Var { return CategoricalLogit(t, ys, t.AsMatrix(v[0], 4, 2)) },
			[][]float64{{0.2, -1, 0.5, 1.5, 0, 0.3, -0.2, 0.9}},
			dist.CategoricalLogit{Eta: []float64{0.2, -1}}.LogProb(0) + dist.CategoricalLogit{Eta: []float64{0.5, 1.5}}.LogProb(1) +
				dist.CategoricalLogit{Eta: []float64{0, 0.3}}.LogProb(1) + dist.CategoricalLogit{Eta: []float64{-0.2, 0.9}}.LogProb(0)},
	}
	for _, c := range cases {
		got, _ := eval(c.build, c.vals, nil)
		// 1e-13: the same dist formulas summed; BernoulliLogit and PoissonLog have their own
		// loops (one exp for scalar η) that reassociate.
		if !near(got, c.want, 1e-13) {
			t.Errorf("%s: value %.17g, Σ dist = %.17g", c.name, got, c.want)
		}
		checkFD(t, c.name, c.build, c.vals)
	}
}

func TestMultivariate(t *testing.T) {
	alpha := []float64{0.5, 2, 3.5}
	theta := []float64{0.2, 0.3, 0.5}
	dir := func(t *ad.Tape, v []ad.Var) ad.Var { return Dirichlet(t, v[0], v[1]) }
	if got, want := func() float64 { v, _ := eval(dir, [][]float64{theta, alpha}, nil); return v }(), (dist.Dirichlet{Alpha: alpha}).LogProb(theta); got != want {
		t.Errorf("Dirichlet: %v, dist %v", got, want)
	}
	checkFD(t, "Dirichlet", dir, [][]float64{theta, alpha})

	L := []float64{1.5, 0, 0, 0.3, 0.8, 0, -0.4, 0.2, 2.0}
	mu := []float64{0.5, -1, 2}
	ys := []float64{1, 0.5, -1, 0.2, -0.3, 2.5}
	mvn := func(t *ad.Tape, v []ad.Var) ad.Var { return MultiNormalCholesky(t, v[0], v[1], t.AsMatrix(v[2], 3, 3)) }
	want := dist.MultiNormalCholesky{Mu: mu, L: L}.LogProb(ys[:3]) + dist.MultiNormalCholesky{Mu: mu, L: L}.LogProb(ys[3:])
	got, g := eval(mvn, [][]float64{ys, mu, L}, nil)
	// 1e-13: the same dist code on two rows.
	if !near(got, want, 1e-13) {
		t.Errorf("MultiNormalCholesky: %v, Σ dist %v", got, want)
	}
	for _, i := range []int{1, 2, 5} {
		if g[2][i] != 0 {
			t.Errorf("MultiNormalCholesky: ∂L[%d] (upper) = %v, want 0", i, g[2][i])
		}
	}
	checkFD(t, "MultiNormalCholesky shared μ", mvn, [][]float64{ys, mu, L})
	mu2 := append(append([]float64(nil), mu...), 0.1, 0.2, 0.3)
	checkFD(t, "MultiNormalCholesky per-row μ", mvn, [][]float64{ys, mu2, L})

	Lc := make([]float64, 16)
	dist.LKJCholesky{Eta: 2}.Rand(Lc, rand.New(rand.NewPCG(1, 2)))
	lkj := func(t *ad.Tape, v []ad.Var) ad.Var { return LKJCorrCholesky(t, t.AsMatrix(v[0], 4, 4), v[1]) }
	got, _ = eval(lkj, [][]float64{Lc, {1.7}}, nil)
	if want := (dist.LKJCholesky{Eta: 1.7}).LogProb(Lc); got != want {
		t.Errorf("LKJCorrCholesky: %v, dist %v", got, want)
	}
	checkFD(t, "LKJCorrCholesky", lkj, [][]float64{Lc, {1.7}})
}

// glmData returns a feature-major design XT (D×N), outcomes and coefficients.
func glmData(n, d int, seed uint64) (ad.Mat, []float64, []int, []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	xt := ad.Mat{Rows: d, Cols: n, Data: make([]float64, d*n)}
	for i := range xt.Data {
		xt.Data[i] = r.NormFloat64()
	}
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = 0.3 * r.NormFloat64()
	}
	y := make([]float64, n)
	yb := make([]int, n)
	for i := range y {
		eta := 0.2
		for j := range beta {
			eta += beta[j] * xt.Data[j*n+i]
		}
		y[i] = eta + 0.7*r.NormFloat64()
		if r.Float64() < 1/(1+math.Exp(-eta)) {
			yb[i] = 1
		}
	}
	return xt, y, yb, beta
}

func TestGLMs(t *testing.T) {
	// N = 700 with D = 60 gives blocks of 546 observations, so the blocking is exercised.
	for _, sz := range [][2]int{{13, 3}, {700, 60}} {
		n, d := sz[0], sz[1]
		xt, y, yb, beta := glmData(n, d, uint64(n))
		sig := make([]float64, n)
		for i := range sig {
			sig[i] = 0.5 + 0.01*float64(i%7)
		}
		normal := func(t *ad.Tape, v []ad.Var) ad.Var { return NormalIDGLM(t, y, xt, v[0], v[1], v[2]) }
		bern := func(t *ad.Tape, v []ad.Var) ad.Var { return BernoulliLogitGLM(t, yb, xt, v[0], v[1]) }
		// Naive references: η by plain loops, then the dist densities.
		eta := make([]float64, n)
		for i := range eta {
			eta[i] = 0.2
			for j := range beta {
				eta[i] += beta[j] * xt.Data[j*n+i]
			}
		}
		wn, wv, wb := 0.0, 0.0, 0.0
		for i := range n {
			wn += dist.Normal{Mu: eta[i], Sigma: 0.7}.LogProb(y[i])
			wv += dist.Normal{Mu: eta[i], Sigma: sig[i]}.LogProb(y[i])
			wb += dist.BernoulliLogit{Eta: eta[i]}.LogProb(yb[i])
		}
		got, _ := eval(normal, [][]float64{{0.2}, beta, {0.7}}, nil)
		gotv, _ := eval(normal, [][]float64{{0.2}, beta, sig}, nil)
		gotb, _ := eval(bern, [][]float64{{0.2}, beta}, nil)
		// 1e-12 relative: η is summed in a different order (axpy per feature vs per row),
		// ~D·ε relative per η, and the N-term sums reassociate.
		if !near(got, wn, 1e-12) || !near(gotv, wv, 1e-12) || !near(gotb, wb, 1e-12) {
			t.Errorf("GLM N=%d D=%d: normal %v (want %v), vector σ %v (want %v), bernoulli %v (want %v)", n, d, got, wn, gotv, wv, gotb, wb)
		}
		if n < 100 {
			checkFD(t, "NormalIDGLM", normal, [][]float64{{0.2}, beta, {0.7}})
			checkFD(t, "NormalIDGLM vector σ", normal, [][]float64{{0.2}, beta, sig})
			checkFD(t, "BernoulliLogitGLM", bern, [][]float64{{0.2}, beta})
			continue
		}
		// Large case: gradient against the unfused tape of Normal/BernoulliLogit on η = α + Xβ.
		_, g := eval(normal, [][]float64{{0.2}, beta, {0.7}}, nil)
		_, gb := eval(bern, [][]float64{{0.2}, beta}, nil)
		unf := func(t *ad.Tape, v []ad.Var, bernoulli bool) ad.Var {
			e := t.AddC(t.MatTVecC(xt, v[1]), 0)
			e = t.Add(e, v[0])
			if bernoulli {
				return BernoulliLogit(t, yb, e)
			}
			return Normal(t, t.ConstRef(y), e, v[2])
		}
		_, gu := eval(func(t *ad.Tape, v []ad.Var) ad.Var { return unf(t, v, false) }, [][]float64{{0.2}, beta, {0.7}}, nil)
		_, gub := eval(func(t *ad.Tape, v []ad.Var) ad.Var { return unf(t, v, true) }, [][]float64{{0.2}, beta}, nil)
		for j := range g {
			for i := range g[j] {
				// 1e-10: two exact gradient formulas differing only in summation order.
				if !near(g[j][i], gu[j][i], 1e-10) {
					t.Errorf("NormalIDGLM N=%d: ∂arg%d[%d] = %v, unfused %v", n, j, i, g[j][i], gu[j][i])
				}
			}
		}
		for j := range gb {
			for i := range gb[j] {
				if !near(gb[j][i], gub[j][i], 1e-10) {
					t.Errorf("BernoulliLogitGLM N=%d: ∂arg%d[%d] = %v, unfused %v", n, j, i, gb[j][i], gub[j][i])
				}
			}
		}
	}
}

// TestNoAllocs: a reused tape records Normal (N = 1000) and both GLMs without allocating.
func TestNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	xt, y, yb, beta := glmData(1000, 10, 1)
	var tp ad.Tape
	run := func() {
		tp.Reset()
		b := tp.Input(beta)
		a, s := tp.Scalar(0.2), tp.Scalar(0.7)
		lp := tp.Add(NormalIDGLM(&tp, y, xt, a, b, s), BernoulliLogitGLM(&tp, yb, xt, a, b))
		lp = tp.Add(lp, Normal(&tp, tp.ConstRef(y), a, s))
		lp = tp.Add(lp, PoissonLog(&tp, yb, a))
		lp = tp.Add(lp, StudentT(&tp, tp.ConstRef(y[:10]), s, a, s))
		lp = tp.Add(lp, Truncated(&tp, NormalFamily, s, 0, math.Inf(1), a, s))
		tp.Backward(lp)
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Errorf("allocations per evaluation: %v, want 0", n)
	}
}

func BenchmarkNormal1000(b *testing.B) {
	_, y, _, _ := glmData(1000, 1, 2)
	var tp ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		tp.Reset()
		mu, s := tp.Scalar(0.1), tp.Scalar(0.9)
		tp.Backward(Normal(&tp, tp.ConstRef(y), mu, s))
	}
}

func benchGLM(b *testing.B, n, d int, bernoulli bool) {
	xt, y, yb, beta := glmData(n, d, 3)
	var tp ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		tp.Reset()
		bv := tp.Input(beta)
		a := tp.Scalar(0.2)
		var lp ad.Var
		if bernoulli {
			lp = BernoulliLogitGLM(&tp, yb, xt, a, bv)
		} else {
			lp = NormalIDGLM(&tp, y, xt, a, bv, tp.Scalar(0.7))
		}
		tp.Backward(lp)
	}
}

func BenchmarkNormalIDGLM_N1000_D10(b *testing.B)       { benchGLM(b, 1000, 10, false) }
func BenchmarkBernoulliLogitGLM_N1000_D10(b *testing.B) { benchGLM(b, 1000, 10, true) }
func BenchmarkBernoulliLogitGLM_N1e5_D50(b *testing.B)  { benchGLM(b, 100000, 50, true) }
