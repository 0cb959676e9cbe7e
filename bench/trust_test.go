package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

func synthetic(t *testing.T, name string) TrustPosterior {
	t.Helper()
	for _, p := range SyntheticPosteriors() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no synthetic posterior %q", name)
	return TrustPosterior{}
}

// logp evaluates a target's log density (value only): a model.GradFunc directly (fast enough
// for quadrature), another target through the tape.
func logp(tg model.Target) func(z []float64) float64 {
	if gf, ok := tg.(model.GradFunc); ok {
		g := make([]float64, gf.N)
		return func(z []float64) float64 { return gf.F(z, g) }
	}
	return func(z []float64) float64 {
		var tp ad.Tape
		return tp.Float(tg.LogDensity(&tp, tp.Input(z)))
	}
}

// trapezoid2D is log ∫∫ exp(f) over [x0, x1] × [y0, y1] by the trapezoid rule with step h.
func trapezoid2D(f func(z []float64) float64, x0, x1, y0, y1, h float64) float64 {
	nx, ny := int(math.Round((x1-x0)/h)), int(math.Round((y1-y0)/h))
	z := make([]float64, 2)
	s := 0.0
	for i := 0; i <= nx; i++ {
		for j := 0; j <= ny; j++ {
			w := 1.0
			if i == 0 || i == nx {
				w *= 0.5
			}
			if j == 0 || j == ny {
				w *= 0.5
			}
			z[0], z[1] = x0+h*float64(i), y0+h*float64(j)
			s += w * math.Exp(f(z))
		}
	}
	return math.Log(s * h * h)
}

// TestSyntheticLogZ2D checks the closed-form log Z of the 2-D synthetic targets by quadrature.
// The boxes leave out mass below 1e-8 (≥ 5.6 sd of every component); the trapezoid rule with
// h = 0.02 on these smooth densities is exact to far below that, so 1e-6 is a wide margin.
func TestSyntheticLogZ2D(t *testing.T) {
	for _, c := range []struct {
		name           string
		x0, x1, y0, y1 float64
	}{
		{"gmix-d2", -8, 11, -8, 11},
		{"banana", -9, 9, -8, 45}, // x₂'s mean 0.5(x₁² − 2.25) reaches 39 at x₁ = 9 (6 sd)
	} {
		p := synthetic(t, c.name)
		got := trapezoid2D(logp(p.Target), c.x0, c.x1, c.y0, c.y1, 0.02)
		if math.Abs(got-p.LogZ) > 1e-6 {
			t.Errorf("%s: log Z by quadrature %.9f, closed form %.9f", c.name, got, p.LogZ)
		}
	}
}

// TestMixtureDensity checks the mixtures of d = 4 and 10 against a direct sum of
// dist.Normal log densities at a few points (rounding only: 1e-12).
func TestMixtureDensity(t *testing.T) {
	for _, c := range []struct {
		name string
		w    []float64
		mu   []float64 // per component, every coordinate
		sd   []float64
		c    float64
	}{
		{"gmix-d10", []float64{0.3, 0.7}, []float64{-0.5, 2}, []float64{1, 1}, 2},
		{"localmode-d4", []float64{0.1, 0.9}, []float64{0, 2.5}, []float64{0.5, 1}, -1},
	} {
		p := synthetic(t, c.name)
		d := p.Target.Dim()
		r := rng.New(3, 0)
		for range 5 {
			z := make([]float64, d)
			for i := range z {
				z[i] = 3 * r.NormFloat64()
			}
			var l []float64
			for k := range c.w {
				s := math.Log(c.w[k])
				for _, zi := range z {
					s += dist.Normal{Mu: c.mu[k], Sigma: c.sd[k]}.LogProb(zi)
				}
				l = append(l, s)
			}
			want := mathx.LogSumExp(l) + c.c
			if got := logp(p.Target)(z); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("%s at %v: log p %.15g, direct %.15g", c.name, z, got, want)
			}
		}
	}
}

