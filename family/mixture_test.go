package family

import (
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// testMixture is a mixture of three members of different families in d = 3 (mean field, full
// rank, and low rank behind an affine map) with weights (0.2, 0.5, 0.3) and random parameters.
func testMixture(t *testing.T) (*Mixture, []float64) {
	t.Helper()
	r := rng.New(31, 0)
	aff, err := NewAffine(NewLowRank(3, 2), []float64{1, -1, 0.5}, []float64{2, 0.5, 1.5}, true)
	if err != nil {
		t.Fatal(err)
	}
	members := []Family{NewMeanField(3), NewFullRank(3), aff}
	m, err := NewMixture(members, []float64{2, 5, 3})
	if err != nil {
		t.Fatal(err)
	}
	var params []float64
	for _, f := range members {
		if a, ok := f.(*Affine); ok {
			f = a.Base
		}
		params = append(params, randParams(f, r)...)
	}
	return m, params
}

// TestMixtureLogDensityIsTheDirectSum: log q(z) of the mixture against log Σ_s w_s q_s(z)
// computed directly in probability space from gonum's normal densities (each member is a
// Gaussian), at points near and far from the members (where exp would underflow only in the
// far case, so the near points are compared with the direct sum and the far ones with the
// largest term, which dominates by many orders there).
func TestMixtureLogDensityIsTheDirectSum(t *testing.T) {
	m, p := testMixture(t)
	w := []float64{0.2, 0.5, 0.3}
	r := rng.New(32, 0)
	var tp ad.Tape
	for k := range 20 {
		z := randNormal(r, 3)
		direct := 0.0
		for s := range 3 {
			direct += w[s] * math.Exp(gonumNormal(t, m.Member(s), m.MemberParams(p, s)).LogProb(z))
		}
		want := math.Log(direct)
		if got := m.LogProb(p, z); !relClose(got, want, 1e-12) {
			t.Errorf("point %d: LogProb %.15g, direct %.15g", k, got, want)
		}
		tp.Reset()
		if got := tp.Float(m.LogDensity(&tp, tp.Const(p...), tp.Const(z...))); !relClose(got, want, 1e-12) {
			t.Errorf("point %d: LogDensity on the tape %.15g, direct %.15g", k, got, want)
		}
	}
	far := []float64{60, -40, 80}
	top := math.Inf(-1)
	for s := range 3 {
		top = math.Max(top, math.Log(w[s])+gonumNormal(t, m.Member(s), m.MemberParams(p, s)).LogProb(far))
	}
	if got := m.LogProb(p, far); math.IsInf(got, 0) || got < top-1e-12*math.Abs(top) || got > top+math.Log(3) {
		t.Errorf("far point: LogProb %g, want within [max term %g, + log 3]", got, top)
	}
}

// TestMixtureDrawGradientAndConsistency: Draw and Sample agree (z and log q, to rounding), the tape's
// gradients of log q at a point and of a draw's log q match finite differences of the float64
// code (fdTol as in family_test.go), and every member is drawn.
func TestMixtureDrawGradientAndConsistency(t *testing.T) {
	m, p := testMixture(t)
	r := rng.New(33, 0)
	var tp ad.Tape
	seen := map[int]bool{}
	zbuf := make([]float64, 3)
	for range 12 {
		eps := randNormal(r, m.NoiseDim())
		seen[m.Choose(eps[0])] = true
		tp.Reset()
		pv := tp.Input(p)
		z, lq := m.Draw(&tp, pv, eps)
		lqs := m.Sample(p, eps, zbuf)
		for i, v := range tp.Value(z) {
			if !relClose(v, zbuf[i], 1e-14) { // the tape's matrix-vector product may round differently
				t.Fatalf("Draw z %v, Sample z %v", tp.Value(z), zbuf)
			}
		}
		if !relClose(tp.Float(lq), lqs, 1e-13) {
			t.Fatalf("Draw log q %.17g, Sample %.17g", tp.Float(lq), lqs)
		}
		tp.Backward(lq)
		checkGrad(t, "mixture ∂logq(draw)/∂φ", tp.Grad(pv), fdGrad(func(x []float64) float64 { return m.Sample(x, eps, zbuf) }, p))
		zz := append([]float64(nil), zbuf...)
		tp.Reset()
		pv, zv := tp.Input(p), tp.Input(zz)
		tp.Backward(m.LogDensity(&tp, pv, zv))
		checkGrad(t, "mixture ∂logq/∂φ", tp.Grad(pv), fdGrad(func(x []float64) float64 { return m.LogProb(x, zz) }, p))
		checkGrad(t, "mixture ∂logq/∂z", tp.Grad(zv), fdGrad(func(x []float64) float64 { return m.LogProb(p, x) }, zz))
	}
	if len(seen) != 3 {
		t.Errorf("12 draws chose members %v, want all 3", seen)
	}
}

// TestMixtureMoments: the mixture's mean and covariance against the Monte Carlo moments of
// 200,000 of its draws. Each entry's Monte Carlo standard error is at most
// sd(z_i z_j)/√n ≈ 4/447 < 0.01 here; the tolerance 0.05 is > 5 standard errors
// (false-failure rate < 1e-6 per entry).
func TestMixtureMoments(t *testing.T) {
	m, p := testMixture(t)
	d := 3
	mean, cov := make([]float64, d), make([]float64, d*d)
	m.Moments(p, mean, cov)
	r := rng.New(34, 0)
	const n = 200000
	z := make([]float64, d)
	sm, sc := make([]float64, d), make([]float64, d*d)
	eps := make([]float64, m.NoiseDim())
	for range n {
		for k := range eps {
			eps[k] = r.NormFloat64()
		}
		m.Sample(p, eps, z)
		for i := range d {
			sm[i] += z[i] / n
			for j := range d {
				sc[i*d+j] += z[i] * z[j] / n
			}
		}
	}
	for i := range d {
		if math.Abs(sm[i]-mean[i]) > 0.05 {
			t.Errorf("mean[%d] %g, Monte Carlo %g", i, mean[i], sm[i])
		}
		for j := range d {
			if mc := sc[i*d+j] - sm[i]*sm[j]; math.Abs(mc-cov[i*d+j]) > 0.05 {
				t.Errorf("cov[%d,%d] %g, Monte Carlo %g", i, j, cov[i*d+j], mc)
			}
		}
	}
}

// TestMixtureStrata: the stratified assignment gives every prefix each member's share up to
// one draw, is the round robin for uniform weights, skips zero weights, and SampleStratified
// follows it.
func TestMixtureStrata(t *testing.T) {
	m, p := testMixture(t)
	st := m.Strata(1000)
	c := make([]float64, 3)
	w := m.Weights()
	for i, s := range st {
		c[s]++
		for j := range 3 {
			if math.Abs(c[j]-float64(i+1)*w[j]) > 1 {
				t.Fatalf("after %d draws member %d has %g, share %g", i+1, j, c[j], float64(i+1)*w[j])
			}
		}
	}
	u, _ := NewMixture([]Family{NewMeanField(2), NewMeanField(2), NewMeanField(2)}, nil)
	for i, s := range u.Strata(9) {
		if s != i%3 {
			t.Fatalf("uniform strata %v, want the round robin", u.Strata(9))
		}
	}
	zw, _ := NewMixture([]Family{NewMeanField(2), NewMeanField(2)}, []float64{0, 1})
	for _, s := range zw.Strata(10) {
		if s != 1 {
			t.Fatalf("zero-weight member drawn: %v", zw.Strata(10))
		}
	}
	for _, e := range []float64{-40, -1, 0, 1, 40} {
		if zw.Choose(e) != 1 {
			t.Fatalf("Choose(%g) = %d picks a member of zero weight", e, zw.Choose(e))
		}
	}
	// SampleStratified: draw i is member Strata[i]'s draw with that member's noise.
	n := 7
	z, lq := make([]float64, n*3), make([]float64, n)
	r := rng.New(35, 0)
	if !SampleStratified(m, p, n, r.NormFloat64, z, lq) {
		t.Fatal("SampleStratified refused a mixture")
	}
	r = rng.New(35, 0)
	zi := make([]float64, 3)
	for i, s := range m.Strata(n) {
		eps := randNormal(r, m.Member(s).NoiseDim())
		want := m.SampleMember(p, s, eps, zi)
		if want != lq[i] || zi[0] != z[i*3] {
			t.Fatalf("stratified draw %d: log q %g, member %d's draw %g", i, lq[i], s, want)
		}
	}
	if SampleStratified(NewMeanField(3), p[:6], 1, r.NormFloat64, z[:3], lq[:1]) {
		t.Fatal("SampleStratified accepted a family that is not a mixture")
	}
}

func TestNewMixtureErrors(t *testing.T) {
	mf := NewMeanField(2)
	for _, c := range []struct {
		members []Family
		weights []float64
		want    string
	}{
		{nil, nil, "no members"},
		{[]Family{mf, NewFullRank(3)}, nil, "member 1 has dimension 3, member 0 has 2"},
		{[]Family{mf, mf}, []float64{1}, "1 weights for 2 members"},
		{[]Family{mf, mf}, []float64{1, -1}, "weight 1 is -1"},
		{[]Family{mf, mf}, []float64{1, math.NaN()}, "weight 1 is NaN"},
		{[]Family{mf, mf}, []float64{0, 0}, "weights sum to 0"},
		{make([]Family, MaxMixtureMembers+1), nil, "members, want at most"},
	} {
		_, err := NewMixture(c.members, c.weights)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewMixture: %v, want %q", err, c.want)
		}
	}
}
