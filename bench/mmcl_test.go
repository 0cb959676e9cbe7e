package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/race"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/rng"
)

// randomNet returns a net with N(0, s²) parameters, log σ₂ = −0.3, and a random binary image.
func randomNet(t *testing.T, k1, k2, k3, d int, s float64, seed uint64) (*dncpNet, []int) {
	t.Helper()
	n, err := newDNCPNet(k1, k2, k3, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(seed, 0)
	for i := range n.theta {
		n.theta[i] = s * r.NormFloat64()
	}
	n.theta[len(n.theta)-1] = -0.3
	x := make([]int, d)
	for j := range x {
		if r.Float64() < 0.4 {
			x[j] = 1
		}
	}
	return n, x
}

// The analytic gradient of c·log p_θ(x | ε) in ε and in θ (backward) against central finite
// differences of logLik, every coordinate. Step 1e-5 on a function with O(1) third
// derivatives gives a truncation error ~1e-10 and a rounding error ~1e-11; tolerance 1e-6
// relative to max(1, |g|).
func TestDNCPNetGradient(t *testing.T) {
	n, x := randomNet(t, 2, 3, 5, 7, 0.8, 1)
	w := n.newWork()
	r := rng.New(1, 1)
	eps := make([]float64, n.Dim())
	for i := range eps {
		eps[i] = r.NormFloat64()
	}
	const c = 0.7
	gE, gT := make([]float64, n.Dim()), make([]float64, len(n.theta))
	n.logLik(w, eps, x)
	n.backward(w, eps, c, gE, gT)
	const h = 1e-5
	check := func(name string, v []float64, i int, got float64) {
		old := v[i]
		v[i] = old + h
		up := n.logLik(w, eps, x)
		v[i] = old - h
		dn := n.logLik(w, eps, x)
		v[i] = old
		want := c * (up - dn) / (2 * h)
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s[%d]: analytic %.10g, finite difference %.10g", name, i, got, want)
		}
	}
	for i := range eps {
		check("eps", eps, i, gE[i])
	}
	for i := range n.theta {
		check("theta", n.theta, i, gT[i])
	}
	// logJoint adds the prior's gradient −ε.
	g := make([]float64, n.Dim())
	n.logJoint(w, eps, x, g)
	for i := range g {
		if want := gE[i]/c - eps[i]; math.Abs(g[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("logJoint gradient[%d] = %v, want %v", i, g[i], want)
		}
	}
}

// The MMCL estimator p̂(x) = (1/L) Σ_l p(x | ε_l) is unbiased for p(x) (not log p(x)): on a
// net with a 2-D ε, whose p(x) the midpoint rule on a 600² grid gives to far below the
// tolerance, the mean of R = 4000 independent p̂ at L = 5 must be within 4.4 standard errors
// (the replicates' sd/√R) of p(x). p(x | ε) ≤ 1 so the CLT applies; the two-sided normal tail
// beyond 4.4 is 1.1e-5, the false-failure rate. The mean of log p̂ is, by Jensen, below
// log p(x), which the test also checks (by more than its own 4.4 standard errors).
func TestMMCLUnbiasedForPx(t *testing.T) {
	n, x := randomNet(t, 1, 1, 2, 8, 2.5, 2)
	w := n.newWork()
	exact := math.Exp(n.logMarginalGrid(w, x, 600, 8))
	const L, R = 5, 4000
	mw := &mmclWork{eps: make([]float64, L*n.Dim()), ll: make([]float64, L)}
	g := make([]float64, len(n.theta))
	r := rng.New(2, 1)
	ps, lps := make([]float64, R), make([]float64, R)
	for i := range R {
		lp, _ := n.mmclStep(w, mw, x, r, g)
		ps[i], lps[i] = math.Exp(lp), lp
	}
	m, sd := meanSD(ps)
	if se := sd / math.Sqrt(R); math.Abs(m-exact) > 4.4*se {
		t.Errorf("mean p̂ = %.6g, exact p(x) = %.6g: off by %.1f standard errors (se %.3g)", m, exact, (m-exact)/se, se)
	}
	lm, lsd := meanSD(lps)
	if lse := lsd / math.Sqrt(R); !(lm < math.Log(exact)-4.4*lse) {
		t.Logf("mean log p̂ = %.6g, log p(x) = %.6g (se %.3g)", lm, math.Log(exact), lse)
		t.Error("mean log p̂ is not detectably below log p(x): the test has no power")
	}
}

// gaussTarget is N(μ, Σ) with precision P = Σ⁻¹.
type gaussTarget struct {
	mu, P []float64
	d     int
}

func (g *gaussTarget) logDensity(q, grad []float64) float64 {
	var lp float64
	for i := range g.d {
		var s float64
		for j := range g.d {
			s += g.P[i*g.d+j] * (q[j] - g.mu[j])
		}
		grad[i] = -s
		lp -= 0.5 * (q[i] - g.mu[i]) * s
	}
	return lp
}

// HMC leaves a 6-D Gaussian invariant: N = 4000 exact draws of N(μ, Σ) (Σ = diag(sd²) with
// sd from 0.5 to 2, rotated), three transitions each (10 leapfrog steps of 0.8, near the
// stability limit 1 of the narrowest direction, so that the Metropolis step matters), then
// every coordinate's mean within 4.5·sd/√N of μ and variance within 4.5·sd²·√(2/N) of
// Σ_ii (the draws stay independent). 12 two-sided 4.5σ checks: false-failure rate ≈ 8e-5.
// The mean acceptance must be below 0.97: otherwise the test would not exercise the accept
// step.
func TestHMCLeavesGaussianInvariant(t *testing.T) {
	const d, N = 6, 4000
	sd := []float64{0.5, 0.7, 1, 1.3, 1.6, 2}
	// rotation: Q = Householder reflection I − 2uuᵀ/|u|²
	u := []float64{1, -2, 0.5, 1.5, -1, 0.3}
	var uu float64
	for _, v := range u {
		uu += v * v
	}
	Q := make([]float64, d*d)
	for i := range d {
		for j := range d {
			Q[i*d+j] = -2 * u[i] * u[j] / uu
			if i == j {
				Q[i*d+j]++
			}
		}
	}
	tg := &gaussTarget{mu: []float64{1, -1, 0.5, 2, 0, -0.5}, P: make([]float64, d*d), d: d}
	cov := make([]float64, d*d)
	for i := range d {
		for j := range d {
			for k := range d {
				tg.P[i*d+j] += Q[i*d+k] * Q[j*d+k] / (sd[k] * sd[k])
				cov[i*d+j] += Q[i*d+k] * Q[j*d+k] * sd[k] * sd[k]
			}
		}
	}
	r := rng.New(3, 0)
	hw := newHMCWork(d)
	q, g := make([]float64, d), make([]float64, d)
	z := make([]float64, d)
	sum, sum2 := make([]float64, d), make([]float64, d)
	var acc float64
	for range N {
		for k := range d {
			z[k] = sd[k] * r.NormFloat64()
		}
		for i := range d {
			q[i] = tg.mu[i]
			for k := range d {
				q[i] += Q[i*d+k] * z[k]
			}
		}
		lp := tg.logDensity(q, g)
		for range 3 {
			var a float64
			lp, a = hmcTransition(tg, q, g, lp, 0.8, 10, r, hw)
			acc += a
		}
		for i := range d {
			sum[i] += q[i]
			sum2[i] += (q[i] - tg.mu[i]) * (q[i] - tg.mu[i])
		}
	}
	for i := range d {
		s := math.Sqrt(cov[i*d+i])
		if m := sum[i] / N; math.Abs(m-tg.mu[i]) > 4.5*s/math.Sqrt(N) {
			t.Errorf("mean[%d] = %.4f, want %.4f ± %.4f", i, m, tg.mu[i], 4.5*s/math.Sqrt(N))
		}
		if v := sum2[i] / N; math.Abs(v-s*s) > 4.5*s*s*math.Sqrt(2.0/N) {
			t.Errorf("var[%d] = %.4f, want %.4f ± %.4f", i, v, s*s, 4.5*s*s*math.Sqrt(2.0/N))
		}
	}
	if a := acc / (3 * N); a > 0.97 {
		t.Errorf("mean acceptance %.3f: the step is too small to test the accept step", a)
	}
}

// The log p(x) estimator on the toy net with a 2-D ε against the grid value: 20 repeats at 100
// draws, their mean within 4.5 standard errors (sd/√20) plus the Jensen bias bound mean(SE²)/2
// of the exact value, for each of the three images (false-failure rate ≈ 2e-5 under the
// normal approximation); and the reported SE within a factor 2 of the repeats' sd.
func TestLogMarginalToyExact(t *testing.T) {
	net, imgs := toyNet(1)
	w, iw := net.newWork(), newISWork(2)
	r := rng.New(1, 5)
	for i := range imgs.N {
		x := imgs.image(i)
		exact := net.logMarginalGrid(w, x, 600, 8)
		var reps []float64
		var se2, se float64
		for range 20 {
			e := net.logMarginal(w, iw, x, 100, r)
			reps = append(reps, e.LogP)
			se2 += e.SE * e.SE / 20
			se += e.SE / 20
		}
		m, sd := meanSD(reps)
		if tol := 4.5*sd/math.Sqrt(20) + se2/2; math.Abs(m-exact) > tol {
			t.Errorf("image %d: mean estimate %.4f, exact %.4f (tolerance %.4f)", i, m, exact, tol)
		}
		if se < sd/2 || se > 2*sd {
			t.Errorf("image %d: mean reported SE %.4f against the repeats' sd %.4f", i, se, sd)
		}
	}
}

// One MCEM and one MMCL step allocate nothing.
func TestMMCLStepNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	imgs := &mnistBinary{N: 4, D: 30, X: make([]int, 120)}
	for i := range imgs.X {
		imgs.X[i] = i % 3 % 2
	}
	cfg := MMCLConfig{K1: 3, K2: 3, K3: 8, LR: 0.02, Leapfrog: 10, Accept: 0.9, StepGain: 0.02, Seed: 1}
	for _, L := range []int{0, 10} {
		lr, err := newLearner(cfg, imgs, L)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		if a := testing.AllocsPerRun(20, func() { lr.step(imgs, i%4); i++ }); a != 0 {
			t.Errorf("%s step: %v allocations", mmclMethod(L), a)
		}
	}
}