// TestSinusoidMarginal checks the closed-form marginal of ω against quadrature of the joint
// over a (a Gaussian in a of sd ≤ 1, integrated over ±12 around its mean with h = 0.001:
// exact to ~1e-12), and the grid's log Z against a coarser grid (trapezoid on 2·10⁵ vs
// 10⁵ intervals: they agree to the second grid's error, ~1e-8 for a posterior sd of 0.02).
func TestSinusoidMarginal(t *testing.T) {
	s := newSinusoid()
	for _, w := range []float64{-1, 0.3, 1.9, 2.0, 3.7} {
		lp, m, v := s.marginal(w)
		const h = 0.001
		var l []float64
		for a := m - 12; a <= m+12; a += h {
			l = append(l, s.logp([]float64{w, a}, nil)+math.Log(h))
		}
		if got := mathx.LogSumExp(l); math.Abs(got-lp) > 1e-8 {
			t.Errorf("ω=%v: log ∫ p da by quadrature %.12f, closed form %.12f (a | ω: mean %.3f var %.3g)", w, got, lp, m, v)
		}
	}
	p := synthetic(t, "sinusoid")
	coarse := newGrid1D(func(w float64) float64 { lp, _, _ := s.marginal(w); return lp }, -8, 10, 100000)
	if math.Abs(coarse.logZ-p.LogZ) > 1e-6 {
		t.Errorf("sinusoid log Z: %d-interval grid %.9f, 10⁵-interval grid %.9f", 200000, p.LogZ, coarse.logZ)
	}
}

// TestSyntheticGradients checks every synthetic target's gradient against central
// differences at random points (h = 1e-5; truncation h²|f”'| and rounding 1e-16·|f|/h stay
// below 1e-8 for these smooth densities of moderate size, so tolerance 1e-6 relative).
func TestSyntheticGradients(t *testing.T) {
	posts := append(SyntheticPosteriors(), Target1D("n", "", func(x float64) float64 { return -0.5 * x * x }, func(x float64) float64 { return -x }, -10, 10, 1000))
	r := rng.New(5, 0)
	for _, p := range posts {
		d := p.Target.Dim()
		for range 4 {
			z := make([]float64, d)
			for i := range z {
				z[i] = 1 + 1.5*r.NormFloat64()
			}
			g := make([]float64, d)
			var tp ad.Tape
			model.Gradient(&tp, p.Target, z, g)
			checkFD(t, p.Name, logp(p.Target), z, g, fdStep, fdTol)
		}
	}
}

// momentCheck compares the sample mean and mean square of each column of draws (n × d) with
// their exact values; the tolerance is 5 standard errors (estimated from the draws), a false
// failure rate of 6e-7 per check.
func momentCheck(t *testing.T, name string, draws []float64, d int, mean, meanSq []float64) {
	t.Helper()
	n := len(draws) / d
	for j := range d {
		var s1, s2, s3, s4 float64
		for i := range n {
			x := draws[i*d+j]
			s1 += x
			s2 += x * x
			s3 += x * x * x
			s4 += x * x * x * x
		}
		nn := float64(n)
		m1, m2 := s1/nn, s2/nn
		se1 := math.Sqrt((m2 - m1*m1) / nn)
		se2 := math.Sqrt((s4/nn - m2*m2) / nn)
		if math.Abs(m1-mean[j]) > 5*se1 {
			t.Errorf("%s: mean of column %d = %.4f, want %.4f (SE %.4f)", name, j, m1, mean[j], se1)
		}
		if math.Abs(m2-meanSq[j]) > 5*se2 {
			t.Errorf("%s: mean square of column %d = %.4f, want %.4f (SE %.4f)", name, j, m2, meanSq[j], se2)
		}
	}
}

