package kernel

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ulpDiff returns the distance between a and b in units in the last place (the number of
// float64 values between them); 0 if both are the same NaN class or equal.
func ulpDiff(a, b float64) float64 {
	if a == b || (a != a && b != b) {
		return 0
	}
	if a != a || b != b || math.IsInf(a, 0) || math.IsInf(b, 0) || math.Signbit(a) != math.Signbit(b) {
		return math.Inf(1)
	}
	ia, ib := int64(math.Float64bits(math.Abs(a))), int64(math.Float64bits(math.Abs(b)))
	return math.Abs(float64(ia - ib))
}

// ulpOf returns the spacing of float64 values at v (2⁻¹⁰⁷⁴ for subnormals).
func ulpOf(v float64) float64 {
	v = math.Abs(v)
	return math.Nextafter(v, math.Inf(1)) - v
}

// An implementation of an elementwise function, tested alike: the package's exported
// function (whichever implementation the build selected) and the pure-Go one.
type elemImpl struct {
	name string
	f    func(dst, x []float64)
}

func expImpls() []elemImpl {
	return []elemImpl{{"Exp", Exp}, {"expGo", expGo}}
}

func log1pImpls() []elemImpl {
	return []elemImpl{{"Log1p", Log1p}, {"log1pGo", log1pGo}}
}

// maxUlps applies f to xs (in blocks of odd length, so the vector tails are exercised) and
// returns the largest distance to ref in ulps, with the worst argument.
func maxUlps(f func(dst, x []float64), ref func(float64) float64, xs []float64) (worst, at float64) {
	got := make([]float64, len(xs))
	for i := 0; i < len(xs); i += 1001 {
		j := min(i+1001, len(xs))
		f(got[i:j], xs[i:j])
	}
	for i, x := range xs {
		if d := ulpDiff(got[i], ref(x)); d > worst {
			worst, at = d, x
		}
	}
	return worst, at
}

// Against math.Exp, which is itself within 1 ulp of exact: 2 ulp means ours is within 1 ulp
// of exact too, up to math.Exp's own error. The exact comparison is TestExpReference.
const vsMathUlps = 2

func TestExpVsMath(t *testing.T) {
	// math.Exp on amd64 (assembly) returns +Inf from x ≈ 709.4361 on, although e^x stays
	// finite up to 709.7827; the grid stops there and TestExpLog1pReference covers the rest.
	const top = 709.436
	var grid []float64
	for x := -745.2; x <= top; x += 1e-3 { // dense grid over the finite range
		grid = append(grid, x)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		grid = append(grid, -745.2+rng.Float64()*(top+745.2), rng.NormFloat64(), rng.NormFloat64()*1e-6)
	}
	for _, im := range expImpls() {
		worst, at := maxUlps(im.f, math.Exp, grid)
		t.Logf("%s: max %g ulp vs math.Exp over %d points (at x=%v)", im.name, worst, len(grid), at)
		if worst > vsMathUlps {
			t.Errorf("%s: %g ulp from math.Exp at x=%v", im.name, worst, at)
		}
	}
}

func TestLog1pVsMath(t *testing.T) {
	var grid []float64
	for x := -0.999; x <= 20; x += 2e-5 { // dense grid where log1p is used most
		grid = append(grid, x)
	}
	for e := -300.0; e <= 308; e += 0.01 { // every scale, both signs below 0
		grid = append(grid, math.Pow(10, e))
		if e < 0 {
			grid = append(grid, -math.Pow(10, e))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		grid = append(grid, -1+rng.Float64()*5, rng.Float64(), math.Exp(rng.Float64()*1400-700),
			-1+math.Exp(-rng.Float64()*36))
	}
	for _, im := range log1pImpls() {
		worst, at := maxUlps(im.f, math.Log1p, grid)
		t.Logf("%s: max %g ulp vs math.Log1p over %d points (at x=%v)", im.name, worst, len(grid), at)
		if worst > vsMathUlps {
			t.Errorf("%s: %g ulp from math.Log1p at x=%v", im.name, worst, at)
		}
	}
}

// readRef reads testdata written by testdata/gen_ref.py (mpmath at 240 bits): per line x, the
// exact value rounded to float64 (hi), and its rounding error in ulps of hi (d).
func readRef(t *testing.T, name string) (x, hi, d []float64) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var v [3]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(fs[i], 64); err != nil {
				t.Fatal(err)
			}
		}
		x, hi, d = append(x, v[0]), append(hi, v[1]), append(d, v[2])
	}
	return x, hi, d
}

