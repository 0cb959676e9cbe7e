package bench

import (
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }

// The AD gradients must equal the hand-written ones: both are exact, so they agree to
// rounding (1e-10 relative allows for different summation orders over N = 10⁴–10⁵ terms).
func checkSame(t *testing.T, name string, lpAD, lpAn float64, gAD, gAn []float64) {
	t.Helper()
	if relErr(lpAD, lpAn) > 1e-10 {
		t.Errorf("%s: log density AD %v, analytic %v", name, lpAD, lpAn)
	}
	for i := range gAD {
		if relErr(gAD[i], gAn[i]) > 1e-10 {
			t.Errorf("%s: ∂/∂θ[%d] AD %v, analytic %v", name, i, gAD[i], gAn[i])
		}
	}
}

func TestADMatchesAnalyticGradients(t *testing.T) {
	var tp ad.Tape
	for _, sz := range [][2]int{{1000, 10}, {3000, 50}} {
		ld := Logistic(sz[0], sz[1])
		th := ParamPoint(ld.Dim())
		g1, g2 := make([]float64, ld.Dim()), make([]float64, ld.Dim())
		lp1 := ad.Gradient(&tp, logisticAD(ld), th, g1)
		lp2 := LogisticGrad(ld, th, g2, make([]float64, LogisticChunk))
		checkSame(t, "logistic", lp1, lp2, g1, g2)
	}
	md := MLPRegression(2000, MLPIn)
	th := ParamPoint(MLPLayout{MLPIn, MLPHidden}.Dim())
	g1, g2 := make([]float64, len(th)), make([]float64, len(th))
	lp1 := ad.Gradient(&tp, mlpAD(md, MLPHidden), th, g1)
	lp2 := MLPGrad(md, MLPHidden, th, g2, make([]float64, MLPScratchLen(md.N, MLPHidden)))
	checkSame(t, "mlp", lp1, lp2, g1, g2)

	m := zoo.EightSchools()
	u := ParamPoint(10)
	g1, g2 = make([]float64, 10), make([]float64, 10)
	model.Gradient(&tp, m, u, g1)
	EightSchoolsGrad(u, g2)
	checkSame(t, "eight schools", 0, 0, g1, g2) // values differ by the constant log 2 of the half-Cauchy
}

func benchAD(b *testing.B, f ad.Func, th []float64) {
	var tp ad.Tape
	grad := make([]float64, len(th))
	b.ReportAllocs()
	for b.Loop() {
		ad.Gradient(&tp, f, th, grad)
	}
}

// BenchmarkADLogistic1e3 times vigo's AD gradient of logistic regression, N = 1,000, D = 10.
func BenchmarkADLogistic1e3(b *testing.B) {
	ld := Logistic(1000, 10)
	benchAD(b, logisticAD(ld), ParamPoint(ld.Dim()))
}

// BenchmarkADLogistic1e5 times vigo's AD gradient of logistic regression, N = 100,000, D = 50.
func BenchmarkADLogistic1e5(b *testing.B) {
	ld := Logistic(100_000, 50)
	benchAD(b, logisticAD(ld), ParamPoint(ld.Dim()))
}

// BenchmarkADMLP times vigo's AD gradient of the 8→50→1 ReLU MLP, N = 10,000.
func BenchmarkADMLP(b *testing.B) {
	md := MLPRegression(10_000, MLPIn)
	benchAD(b, mlpAD(md, MLPHidden), ParamPoint(MLPLayout{MLPIn, MLPHidden}.Dim()))
}

// BenchmarkADEightSchools times the gradient of the zoo's eight-schools model (fused density
// nodes, Jacobian included).
func BenchmarkADEightSchools(b *testing.B) {
	m := zoo.EightSchools()
	u := ParamPoint(10)
	var tp ad.Tape
	grad := make([]float64, 10)
	b.ReportAllocs()
	for b.Loop() {
		model.Gradient(&tp, m, u, grad)
	}
}

func TestWriteADMarkdownVerdicts(t *testing.T) {
	rows := []ADRow{
		{Name: "fast", AD: 10e-6, Analytic: 9e-6, Torch: 100e-6, StanRef: 20e-6, TorchRef: 150e-6},
		{Name: "slow", AD: 30e-6, Analytic: 10e-6, StanRef: 20e-6, TorchRef: 150e-6},
		{Name: "stan", AD: 30e-6, Analytic: 29e-6, Torch: 90e-6, Stan: 25e-6, StanRef: 20e-6, TorchRef: 150e-6},
	}
	var b strings.Builder
	if err := WriteADMarkdown(&b, resultmd.Header{Command: "vigo bench ad"}, rows, "a note"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| fast | 10.0 µs | 0 | 9.0 µs | 1.11 | 100.0 µs | 0.10 | 20.0 µs (issue) | 0.50 | faster than the best peer (PyTorch) |",
		"| 150.0 µs (issue) | 0.20 | 20.0 µs (issue) | 1.50 | slower than the best peer (Stan) by 1.50×; 3.0× the hand-written floor (target ≤ 1.3×)",
		"| stan | 30.0 µs | 0 | 29.0 µs | 1.03 | 90.0 µs | 0.33 | 25.0 µs | 1.20 | slower than the best peer (Stan) by 1.20× |",
		"- command: `vigo bench ad`", "kernels: ", "\na note\n\n| gradient of |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