// TestExactSamplers checks the exact samplers' first two moments: mixtures E x = Σ w_k μ_k,
// E x² = Σ w_k (μ_k² + s_k²); banana E x₁ = 0, E x₁² = a², E x₂ = 0, E x₂² = 1 + 2 a⁴ b²; the
// grid sampler on N(1, 0.5²): E x = 1, E x² = 1.25.
func TestExactSamplers(t *testing.T) {
	r := rng.New(9, 0)
	const n = 40000
	g := &gaussMix{d: 3, w: []float64{0.3, 0.7}, mu: [][]float64{constVec(3, -1), constVec(3, 4)}, sd: []float64{1, 0.5}}
	momentCheck(t, "mixture", g.sample(r, n), 3, constVec(3, 0.3*-1+0.7*4), constVec(3, 0.3*2+0.7*16.25))
	b := banana{a: 1.5, b: 0.5}
	momentCheck(t, "banana", b.sample(r, n), 2, []float64{0, 0}, []float64{2.25, 1 + 2*math.Pow(1.5, 4)*0.25})
	p := Target1D("n", "", func(x float64) float64 { return -2*(x-1)*(x-1) + 3 }, func(x float64) float64 { return -4 * (x - 1) }, -5, 7, 120000)
	if want := 3 + math.Log(math.Sqrt(2*math.Pi)*0.5); math.Abs(p.LogZ-want) > 1e-9 {
		t.Errorf("Target1D log Z %.12f, want %.12f", p.LogZ, want)
	}
	ref, err := p.Ref()
	if err != nil {
		t.Fatal(err)
	}
	momentCheck(t, "grid", ref.Chains[0], 1, []float64{1}, []float64{1.25})
}

// TestEightSchoolsCenteredGradient checks the centred eight schools' gradient, and its log
// density against a direct sum: N(θ | μ, τ), N(y | θ, σ), N(μ | 0, 5), half-Cauchy(τ | 5) and
// log J = log τ.
func TestEightSchoolsCenteredGradient(t *testing.T) {
	p := EightSchoolsCentered()
	r := rng.New(2, 0)
	for _, lt := range []float64{-2, 0.5, 2.5} {
		z := make([]float64, 10)
		for i := range 9 {
			z[i] = 5 * r.NormFloat64()
		}
		z[9] = lt
		tau := math.Exp(lt)
		want := dist.Normal{Mu: 0, Sigma: 5}.LogProb(z[8]) + math.Log(2/(math.Pi*5*(1+tau*tau/25))) + lt
		for j := range 8 {
			want += dist.Normal{Mu: z[8], Sigma: tau}.LogProb(z[j]) + dist.Normal{Mu: z[j], Sigma: eightSchoolsData.sigma[j]}.LogProb(eightSchoolsData.y[j])
		}
		if got := logp(p.Target)(z); math.Abs(got-want) > 1e-10*max(1, math.Abs(want)) {
			t.Errorf("log τ=%v: log p %.12g, direct %.12g", lt, got, want)
		}
		g := make([]float64, 10)
		var tp ad.Tape
		model.Gradient(&tp, p.Target, z, g)
		checkFD(t, "eight schools centred", logp(p.Target), z, g, fdStep, fdTol)
	}
}