// refUlps returns the largest error of f over the reference points in ulps of the exact
// value, (got − hi)/ulp(hi) − d, which resolves fractions of an ulp.
func refUlps(f func(dst, x []float64), x, hi, d []float64) (worst, at float64) {
	got := make([]float64, len(x))
	f(got, x)
	for i := range x {
		if e := math.Abs((got[i]-hi[i])/ulpOf(hi[i]) - d[i]); e > worst {
			worst, at = e, x[i]
		}
	}
	return worst, at
}

// Against exact values: the bound stated on Exp and Log1p is 1 ulp; the maxima seen (logged)
// are 0.74 ulp for Exp and 0.63 ulp for Log1p.
func TestExpLog1pReference(t *testing.T) {
	for _, c := range []struct {
		file  string
		impls []elemImpl
	}{{"exp_ref.txt", expImpls()}, {"log1p_ref.txt", log1pImpls()}} {
		x, hi, d := readRef(t, c.file)
		for _, im := range c.impls {
			worst, at := refUlps(im.f, x, hi, d)
			t.Logf("%s: max error %.3f ulp of exact over %d points (at x=%v)", im.name, worst, len(x), at)
			if worst > 1 {
				t.Errorf("%s: error %.3f ulp at x=%v", im.name, worst, at)
			}
		}
	}
}

func TestExpSpecial(t *testing.T) {
	cases := []struct{ x, want float64 }{
		{math.NaN(), math.NaN()},
		{math.Inf(1), math.Inf(1)},
		{math.Inf(-1), 0},
		{0, 1},
		{math.Copysign(0, -1), 1},
		{1e-300, 1},
		{-1e-300, 1},
		{5e-324, 1},
		{1, math.E},
		{709.782712893384, 1.7976931348622732e308}, // just below overflow (math.Exp)
		{709.7828, math.Inf(1)},
		{1e300, math.Inf(1)},
		{math.MaxFloat64, math.Inf(1)},
		{-708.3964185322641, math.Exp(-708.3964185322641)}, // ≈ smallest normal
		{-720, math.Exp(-720)},                             // subnormal
		{-745.1332191019411, 5e-324},                       // smallest subnormal
		{-745.1332191019412, 0},
		{-746, 0},
		{-1e300, 0},
		{-math.MaxFloat64, 0},
	}
	for _, im := range expImpls() {
		for _, c := range cases {
			for _, n := range []int{1, 4, 7} { // scalar tail and vector lanes
				x := make([]float64, n)
				for i := range x {
					x[i] = c.x
				}
				got := make([]float64, n)
				im.f(got, x)
				for _, g := range got {
					if ulpDiff(g, c.want) > 1 {
						t.Errorf("%s(%v) = %v, want %v", im.name, c.x, g, c.want)
					}
				}
			}
		}
	}
}

func TestLog1pSpecial(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct{ x, want float64 }{
		{math.NaN(), math.NaN()},
		{math.Inf(1), math.Inf(1)},
		{math.Inf(-1), math.NaN()},
		{-2, math.NaN()},
		{-1 - 1e-15, math.NaN()},
		{-1, math.Inf(-1)},
		{-1 + 0x1p-53, math.Log1p(-1 + 0x1p-53)},
		{0, 0},
		{negZero, negZero},
		{5e-324, 5e-324},
		{-5e-324, -5e-324},
		{1e-300, 1e-300},
		{0x1p-54, 0x1p-54},
		{1, math.Ln2},
		{math.MaxFloat64, math.Log1p(math.MaxFloat64)},
		{1e300, math.Log1p(1e300)},
	}
	for _, im := range log1pImpls() {
		for _, c := range cases {
			for _, n := range []int{1, 4, 7} {
				x := make([]float64, n)
				for i := range x {
					x[i] = c.x
				}
				got := make([]float64, n)
				im.f(got, x)
				for _, g := range got {
					if ulpDiff(g, c.want) > 1 || (c.want == 0 && math.Signbit(g) != math.Signbit(c.want)) {
						t.Errorf("%s(%v) = %v, want %v", im.name, c.x, g, c.want)
					}
				}
			}
		}
	}
}

// bernoulliRef is the per-observation definition, computed with math.Exp/math.Log1p.
func bernoulliRef(eta float64, y int) (lp, g float64) {
	yf := float64(y)
	u := math.Exp(-math.Abs(eta))
	s := 1 / (1 + u)
	if eta < 0 {
		s = u / (1 + u)
	}
	return yf*eta - max(eta, 0) - math.Log1p(u), yf - s
}

