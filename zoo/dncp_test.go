package zoo

import (
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// TestDNCPToyCorrelations checks the closed forms against the posterior covariance computed
// by conditioning the joint Gaussian of the generative model on x, with Debian's numpy:
//
//	import numpy as np
//	def post_corr(sx, sz, dncp):
//	    A = np.array([[1,0,0,0],[1,sz,0,0] if not dncp else [0,1,0,0],[1,0,sx,0],[1,sz,0,sx]],dtype=float)
//	    S = A@A.T  # (z1, z2 or e2, x1, x2) = A·(z1, e2, n1, n2)
//	    Sll, Slx, Sxx = S[:2,:2], S[:2,2:], S[2:,2:]
//	    P = Sll - Slx@np.linalg.solve(Sxx, Slx.T)
//	    return P[0,1]/np.sqrt(P[0,0]*P[1,1])
func TestDNCPToyCorrelations(t *testing.T) {
	for _, c := range []struct{ sx, sz, cp, dncp float64 }{
		{1, 0.1, 0.9852336290568343, -0.05744849896214261},
		{1, 3, 0.07254762501100123, -0.5477225575051659},
		{0.5, 1, 0.18257418583505514, -0.5962847939999437},
		{1, 1, 0.408248290463863, -0.40824829046386313},
	} {
		cp, dncp := DNCPToy{SigmaX: c.sx, SigmaZ: c.sz}.Correlations()
		// 1e-13: a handful of roundings on both sides (numpy's solve, our square roots).
		if math.Abs(cp-c.cp) > 1e-13 || math.Abs(dncp-c.dncp) > 1e-13 {
			t.Errorf("σ_x=%v σ_z=%v: correlations %.17g, %.17g, want %.17g, %.17g", c.sx, c.sz, cp, dncp, c.cp, c.dncp)
		}
	}
}

// checkTargetGradient compares tg's gradient at z with central differences.
func checkTargetGradient(t *testing.T, name string, tg model.Target, z []float64) {
	t.Helper()
	tape := new(ad.Tape)
	g := make([]float64, len(z))
	model.Gradient(tape, tg, z, g)
	zz := append([]float64(nil), z...)
	tmp := make([]float64, len(z))
	for i := range z {
		const h = 1e-6
		zz[i] = z[i] + h
		up := model.Gradient(tape, tg, zz, tmp)
		zz[i] = z[i] - h
		down := model.Gradient(tape, tg, zz, tmp)
		zz[i] = z[i]
		fd := (up - down) / (2 * h)
		// Central differences with h = 1e-6: truncation O(h²·f‴) ≈ 1e-12 and cancellation
		// ≈ 1e-16·|f|/h ≈ 1e-9 for |f| ≈ 10; 1e-6 relative leaves a wide margin.
		if math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("%s: ∂/∂z[%d] = %.10g, finite differences %.10g", name, i, g[i], fd)
		}
	}
}

func TestDNCPToyForms(t *testing.T) {
	toy := DNCPToy{SigmaX: 0.7, SigmaZ: 0.3, X1: 0.5, X2: 1.5}
	u := []float64{0.4, -1.2}
	checkTargetGradient(t, "toy CP", toy.Centred(), []float64{0.4, 0.1})
	checkTargetGradient(t, "toy DNCP", toy.NonCentred(), u)
	z := make([]float64, 2)
	toy.FromNoise(z, u)
	back := make([]float64, 2)
	toy.ToNoise(back, z)
	tape := new(ad.Tape)
	g := make([]float64, 2)
	lpC := model.Gradient(tape, toy.Centred(), z, g)
	lpN := model.Gradient(tape, toy.NonCentred(), u, g)
	// log p(z₁, ε₂) = log p(z₁, z₂) + log σ_z, exact up to a few roundings.
	if d := lpN - lpC - math.Log(toy.SigmaZ); math.Abs(d) > 1e-13 || math.Abs(back[1]-u[1]) > 1e-14 {
		t.Errorf("DNCP − CP − log σ_z = %g; round trip ε₂ %v → %v", d, u[1], back[1])
	}
}

// TestTanhDBN checks both forms' gradients by finite differences, the change of variables
// log p(ε, x) = log p(z(ε), x) + K(T−1)·log σ_z, the round trip z → ε → z and that a
// gradient allocates nothing.
func TestTanhDBN(t *testing.T) {
	m, err := NewTanhDBN(4, 2, 3, 0.3, 5)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Dim()
	r := rng.New(9, 0)
	eps := make([]float64, n)
	for i := range eps {
		eps[i] = r.NormFloat64()
	}
	z := make([]float64, n)
	m.FromNoise(z, eps)
	checkTargetGradient(t, "DBN CP", m.Centred(), z)
	checkTargetGradient(t, "DBN DNCP", m.NonCentred(), eps)
	back := make([]float64, n)
	m.ToNoise(back, z)
	for i := range eps {
		// Round trip through tanh and a division by σ_z: a few ulps of values of order 1.
		if math.Abs(back[i]-eps[i]) > 1e-13 {
			t.Errorf("round trip ε[%d] %v → %v", i, eps[i], back[i])
		}
	}
	tape := new(ad.Tape)
	g := make([]float64, n)
	lpC := model.Gradient(tape, m.Centred(), z, g)
	lpN := model.Gradient(tape, m.NonCentred(), eps, g)
	// Sums of ≈ 30 terms of order 1–10: 1e-12.
	if d := lpN - lpC - float64(m.K*(m.T-1))*math.Log(m.SigmaZ); math.Abs(d) > 1e-12 {
		t.Errorf("DNCP − CP − K(T−1) log σ_z = %g, want 0", d)
	}
	var ones int
	for _, x := range m.X {
		if x != 0 && x != 1 {
			t.Fatalf("observation %v is not binary", x)
		}
		ones += int(x)
	}
	if ones == 0 || ones == len(m.X) {
		t.Errorf("%d of %d observations are 1: the simulated data carry no information", ones, len(m.X))
	}
	for _, tg := range []model.Target{m.Centred(), m.NonCentred()} {
		if a := testing.AllocsPerRun(50, func() { model.Gradient(tape, tg, z, g) }); a != 0 {
			t.Errorf("%.0f allocations per gradient, want 0", a)
		}
	}
}

// TestNewTanhDBNErrors: bad shapes and σ_z are refused with the argument named.
func TestNewTanhDBNErrors(t *testing.T) {
	for _, c := range []struct {
		T, K, P int
		sigma   float64
		want    string
	}{
		{0, 2, 3, 0.3, "T=0"}, {4, 0, 3, 0.3, "K=0"}, {4, 2, -1, 0.3, "P=-1"},
		{4, 2, 3, 0, "sigma_z=0"}, {4, 2, 3, math.NaN(), "sigma_z=NaN"}, {4, 2, 3, math.Inf(1), "sigma_z=+Inf"},
	} {
		if _, err := NewTanhDBN(c.T, c.K, c.P, c.sigma, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewTanhDBN(%d, %d, %d, %v): error %v, want one naming %q", c.T, c.K, c.P, c.sigma, err, c.want)
		}
	}
}
