package mcmc

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/zoo"
)

// testSystem returns the eight-schools Hamiltonian system with metric m and a point with a
// random position near the bulk of the posterior and a random momentum.
func testSystem(t *testing.T, kind MetricKind, inv []float64) (*system, point) {
	t.Helper()
	tg := zoo.EightSchools()
	d := tg.Dim()
	met, err := newMetric(d, kind, inv)
	if err != nil {
		t.Fatal(err)
	}
	sys := &system{tg: tg, tape: new(ad.Tape), met: met, tmp: make([]float64, d)}
	r := rng.New(7, 0)
	z := newPoint(d)
	for i := range z.q {
		z.q[i] = 0.5 * r.NormFloat64()
	}
	z.q[8] = 4 // mu
	z.q[9] = 1 // log tau
	sys.eval(&z)
	met.sampleP(r, z.p)
	return sys, z
}

func denseTestMetric(d int) []float64 {
	inv := make([]float64, d*d)
	for i := range d {
		for j := range d {
			inv[i*d+j] = 0.3 * math.Pow(0.5, math.Abs(float64(i-j)))
		}
		inv[i*d+i] += 0.2 * float64(i+1)
	}
	return inv
}

// TestLeapfrogReversible runs L steps forward, flips the momentum and runs L steps back: the
// start must be recovered up to rounding.
func TestLeapfrogReversible(t *testing.T) {
	for _, kind := range []MetricKind{Diag, Dense} {
		var inv []float64
		if kind == Dense {
			inv = denseTestMetric(10)
		}
		sys, z := testSystem(t, kind, inv)
		q0 := append([]float64(nil), z.q...)
		p0 := append([]float64(nil), z.p...)
		const steps, eps = 50, 0.1
		for range steps {
			sys.leapfrog(&z, eps)
		}
		for i := range z.p {
			z.p[i] = -z.p[i]
		}
		for range steps {
			sys.leapfrog(&z, eps)
		}
		for i := range z.q {
			// Each step rounds at the 1e-16 level and the map is volume preserving, so errors
			// grow slowly; 1e-12 absolute on O(1) coordinates leaves a wide margin while any
			// asymmetry in the scheme (a full step instead of two half steps, a stale gradient)
			// shows as O(ε²) ≈ 1e-2.
			if math.Abs(z.q[i]-q0[i]) > 1e-12 || math.Abs(-z.p[i]-p0[i]) > 1e-12 {
				t.Errorf("%v: coordinate %d: q %v → %v, p %v → %v", kind, i, q0[i], z.q[i], p0[i], -z.p[i])
			}
		}
	}
}

// TestLeapfrogSecondOrder checks that the energy error of a fixed-time trajectory falls as ε²:
// halving ε (and doubling the steps) divides the largest |H − H₀| by about 4.
func TestLeapfrogSecondOrder(t *testing.T) {
	for _, kind := range []MetricKind{Diag, Dense} {
		var inv []float64
		if kind == Dense {
			inv = denseTestMetric(10)
		}
		maxErr := func(eps float64) float64 {
			sys, z := testSystem(t, kind, inv)
			h0 := sys.energy(&z)
			var m float64
			for range int(math.Round(1 / eps)) {
				sys.leapfrog(&z, eps)
				m = math.Max(m, math.Abs(sys.energy(&z)-h0))
			}
			return m
		}
		e1, e2, e3 := maxErr(0.02), maxErr(0.01), maxErr(0.005)
		// The error is c·ε² + O(ε⁴); at ε ≤ 0.02 the O(ε⁴) term moves the ratio by well under
		// 10%, while a first-order scheme would give ratios near 2.
		for _, r := range []float64{e1 / e2, e2 / e3} {
			if r < 3.6 || r > 4.4 {
				t.Errorf("%v: energy error ratios %.3f, %.3f, want ≈ 4 (errors %.3g %.3g %.3g)", kind, e1/e2, e2/e3, e1, e2, e3)
				break
			}
		}
	}
}

// TestWindows checks Stan's schedule for 1000 warmup iterations: metric updates at the ends
// of the slow windows 75–99, 100–149, 150–249, 250–449 and 450–949 (the last stretched).
func TestWindows(t *testing.T) {
	w := newWindows(1000, 75, 50, 25)
	var ends []int
	n := 0
	for i := range 1000 {
		if w.inWindow() {
			n++
		}
		if w.endOfWindow() {
			ends = append(ends, i)
			w.advance()
		}
		w.counter++
	}
	want := []int{99, 149, 249, 449, 949}
	if len(ends) != len(want) {
		t.Fatalf("window ends %v, want %v", ends, want)
	}
	for i := range want {
		if ends[i] != want[i] {
			t.Fatalf("window ends %v, want %v", ends, want)
		}
	}
	if n != 875 {
		t.Errorf("%d iterations in windows, want 875", n)
	}
	// Too short for 75/25/50: 15%/75%/10% of 100.
	w = newWindows(100, 75, 50, 25)
	if w.initBuf != 15 || w.termBuf != 10 || w.base != 75 || w.next != 89 {
		t.Errorf("short warmup: %+v", *w)
	}
	if w := newWindows(19, 75, 50, 25); w.inWindow() || w.endOfWindow() {
		t.Error("warmup < 20 adapts the metric")
	}
}