func TestBernoulliLogit(t *testing.T) {
	var eta []float64
	var y []int
	rng := rand.New(rand.NewPCG(5, 6))
	for e := -800.0; e <= 800; e += 0.0137 {
		eta = append(eta, e, e*1e-3, -e*1e-9)
		y = append(y, rng.IntN(2), rng.IntN(2), rng.IntN(2))
	}
	eta = append(eta, 0, math.Copysign(0, -1), 36, -36, 37, -37, 745, -745, 746, -746)
	y = append(y, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1)
	impls := []struct {
		name string
		f    func([]float64, []int) (float64, float64, bool)
	}{{"BernoulliLogit", BernoulliLogit}, {"bernoulliLogitGo", bernoulliLogitGo}}
	for _, im := range impls {
		for _, n := range []int{len(eta), len(eta) - 1, 3, 1, 0} {
			g := append([]float64(nil), eta[:n]...)
			lp, sum, ok := im.f(g, y[:n])
			if !ok {
				t.Fatalf("%s: ok=false for labels in {0,1}", im.name)
			}
			var wantLp, wantSum, scale float64
			for i := range n {
				l, gi := bernoulliRef(eta[i], y[i])
				wantLp += l
				wantSum += gi
				scale += math.Abs(l)
				// Per observation: σ is within 1–2 ulp in both (exp, one division, one
				// multiplication), so y − σ is within a few ulp of the larger of |y| and σ
				// (the subtraction cancels): 4.5e-16 = 2 ulp of 1 relative to y + σ.
				if math.Abs(g[i]-gi) > 4.5e-16*(float64(y[i])+math.Abs(float64(y[i])-gi)) {
					t.Errorf("%s: n=%d η=%v y=%d: ∂ %v, want %v", im.name, n, eta[i], y[i], g[i], gi)
				}
			}
			// Sums differ by summation order only: relative 1e-13 of Σ|terms| (n ≤ 4·10⁵).
			if math.Abs(lp-wantLp) > 1e-13*max(scale, 1) || math.Abs(sum-wantSum) > 1e-13*float64(max(n, 1)) {
				t.Errorf("%s: n=%d: lp %v sum %v, want %v %v", im.name, n, lp, sum, wantLp, wantSum)
			}
		}
		// Per-element values for single observations, where no summation is involved.
		for _, e := range []float64{-40, -1e-20, 0, 1e-20, 0.3, 40} {
			for yi := range 2 {
				g := []float64{e}
				lp, _, _ := im.f(g, []int{yi})
				wl, wg := bernoulliRef(e, yi)
				if ulpDiff(lp, wl) > 2 || ulpDiff(g[0], wg) > 2 {
					t.Errorf("%s(η=%v, y=%d) = %v, %v; want %v, %v", im.name, e, yi, lp, g[0], wl, wg)
				}
			}
		}
		for _, bad := range []int{2, -1, 3, 1 << 40} {
			for _, pos := range []int{0, 5, 6} {
				yb := make([]int, 7)
				yb[pos] = bad
				if _, _, ok := im.f(make([]float64, 7), yb); ok {
					t.Errorf("%s: label %d at %d accepted", im.name, bad, pos)
				}
			}
		}
	}
}

func BenchmarkExp(b *testing.B) {
	x, d := benchArgs(-20, 20)
	benchCPU(b, func() { Exp(d, x) })
}

func BenchmarkMathExp(b *testing.B) {
	x, d := benchArgs(-20, 20)
	benchCPU(b, func() {
		for i, v := range x {
			d[i] = math.Exp(v)
		}
	})
}

func BenchmarkLog1p(b *testing.B) {
	x, d := benchArgs(0, 1)
	benchCPU(b, func() { Log1p(d, x) })
}

func BenchmarkMathLog1p(b *testing.B) {
	x, d := benchArgs(0, 1)
	benchCPU(b, func() {
		for i, v := range x {
			d[i] = math.Log1p(v)
		}
	})
}

func BenchmarkBernoulliLogit(b *testing.B) {
	x, d := benchArgs(-5, 5)
	y := make([]int, len(x))
	for i := range y {
		y[i] = i * 7 % 3 & 1
	}
	benchCPU(b, func() {
		copy(d, x)
		BernoulliLogit(d, y)
	})
}

// benchArgs returns 1024 arguments spread over [lo, hi) and a result buffer.
func benchArgs(lo, hi float64) (x, dst []float64) {
	x = make([]float64, 1024)
	for i := range x {
		x[i] = lo + (hi-lo)*float64(i*389%1024)/1024
	}
	return x, make([]float64, len(x))
}