// Bad input fails with an error that names it.
func TestMMCLBadInput(t *testing.T) {
	if _, err := binarise(nil, 0, 784); err == nil || !strings.Contains(err.Error(), "no images") {
		t.Errorf("binarise of 0 images: %v", err)
	}
	if _, err := binarise(make([]float64, 783), 1, 784); err == nil || !strings.Contains(err.Error(), "783") {
		t.Errorf("binarise of a 783-pixel image as 784: %v", err)
	}
	if _, err := newDNCPNet(3, 0, 100, 784); err == nil || !strings.Contains(err.Error(), "K2") {
		t.Errorf("newDNCPNet with K2 = 0: %v", err)
	}
	small := &mnistBinary{N: 10, D: 4, X: make([]int, 40)}
	if _, err := runMMCLOn(context.Background(), MMCLConfig{Quick: true}.defaults(), small); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("subsets larger than the data: %v", err)
	}
	if _, err := RunMMCL(context.Background(), MMCLConfig{}); err == nil || !strings.Contains(err.Error(), "MNIST") {
		t.Errorf("no MNIST directory: %v", err)
	}
	if _, err := RunMMCL(context.Background(), MMCLConfig{MNIST: t.TempDir()}); err == nil {
		t.Error("an empty directory: no error")
	}
	for _, c := range []MMCLConfig{
		{Subsets: []int{10}, Budgets: []float64{1, 2}},
		{Subsets: []int{0}, Budgets: []float64{1}},
		{Subsets: []int{10}, Budgets: []float64{math.Inf(1)}},
		{Ls: []int{0}},
		{Accept: 1},
	} {
		if err := c.defaults().validate(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// A whole run on synthetic images (tiny net, fractions of a second of training) writes the
// report with its header, both methods' curves and the checks.
func TestRunMMCLSmoke(t *testing.T) {
	r := rng.New(9, 0)
	all := &mnistBinary{N: 60, D: 12, X: make([]int, 60*12)}
	for i := range all.X {
		if r.Float64() < 0.3 {
			all.X[i] = 1
		}
	}
	cfg := MMCLConfig{Subsets: []int{30}, Budgets: []float64{0.05}, Test: 20, Ls: []int{5}, K3: 4, Checkpoints: 2,
		EvalImages: 4, EvalDraws: 20, FinalImages: 6, BruteImages: 2, BruteDraws: 200, TimingReps: 1}
	rep, err := runMMCLOn(context.Background(), cfg.defaults(), all)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || len(rep.Runs[0].Points) != 3 || len(rep.Brute) != 4 || len(rep.Toy) != 3 || len(rep.Timing) != 2 {
		t.Fatalf("runs %d, points %d, brute %d, toy %d, timing %d", len(rep.Runs), len(rep.Runs[0].Points), len(rep.Brute), len(rep.Toy), len(rep.Timing))
	}
	var b strings.Builder
	if err := rep.Markdown(&b, resultmd.New("vigo bench mmcl (test)", "test")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"- command: `vigo bench mmcl (test)`", "| MCEM |", "| MMCL L=5 |", "Checks of the log p(x) estimator"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, run := range rep.Runs {
		for _, q := range run.Points {
			if math.IsNaN(q.TrainLL) || math.IsNaN(q.TestLL) || q.TrainLL > 0 || q.TestLL > 0 {
				t.Errorf("%s: log p(x) %v, %v", run.Method, q.TrainLL, q.TestLL)
			}
		}
	}
}