// TestDualAveragingConverges runs the dual averaging update on a deterministic acceptance
// curve a(ε) = exp(−ε²) and checks that the averaged step size solves a(ε) = δ.
func TestDualAveragingConverges(t *testing.T) {
	for _, delta := range []float64{0.6, 0.8, 0.95} {
		da := &dualAveraging{delta: delta, gamma: 0.05, t0: 10, kappa: 0.75, mu: math.Log(10)}
		eps := 1.0
		for range 5000 {
			eps = da.learn(math.Exp(-eps * eps))
		}
		want := math.Sqrt(-math.Log(delta))
		// The iterates settle fast, but x̄ keeps a slowly decaying memory of the first ones
		// (weights ∝ t^−κ): after 5000 steps it is within 1.5% of the root for δ = 0.95
		// (0.2298 vs 0.2265, the same recursion run in Python). A
		// wrong sign or a missing √t gives errors of order 1.
		if got := da.final(); math.Abs(got/want-1) > 0.02 {
			t.Errorf("δ=%.2f: ε %.5f, want %.5f", delta, got, want)
		}
	}
}

// TestCovEstimator checks Welford's estimate and Stan's regularisation against the two-pass
// formulas.
func TestCovEstimator(t *testing.T) {
	r := rng.New(1, 2)
	const n, d = 40, 3
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{r.NormFloat64(), 2 * r.NormFloat64(), 0}
		x[i][2] = x[i][0] + 0.1*r.NormFloat64()
	}
	diag, dense := newCovEstimator(d, false), newCovEstimator(d, true)
	for _, v := range x {
		diag.add(v)
		dense.add(v)
	}
	var m [d]float64
	for _, v := range x {
		for j := range d {
			m[j] += v[j] / n
		}
	}
	cov := func(a, b int) float64 {
		var s float64
		for _, v := range x {
			s += (v[a] - m[a]) * (v[b] - m[b])
		}
		return s / (n - 1)
	}
	gd, gD := make([]float64, d), make([]float64, d*d)
	diag.regularised(gd)
	dense.regularised(gD)
	w, e := float64(n)/(n+5), 1e-3*5/(n+5)
	for a := range d {
		want := w*cov(a, a) + e
		// Welford and two-pass agree to rounding: 1e-12 relative.
		if math.Abs(gd[a]-want) > 1e-12*want {
			t.Errorf("diag[%d] = %v, want %v", a, gd[a], want)
		}
		for b := range d {
			want := w * cov(a, b)
			if a == b {
				want += e
			}
			if math.Abs(gD[a*d+b]-want) > 1e-12*math.Abs(want)+1e-15 {
				t.Errorf("dense[%d,%d] = %v, want %v", a, b, gD[a*d+b], want)
			}
		}
	}
}

// TestSamplePCovariance checks that dense momenta have covariance M = (M⁻¹)⁻¹ and that the
// kinetic energy's mean is D/2.
func TestSamplePCovariance(t *testing.T) {
	const d = 4
	inv := denseTestMetric(d)
	met, err := newMetric(d, Dense, inv)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(3, 4)
	p := make([]float64, d)
	tmp := make([]float64, d)
	const n = 200000
	var k float64
	var c [d * d]float64
	for range n {
		met.sampleP(r, p)
		k += met.kinetic(p, tmp)
		for i := range d {
			for j := range d {
				c[i*d+j] += p[i] * p[j] / n
			}
		}
	}
	// E[K] = D/2 with sd √(D/2)/√n ≈ 0.003: 5 sd.
	if math.Abs(k/n-d/2.0) > 5*math.Sqrt(d/2.0/n) {
		t.Errorf("mean kinetic energy %v, want %v", k/n, d/2.0)
	}
	// (M⁻¹)·Ĉov(p) ≈ I: each entry's MC error is ≈ √(2/n)·O(1) ≈ 0.003; 0.02 is > 5 sd.
	for i := range d {
		for j := range d {
			var s float64
			for k := range d {
				s += inv[i*d+k] * c[k*d+j]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(s-want) > 0.02 {
				t.Errorf("(M⁻¹ Cov p)[%d,%d] = %.4f, want %v", i, j, s, want)
			}
		}
	}
}

// TestTransitionAllocs checks that NUTS and static HMC transitions allocate nothing in steady
// state on a target whose gradient does not.
func TestTransitionAllocs(t *testing.T) {
	sys, z := testSystem(t, Diag, nil)
	r := rng.New(1, 1)
	for _, k := range []kernel{newNUTS(sys, r, 10, 1000), newStaticHMC(sys, r, 10, 1000)} {
		k.transition(&z, 0.2)
		if a := testing.AllocsPerRun(50, func() { k.transition(&z, 0.2) }); a != 0 {
			t.Errorf("%T: %v allocations per transition", k, a)
		}
	}
}

func BenchmarkNUTSEightSchools(b *testing.B) {
	sys, z := testSystem(&testing.T{}, Diag, nil)
	n := newNUTS(sys, rng.New(1, 1), 10, 1000)
	var leap int
	for b.Loop() {
		leap += n.transition(&z, 0.4).NLeapfrog
	}
	b.ReportMetric(float64(leap)/float64(b.N), "leapfrog/op")
}