// TestBBallHMM checks hmm_drive_1's log density against a direct log-space forward
// algorithm (logsumexp per step, dist densities) and its gradient against central
// differences, near the reference posterior's mean and at a point far from it.
func TestBBallHMM(t *testing.T) {
	sh := datadir.SharedOrSkip(t)
	full := filepath.Join(sh, "data", "posteriordb-full")
	p, err := BBallTrustPosterior(full)
	if err != nil {
		t.Skipf("posteriordb-full not readable: %v", err)
	}
	m, err := newHMMDrive(filepath.Join(full, "data", "bball_drive_event_1.json.zip"))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float64{
		{0.97, 0.03, 0.01, 0.99, -2.34, -0.74, 2.43, 3.54}, // reference means
		{0.6, 0.4, 0.3, 0.7, -1, 0.5, 1, 2.5},
	} {
		z := make([]float64, m.lay.Dim())
		if err := m.lay.Free(x, z); err != nil {
			t.Fatal(err)
		}
		xc := make([]float64, m.lay.Len())
		logJ := m.lay.ConstrainValues(z, xc)
		A := [2][2]float64{{xc[0], xc[1]}, {xc[2], xc[3]}}
		phi, lam := xc[4:6], xc[6:8]
		want := logJ + dist.Dirichlet{Alpha: m.alpha[:2]}.LogProb(xc[0:2]) + dist.Dirichlet{Alpha: m.alpha[2:]}.LogProb(xc[2:4])
		want += dist.Normal{Mu: 0, Sigma: 1}.LogProb(phi[0]) + dist.Normal{Mu: 3, Sigma: 1}.LogProb(phi[1])
		want += dist.Normal{Mu: 0, Sigma: 1}.LogProb(lam[0]) + dist.Normal{Mu: 3, Sigma: 1}.LogProb(lam[1])
		e := func(i, k int) float64 {
			return dist.Normal{Mu: phi[k], Sigma: m.tau}.LogProb(m.u[i]) + dist.Normal{Mu: lam[k], Sigma: m.rho}.LogProb(m.v[i])
		}
		g := []float64{e(0, 0), e(0, 1)}
		for i := 1; i < len(m.u); i++ {
			var ng [2]float64
			for k := range 2 {
				ng[k] = mathx.LogSumExp([]float64{g[0] + math.Log(A[0][k]), g[1] + math.Log(A[1][k])}) + e(i, k)
			}
			g = ng[:]
		}
		want += mathx.LogSumExp(g)
		if got := logp(p.Target)(z); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("at %v: log p %.12g, direct forward algorithm %.12g", x, got, want)
		}
		grad := make([]float64, len(z))
		var tp ad.Tape
		model.Gradient(&tp, p.Target, z, grad)
		checkFD(t, "hmm_drive_1", logp(p.Target), z, grad, fdStep, 1e-5) // |log p| ≈ 2000: rounding 1e-16·2000/1e-5 = 2e-8 absolute
	}
}

func TestVerdictClass(t *testing.T) {
	for v, want := range map[string]string{
		"k̂ = 0.42: reliable": ClassReliable,
		"k̂ = 0.58: usable — the approximation is rough; PSIS-weighted estimates are reliable":          ClassUsable,
		"k̂ = 0.8: unreliable — the approximation misses the posterior's tails":                         ClassUnreliable,
		"k̂ = 0.69: unreliable with 1000 draws — PSIS needs at least 2000 draws":                        ClassUnreliable,
		"k̂ = 2.1: do not trust this approximation — try a richer family":                               ClassNoTrust,
		"starts found 2 modes 60 nats apart; the best is kept; the posterior may be multimodal: k̂ 0.4": ClassMultimodal,
		"4 of 4 starts reached one mode; k̂ 0.41: reliable":                                             ClassReliable,
		"something else": ClassOther,
	} {
		if got := VerdictClass(v); got != want {
			t.Errorf("VerdictClass(%q) = %q, want %q", v, got, want)
		}
	}
}

// fakeMethod returns a fit whose draws are n exact draws of the mixture component k of gmix-d2
// (k < 0: of the whole mixture), with log q that component's density (k < 0: the mixture's),
// and the given verdict.
func fakeMethod(name string, k int, verdict string) TrustMethod {
	mix := &gaussMix{d: 2, w: []float64{0.3, 0.7}, mu: [][]float64{constVec(2, -1), constVec(2, 4)}, sd: []float64{1, 1}, lgc: 2}
	q := &gaussMix{d: 2, w: mix.w, mu: mix.mu, sd: mix.sd} // log Z = 0
	if k >= 0 {
		q = &gaussMix{d: 2, w: []float64{1}, mu: [][]float64{mix.mu[k]}, sd: []float64{1}}
	}
	return TrustMethod{Name: name, Fit: func(_ context.Context, tg model.Target, seed uint64) (TrustFit, error) {
		const n = 1000
		draws := q.sample(rng.New(seed, 99), n)
		res := &fit.Result{Draws: draws, Verdict: verdict, KHat: 0.3}
		for i := range n {
			z := draws[2*i : 2*i+2]
			res.LogP = append(res.LogP, mix.logp(z, nil))
			res.LogQ = append(res.LogQ, q.logp(z, nil))
		}
		return TrustFit{Result: res, GradEvals: 7}, nil
	}}
}

