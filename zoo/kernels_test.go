package zoo

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// synth returns n deterministic observations spread over roughly [lo, hi].
func synth(n int, lo, hi float64) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = lo + (hi-lo)*(0.5+0.5*math.Sin(1.7*float64(i)+0.3))
	}
	return y
}

// kernelTol is the agreement required between a fused kernel and its naive loop: both sum
// the same N ≤ 1000 terms in a different order and form, so they differ by a few ε·Σ|terms|;
// 1e-10 relative leaves a wide margin.
const kernelTol = 1e-10

func TestGarchLogLik(t *testing.T) {
	y := synth(60, -1, 2)
	f := func(tp *ad.Tape, x ad.Var) ad.Var {
		return garchLogLik(tp, y, 0.5, tp.Index(x, 0), tp.Index(x, 1), tp.Index(x, 2), tp.Index(x, 3))
	}
	for _, x := range [][]float64{{0.3, 0.2, 0.3, 0.5}, {-0.1, 1.5, 0.05, 0.9}, {1, 0.01, 0.7, 0.01}} {
		var tp ad.Tape
		tp.Reset()
		got := tp.Float(f(&tp, tp.Input(x)))
		s, want := 0.5, refNormal(y[0], x[0], 0.5)
		for i := 1; i < len(y); i++ {
			e := y[i-1] - x[0]
			s = math.Sqrt(x[1] + x[2]*e*e + x[3]*s*s)
			want += refNormal(y[i], x[0], s)
		}
		if math.Abs(got-want) > kernelTol*math.Abs(want) {
			t.Errorf("garch at %v: %.15g, naive %.15g", x, got, want)
		}
		checkGrad(t, "garch", f, x)
	}
}

func TestNormalMix2LogLik(t *testing.T) {
	y := synth(200, -4, 5)
	f := func(tp *ad.Tape, x ad.Var) ad.Var {
		return normalMix2LogLik(tp, y, tp.Slice(x, 0, 2), tp.Slice(x, 2, 4), tp.Index(x, 4))
	}
	// The last point puts both components far from the data (−d ≫ 0 and ≪ 0 branches).
	for _, x := range [][]float64{{-2, 3, 1, 1.5, 0.4}, {0.5, 0.6, 0.3, 2, 0.9}, {-30, 40, 0.7, 0.8, 0.1}} {
		var tp ad.Tape
		got := tp.Float(f(&tp, tp.Input(x)))
		want := 0.0
		for _, yn := range y {
			want += math.Log(x[4]*math.Exp(refNormal(yn, x[0], x[2])) + (1-x[4])*math.Exp(refNormal(yn, x[1], x[3])))
		}
		if math.IsInf(want, -1) { // naive form underflows far out; use log-space
			want = 0
			for _, yn := range y {
				want += mathx.LogAddExp(math.Log(x[4])+refNormal(yn, x[0], x[2]), math.Log(1-x[4])+refNormal(yn, x[1], x[3]))
			}
		}
		if math.Abs(got-want) > kernelTol*math.Abs(want) {
			t.Errorf("mixture at %v: %.15g, naive %.15g", x, got, want)
		}
		checkGrad(t, "mixture", f, x)
	}
}

func TestHMM2LogLik(t *testing.T) {
	y := synth(80, 0, 12)
	f := func(tp *ad.Tape, x ad.Var) ad.Var {
		return hmm2LogLik(tp, y, tp.Slice(x, 0, 2), tp.Slice(x, 2, 4), tp.Slice(x, 4, 6))
	}
	// The partials are taken with respect to all four transition entries independently (the
	// kernel does not assume rows sum to one), so points off the simplex are valid checks.
	// The last point has mu far from every y (emissions underflow in the naive form).
	for _, x := range [][]float64{{0.7, 0.3, 0.2, 0.8, 3, 9}, {0.1, 0.95, 0.5, 0.4, 5, 6}, {0.5, 0.5, 0.5, 0.5, -60, 90}} {
		var tp ad.Tape
		got := tp.Float(f(&tp, tp.Input(x)))
		// Naive log-space forward algorithm (MODELS.md §12).
		a := [2][2]float64{{x[0], x[1]}, {x[2], x[3]}}
		g := [2]float64{refNormal(y[0], x[4], 1), refNormal(y[0], x[5], 1)}
		for i := 1; i < len(y); i++ {
			var nx [2]float64
			for k := range 2 {
				nx[k] = mathx.LogAddExp(g[0]+math.Log(a[0][k]), g[1]+math.Log(a[1][k])) + refNormal(y[i], x[4+k], 1)
			}
			g = nx
		}
		want := mathx.LogAddExp(g[0], g[1])
		if math.Abs(got-want) > kernelTol*math.Abs(want) {
			t.Errorf("hmm at %v: %.15g, naive %.15g", x, got, want)
		}
		checkGrad(t, "hmm", f, x)
	}
}

func TestLogProduct(t *testing.T) {
	// Terms spanning 1e-300…1e300 force the rescaling path in both directions.
	xs := []float64{1e-300, 1e-300, 3, 1e300, 1e300, 1e300, 0.5, 1e-5, 7e-200, 2}
	want, abs, l := 0.0, 0.0, logProduct{p: 1}
	for i := range 1000 {
		x := xs[i%len(xs)]
		want += math.Log(x)
		abs += math.Abs(math.Log(x))
		l.mul(x)
	}
	// The product's rounding costs ≤ 1000·ε ≈ 2e-13 in the log; the reference sum of 1000
	// logs of size up to 690 is itself rounded by up to about ε·Σ|log x| per addition.
	if got := l.log(); math.Abs(got-want) > 2e-13+1e-13*abs {
		t.Errorf("logProduct = %.17g, Σ log = %.17g", got, want)
	}
	z := logProduct{p: 1}
	z.mul(2)
	z.mul(0)
	if got := z.log(); !math.IsInf(got, -1) {
		t.Errorf("logProduct with a zero term = %v, want −Inf", got)
	}
}

func TestLog1pSmall(t *testing.T) {
	// Both branches against math.Log1p; the series branch (e < 1e-4) has truncation error
	// e⁵/5 < 2e-21, so the two agree to a few ulps of the result.
	for _, e := range []float64{0, 1e-300, 1e-17, 1e-9, 3e-5, 9.999e-5, 1e-4, 0.01, 0.5, 1} {
		got, want := log1pSmall(e), math.Log1p(e)
		if math.Abs(got-want) > 4e-16*want {
			t.Errorf("log1pSmall(%g) = %.17g, math.Log1p %.17g", e, got, want)
		}
	}
}
