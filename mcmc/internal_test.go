package mcmc

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
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
	diag, dense := newCovEstimator(d, false, false), newCovEstimator(d, true, false)
	for _, v := range x {
		diag.add(v, nil)
		dense.add(v, nil)
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
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, kind := range []MetricKind{Diag, Dense} {
		var inv []float64
		if kind == Dense {
			inv = denseTestMetric(10)
		}
		sys, z := testSystem(t, kind, inv)
		r := rng.New(1, 1)
		for _, k := range []kernel{newNUTS(sys, r, 10, 1000), newStaticHMC(sys, r, 10, 1000)} {
			k.transition(&z, 0.2)
			if a := testing.AllocsPerRun(50, func() { k.transition(&z, 0.2) }); a != 0 {
				t.Errorf("%v %T: %v allocations per transition", kind, k, a)
			}
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

// TestFisherDiag checks the Fisher-divergence diagonal on Gaussian draws x ~ N(0, Σ) with
// gradients g = −Σ⁻¹x: the estimate is √(Σᵢᵢ/(Σ⁻¹)ᵢᵢ), here for Σ = [[1, 0.9], [0.9, 4]]
// (det 3.19, Σ⁻¹ = [[4, −0.9], [−0.9, 1]]/3.19), so √(1·3.19/4) = 0.89303 and
// √(4·3.19/1) = 3.57211, against marginal variances 1 and 4.
func TestFisherDiag(t *testing.T) {
	r := rng.New(5, 1)
	const n = 20000
	e := newCovEstimator(2, false, true)
	x, g := make([]float64, 2), make([]float64, 2)
	for range n {
		// Σ = LLᵀ with L = [[1, 0], [0.9, √(4 − 0.81)]].
		u, v := r.NormFloat64(), r.NormFloat64()
		x[0], x[1] = u, 0.9*u+math.Sqrt(3.19)*v
		g[0], g[1] = -(4*x[0]-0.9*x[1])/3.19, -(-0.9*x[0]+x[1])/3.19
		e.add(x, g)
	}
	got := make([]float64, 2)
	e.fisherDiag(got)
	// The ratio of two variance estimates from n draws has relative sd ≈ √(2·2/n) ≈ 0.014, so
	// its square root ≈ 0.007; 0.03 relative is > 4 sd.
	for i, want := range []float64{0.89303, 3.57211} {
		if math.Abs(got[i]/want-1) > 0.03 {
			t.Errorf("fisherDiag[%d] = %.5f, want %.5f", i, got[i], want)
		}
	}
}

// TestDenseHelps checks Auto's choice on Gaussian draws with their gradients: correlated
// draws (AR(1) correlation 0.7 in 6 dimensions, condition number ≈ 20) ask for a dense metric
// in windows of 50 draws and more, uncorrelated draws with scales spanning a factor 100 never
// do (windows of 25 included), and correlated draws whose gradients are 4 times too large for
// their covariance (curvature that a Gaussian of that covariance does not have) do not either.
func TestDenseHelps(t *testing.T) {
	const d = 6
	r := rng.New(9, 3)
	for _, c := range []struct {
		rho, gradScale float64
		want           bool
	}{{0, 1, false}, {0.7, 1, true}, {0.7, 4, false}} {
		rho := c.rho
		for _, n := range []int{25, 50, 100, 200, 500} {
			for rep := range 20 {
				e := newCovEstimator(d, true, true)
				z, x, g := make([]float64, d), make([]float64, d), make([]float64, d)
				for range n {
					z[0] = r.NormFloat64()
					for i := 1; i < d; i++ {
						z[i] = rho*z[i-1] + math.Sqrt(1-rho*rho)*r.NormFloat64()
					}
					// x = s⊙z with s from 0.1 to 10; ∇log π(x) = −s⁻¹⊙(P z) with P the AR(1)
					// precision (1/(1−ρ²))·tridiag(−ρ, 1+ρ², −ρ), corners 1.
					for i := range x {
						s := math.Pow(10, float64(i)/float64(d-1)*2-1)
						x[i] = s * z[i]
						pz := (1 + rho*rho) * z[i]
						if i == 0 || i == d-1 {
							pz = z[i]
						}
						if i > 0 {
							pz -= rho * z[i-1]
						}
						if i < d-1 {
							pz -= rho * z[i+1]
						}
						g[i] = -c.gradScale * pz / (1 - rho*rho) / s
					}
					e.add(x, g)
				}
				// With n ≥ 2D the uncorrelated sample correlation matrix has condition number
				// near the Marchenko–Pastur ratio κ₀ and exceeds 2κ₀ rarely; AR(1) with ρ = 0.7
				// has κ ≈ 20 at D = 6, above 2κ₀ = 8.4 at n = 50 … 2.9 at n = 500 (at n = 25,
				// 2κ₀ = 17 is too close to call). Gaussian gradients give λmax(LᵀGL) near
				// (1+√(D/n))² ≤ 2.4 against the bound 4(1+√(D/n))²; 4 times too large ones give
				// ≈ 16 against ≤ 9.5. 20 replicates of each.
				if got := e.denseHelps(); got != c.want && (n > 25 || got) {
					t.Errorf("ρ=%v gradient scale %v n=%d rep %d: denseHelps = %v, want %v", rho, c.gradScale, n, rep, got, c.want)
				}
			}
		}
	}
}

// TestMetricSwitch checks that an Auto metric moves between the diagonal and the dense form
// and that the kinetic energy follows: ½pᵀM⁻¹p for both.
func TestMetricSwitch(t *testing.T) {
	const d = 3
	m, err := newMetric(d, Auto, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, tmp := []float64{1, -2, 0.5}, make([]float64, d)
	if err := m.setDiag([]float64{2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	// ½(2·1 + 3·4 + 4·0.25) = 7.5 exactly.
	if k := m.kinetic(p, tmp); k != 7.5 || m.dense {
		t.Errorf("diagonal: K = %v (dense=%v), want 7.5", k, m.dense)
	}
	a := []float64{2, 0.5, 0, 0.5, 3, 0, 0, 0, 4}
	if err := m.setDense(a); err != nil {
		t.Fatal(err)
	}
	// ½(7.5·2 + 2·0.5·(1·−2)) = 7.5 − 1 = 6.5; exact in binary.
	if k := m.kinetic(p, tmp); k != 6.5 || !m.dense || len(m.inv) != d*d {
		t.Errorf("dense: K = %v (dense=%v, %d values), want 6.5", k, m.dense, len(m.inv))
	}
	if err := m.setDiag([]float64{1, 0, 1}); err == nil {
		t.Error("setDiag accepted a zero variance")
	}
	// Above autoMaxDim an Auto metric keeps no D×D storage.
	big, err := newMetric(autoMaxDim+1, Auto, nil)
	if err != nil {
		t.Fatal(err)
	}
	if big.denseInv != nil || big.dense {
		t.Errorf("Auto metric of dimension %d has dense storage", autoMaxDim+1)
	}
}