// TestRunTrustSmoke runs the harness on gmix-d2 with fits of known quality: one on the minor
// component only, with a reassuring verdict (a false reassurance: W1/sd ≈ 1.4, log Z
// underestimated by log(1/0.3) = 1.20 by importance sampling, as q misses the major mode), one
// of exact draws (W1/sd at the Monte Carlo floor, IS exact: log p − log q = log Z on every draw).
// Then the JSON round trip and the markdown.
func TestRunTrustSmoke(t *testing.T) {
	p := synthetic(t, "gmix-d2")
	var seen int
	set, err := RunTrust(context.Background(), "test", TrustConfig{
		Posteriors: []TrustPosterior{p},
		Methods:    []TrustMethod{fakeMethod("minor", 0, "k̂ = 0.30: reliable"), fakeMethod("exact", -1, "k̂ = 0.30: reliable")},
		Seeds:      2, Progress: func(TrustRun) { seen++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 4 || seen != 4 {
		t.Fatalf("%d runs, %d progress calls, want 4 and 4", len(set.Runs), seen)
	}
	for _, r := range set.Runs {
		if r.Err != "" || r.GradEvals != 7 || r.Class != ClassReliable {
			t.Errorf("%s seed %d: error %q, gradients %d, class %q", r.Method, r.Seed, r.Err, r.GradEvals, r.Class)
		}
		switch r.Method {
		case "minor":
			// W1 of each coordinate: the major component's 0.7 mass is 5 away: W1 ≥ 0.7·5 − noise, sd ≈ 2.4.
			if !r.FalseReassurance() || r.W1SD < 1 || math.Abs(float64(r.LogZIS-r.LogZ)-math.Log(0.3)) > 1e-3 {
				t.Errorf("minor seed %d: FR %v, W1/sd %.3f, ΔlogZ IS %.4f (want FR, > 1, log 0.3)", r.Seed, r.FalseReassurance(), r.W1SD, r.LogZIS-r.LogZ)
			}
		case "exact":
			// Two exact samples (1,000 vs 10,000): W1/sd ≈ 0.03; 0.1 is ≥ 5 times that.
			if r.FalseReassurance() || r.W1SD > FalseReassuranceW1 || math.Abs(float64(r.LogZIS-r.LogZ)) > 1e-9 {
				t.Errorf("exact seed %d: FR %v, W1/sd %.3f, ΔlogZ IS %.3g", r.Seed, r.FalseReassurance(), r.W1SD, r.LogZIS-r.LogZ)
			}
		}
	}
	var buf bytes.Buffer
	if err := set.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadTrustSet(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 4 || back.Runs[0] != set.Runs[0] {
		t.Errorf("round trip: %d runs, first %+v, want %+v", len(back.Runs), back.Runs[0], set.Runs[0])
	}
	var nan struct{ X JFloat }
	if b, err := json.Marshal(struct{ X JFloat }{JFloat(math.Inf(1))}); err != nil || string(b) != `{"X":null}` || json.Unmarshal(b, &nan) != nil || !math.IsNaN(float64(nan.X)) {
		t.Errorf("JFloat(+Inf): %s, %v; read back %v, want null and NaN", b, err, nan.X)
	}
	buf.Reset()
	rep := &TrustReport{Sets: []*TrustSet{back, set}, Posteriors: []TrustPosterior{p}}
	if err := rep.Markdown(&buf, resultmd.New("vigo bench trust", "abc")); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if !strings.Contains(md, "| test | minor | 2 | 2 | 2 | 1.00 |") || !strings.Contains(md, "| test | exact | 2 | 2 | 0 | 0.00 |") {
		t.Errorf("markdown lacks the false-reassurance rows:\n%s", md)
	}
}
