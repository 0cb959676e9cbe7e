package bench

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/internal/race"
)

// torchCheck holds the log density and selected gradient entries at ParamPoint printed by
//
//	/usr/bin/python3 bench/peers/torch_grad.py --check
//
// (Debian python3-torch 1.13.1, which reports 1.13.0a0; float64, one thread). idx are 0-based
// gradient indices.
var torchCheck = map[string]struct {
	logp float64
	idx  []int
	grad []float64
}{
	"logistic_1000x10": {logp: -767.304285379187, idx: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, grad: []float64{
		-47.28129395152946,
		99.76782863995099,
		113.52055174977457,
		111.90586643727904,
		95.07829226970465,
		65.28283184583934,
		26.566419886394378,
		-15.776516592589847,
		-55.9461921645071,
		-88.45482625651339,
		-108.89337621518648,
	}},
	"logistic_100000x50": {logp: -75115.01524447612, idx: []int{0, 1, 2, 3, 17, 25, 49, 50}, grad: []float64{
		-6646.34233431272,
		10299.723093754565,
		9980.843567473117,
		8311.100752067301,
		9256.480014505829,
		-8267.408341994515,
		3841.456060985864,
		7057.97030193365,
	}},
	"mlp_10000": {logp: -61561.09407971641, idx: []int{0, 1, 2, 7, 8, 123, 399, 400, 425, 449, 450, 451, 499, 500}, grad: []float64{
		1402.7174884173894,
		1056.7982955781285,
		567.9088773636731,
		-1558.9064714072072,
		-746.3697329040742,
		514.4061887122899,
		2654.776711276995,
		1684.6191827391608,
		-1042.6841225301607,
		-4409.40770164106,
		3790.349696842721,
		13269.867914063363,
		18108.876638542122,
		17292.632275380016,
	}},
	"eight_schools": {logp: -43.87580381985622, idx: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, grad: []float64{
		-0.13114373354626702,
		-0.08616153332647022,
		-0.008277573779843415,
		0.2774523830781337,
		0.28264117258759647,
		0.26634288385650046,
		0.331569518164841,
		-0.0654763164359839,
		0.44339331802964427,
		0.901739313788086,
	}},
}

// checkFD compares grad with central differences (f(x+h·e_k) − f(x−h·e_k))/(2h) of the value
// function f, entry by entry, |fd − g_k| ≤ tol·max(1, |g_k|).
func checkFD(t *testing.T, name string, f func([]float64) float64, x, grad []float64, h, tol float64) {
	t.Helper()
	xp := append([]float64(nil), x...)
	for k := range x {
		xp[k] = x[k] + h
		fp := f(xp)
		xp[k] = x[k] - h
		fm := f(xp)
		xp[k] = x[k]
		fd := (fp - fm) / (2 * h)
		if d := math.Abs(fd - grad[k]); d > tol*max(1, math.Abs(grad[k])) || math.IsNaN(d) {
			t.Errorf("%s: ∂/∂θ[%d]: analytic %.12g, central difference %.12g (|Δ| = %.3g)", name, k, grad[k], fd, d)
		}
	}
}

// scaled returns c·x.
func scaled(x []float64, c float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = c * v
	}
	return y
}

// closeRel reports whether got and want agree to rel·max(1, |want|).
func closeRel(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*max(1, math.Abs(want))
}

func TestDataLayouts(t *testing.T) {
	if got, want := Feature(0, 0, 10), math.Sin(0.1); got != want {
		t.Errorf("Feature(0,0,10) = %v, want sin(0.1) = %v", got, want)
	}
	if got, want := Feature(3, 2, 10), math.Sin(0.37*32+0.1); got != want {
		t.Errorf("Feature(3,2,10) = %v, want %v", got, want)
	}
	ld := Logistic(7, 3)
	x := ld.X()
	for i := range 7 {
		for j := range 3 {
			if x[i*3+j] != ld.XT[j*7+i] || x[i*3+j] != Feature(i, j, 3) {
				t.Fatalf("Logistic(7,3): X[%d,%d] = %v, XT[%d,%d] = %v, Feature = %v", i, j, x[i*3+j], j, i, ld.XT[j*7+i], Feature(i, j, 3))
			}
		}
		if want := math.Sin(1.3*float64(i)) > 0; (ld.Y[i] == 1) != want || ld.YF[i] != float64(ld.Y[i]) {
			t.Errorf("Logistic(7,3): y[%d] = %d (%v), want %v", i, ld.Y[i], ld.YF[i], want)
		}
	}
	md := MLPRegression(5, 8)
	for i := range 5 {
		for j := range 8 {
			if md.X[i*8+j] != md.XT[j*5+i] || md.X[i*8+j] != Feature(i, j, 8) {
				t.Fatalf("MLPRegression(5,8): X and XT disagree at (%d,%d)", i, j)
			}
		}
	}
	if d := (MLPLayout{In: MLPIn, Hidden: MLPHidden}).Dim(); d != 501 {
		t.Errorf("MLPLayout 8→50→1: Dim = %d, want 501", d)
	}
	k := 2.0 // a variable, so 0.7·k + 0.2 rounds at run time as in ParamPoint
	if p := ParamPoint(3); p[0] != 0.3*math.Cos(0.2) || p[2] != 0.3*math.Cos(0.7*k+0.2) {
		t.Errorf("ParamPoint(3) = %v", p)
	}
}

// FD tolerance for all three models: with h = 1e-5 the central-difference truncation error is
// h²·|f”'|/6 ≲ 1e-9 and the rounding error eps·Σ|terms|/h ≲ 1e-16·1e3/1e-5 = 1e-8 for these
// small data sets, so 1e-6 relative leaves a 100× margin.
const (
	fdStep = 1e-5
	fdTol  = 1e-6
)

func TestLogisticGradFD(t *testing.T) {
	// 700 observations span two blocks of LogisticChunk (512 + 188); the ×10 point drives |η|
	// past 10 so both branches of the stable log(1+e^η) and σ(η) are exercised.
	for _, ld := range []*LogisticData{Logistic(5, 4), Logistic(700, 3)} {
		for _, c := range []float64{1, 10} {
			theta := scaled(ParamPoint(ld.Dim()), c)
			grad := make([]float64, ld.Dim())
			scratch := make([]float64, LogisticChunk)
			lp := LogisticGrad(ld, theta, grad, scratch)
			ref := LogisticLogDensity(ld, theta)
			// Same sum in a different order (blocked vs. per observation): rounding only.
			if !closeRel(lp, ref, 1e-12) {
				t.Errorf("N=%d c=%v: LogisticGrad value %.15g, LogisticLogDensity %.15g", ld.N, c, lp, ref)
			}
			f := func(th []float64) float64 { return LogisticLogDensity(ld, th) }
			checkFD(t, "logistic", f, theta, grad, fdStep, fdTol)
		}
	}
}

func TestMLPGradFD(t *testing.T) {
	md := MLPRegression(40, MLPIn)
	lay := MLPLayout{In: MLPIn, Hidden: MLPHidden}
	theta := ParamPoint(lay.Dim())
	// A ReLU kink within the FD step of a pre-activation would make the central difference
	// average two slopes; the step moves a pre-activation by at most fdStep·max(1, |x|) = fdStep,
	// so require every pre-activation to be ≥ 100 steps from zero at this point.
	w1, b1, _, _ := lay.Split(theta)
	minPre := math.Inf(1)
	for i := range md.N {
		for k := range MLPHidden {
			a := b1[k]
			for j := range MLPIn {
				a += w1[k*MLPIn+j] * md.X[i*MLPIn+j]
			}
			minPre = min(minPre, math.Abs(a))
		}
	}
	if minPre < 100*fdStep {
		t.Fatalf("test point has a pre-activation %.3g from a ReLU kink; pick another point", minPre)
	}
	grad := make([]float64, lay.Dim())
	scratch := make([]float64, MLPScratchLen(md.N, MLPHidden))
	lp := MLPGrad(md, MLPHidden, theta, grad, scratch)
	if ref := MLPLogDensity(md, MLPHidden, theta); !closeRel(lp, ref, 1e-12) { // summation order only
		t.Errorf("MLPGrad value %.15g, MLPLogDensity %.15g", lp, ref)
	}
	f := func(th []float64) float64 { return MLPLogDensity(md, MLPHidden, th) }
	checkFD(t, "mlp", f, theta, grad, fdStep, fdTol)
}

func TestEightSchoolsGradFD(t *testing.T) {
	// log τ = −4 and +4 cover the funnel neck and the Cauchy tail.
	for _, lt := range []float64{ParamPoint(10)[9], -4, 4} {
		u := ParamPoint(10)
		u[9] = lt
		grad := make([]float64, 10)
		lp := EightSchoolsGrad(u, grad)
		if ref := EightSchoolsLogDensity(u); lp != ref {
			t.Errorf("log τ=%v: EightSchoolsGrad value %.17g, EightSchoolsLogDensity %.17g", lt, lp, ref)
		}
		checkFD(t, "eight schools", EightSchoolsLogDensity, u, grad, fdStep, fdTol)
	}
}

// TestAgainstTorch checks the data generators and the analytic gradients at the benchmark
// sizes against PyTorch autograd (torchCheck).
func TestAgainstTorch(t *testing.T) {
	type row struct {
		key  string
		grad func(theta, grad []float64) float64
		dim  int
	}
	ld1, ld2 := Logistic(1000, 10), Logistic(100_000, 50)
	md := MLPRegression(10_000, MLPIn)
	scratch := make([]float64, max(LogisticChunk, MLPScratchLen(md.N, MLPHidden)))
	rows := []row{
		{"logistic_1000x10", func(th, g []float64) float64 { return LogisticGrad(ld1, th, g, scratch) }, ld1.Dim()},
		{"logistic_100000x50", func(th, g []float64) float64 { return LogisticGrad(ld2, th, g, scratch) }, ld2.Dim()},
		{"mlp_10000", func(th, g []float64) float64 { return MLPGrad(md, MLPHidden, th, g, scratch) }, MLPLayout{MLPIn, MLPHidden}.Dim()},
		{"eight_schools", EightSchoolsGrad, 10},
	}
	for _, r := range rows {
		want := torchCheck[r.key]
		theta := ParamPoint(r.dim)
		grad := make([]float64, r.dim)
		lp := r.grad(theta, grad)
		// Both sides sum the same N terms in different orders (blocked GEMV vs. torch kernels);
		// the observed disagreement is ≤ 2e-14 relative, a missing or wrong single term would be
		// ≥ 1e-5 relative. 1e-11 sits safely between.
		const rel = 1e-11
		if !closeRel(lp, want.logp, rel) {
			t.Errorf("%s: log density %.17g, torch %.17g", r.key, lp, want.logp)
		}
		for m, k := range want.idx {
			if !closeRel(grad[k], want.grad[m], rel) {
				t.Errorf("%s: ∂/∂θ[%d] = %.17g, torch %.17g", r.key, k, grad[k], want.grad[m])
			}
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ld := Logistic(1000, 10)
	md := MLPRegression(1000, MLPIn)
	th1 := ParamPoint(ld.Dim())
	th2 := ParamPoint(MLPLayout{MLPIn, MLPHidden}.Dim())
	u := ParamPoint(10)
	g1, g2, g3 := make([]float64, len(th1)), make([]float64, len(th2)), make([]float64, 10)
	s1 := make([]float64, LogisticChunk)
	s2 := make([]float64, MLPScratchLen(md.N, MLPHidden))
	for name, f := range map[string]func(){
		"LogisticGrad":     func() { LogisticGrad(ld, th1, g1, s1) },
		"MLPGrad":          func() { MLPGrad(md, MLPHidden, th2, g2, s2) },
		"EightSchoolsGrad": func() { EightSchoolsGrad(u, g3) },
	} {
		if a := testing.AllocsPerRun(5, f); a != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, a)
		}
	}
}

func benchLogistic(b *testing.B, n, d int) {
	ld := Logistic(n, d)
	theta := ParamPoint(ld.Dim())
	grad := make([]float64, ld.Dim())
	scratch := make([]float64, LogisticChunk)
	b.ReportAllocs()
	for b.Loop() {
		LogisticGrad(ld, theta, grad, scratch)
	}
}

// BenchmarkAnalyticLogistic1e3 times the hand-written gradient of logistic regression,
// N = 1,000, D = 10.
func BenchmarkAnalyticLogistic1e3(b *testing.B) { benchLogistic(b, 1000, 10) }

// BenchmarkAnalyticLogistic1e5 times the hand-written gradient of logistic regression,
// N = 100,000, D = 50.
func BenchmarkAnalyticLogistic1e5(b *testing.B) { benchLogistic(b, 100_000, 50) }

// BenchmarkAnalyticMLP times the hand-written gradient of the 8→50→1 ReLU MLP, N = 10,000.
func BenchmarkAnalyticMLP(b *testing.B) {
	md := MLPRegression(10_000, MLPIn)
	theta := ParamPoint(MLPLayout{MLPIn, MLPHidden}.Dim())
	grad := make([]float64, len(theta))
	scratch := make([]float64, MLPScratchLen(md.N, MLPHidden))
	b.ReportAllocs()
	for b.Loop() {
		MLPGrad(md, MLPHidden, theta, grad, scratch)
	}
}

// BenchmarkAnalyticEightSchools times the hand-written gradient of non-centred eight schools.
func BenchmarkAnalyticEightSchools(b *testing.B) {
	u := ParamPoint(10)
	grad := make([]float64, 10)
	b.ReportAllocs()
	for b.Loop() {
		EightSchoolsGrad(u, grad)
	}
}
