package bfvi

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// TestRubin checks the combination on a hand example (the paper's NCP per-run k̂ with made-up
// bootstrap variances) against numpy:
//
//	/usr/bin/python3 -c "import numpy as np; k=np.array([0.396,0.282,0.480,0.250,0.409]);
//	  v=np.array([0.01,0.02,0.01,0.015,0.005]); m=k.mean();
//	  h=1.6448536269514722*np.sqrt(v.mean()+(1+1/5)*k.var(ddof=1)); print(m, m-h, m+h)"
//
// gives 0.3634 0.1146681083112549 0.612131891688745.
func TestRubin(t *testing.T) {
	m, lo, hi := Rubin([]float64{0.396, 0.282, 0.480, 0.250, 0.409}, []float64{0.01, 0.02, 0.01, 0.015, 0.005})
	// A handful of sums and one square root: rounding ~1e-16.
	for _, c := range [][2]float64{{m, 0.3634}, {lo, 0.1146681083112549}, {hi, 0.612131891688745}} {
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Errorf("got %.17g, want %.17g", c[0], c[1])
		}
	}
}

// TestBootstrapKHat checks that the bootstrap variance is positive and small for a light
// tail (Gaussian log ratios of 2,000 draws) and that b < 2 gives no variance.
func TestBootstrapKHat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lr := make([]float64, 2000)
	for i := range lr {
		lr[i] = 0.3 * rng.NormFloat64()
	}
	k, v, err := BootstrapKHat(lr, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Log-normal weights with σ = 0.3 have a light tail: k̂ well below 0.5; the bootstrap
	// sd of k̂ at S = 2,000 is of order 0.1, so the variance lies in (0, 0.1).
	if k > 0.5 || v <= 0 || v > 0.1 {
		t.Errorf("k̂ %.3f, bootstrap var %.4g", k, v)
	}
	if _, v0, _ := BootstrapKHat(lr, 0, 1); v0 != 0 {
		t.Errorf("b = 0: var %g, want 0", v0)
	}
}

// TestNNRegressionValue pins E4's target at z_i = 0.3i − 1 against numpy:
//
//	/usr/bin/python3 -c "import numpy as np; x=np.array([...nnX]); y=np.array([...nnY]);
//	  z=0.3*np.arange(10)-1; f=z[9]+sum(z[6+k]/(1+np.exp(-(z[k]*x+z[3+k]))) for k in range(3));
//	  print(repr(-12.5*np.sum((y-f)**2)-0.5*np.sum(z**2)))"
//
// gives −2078.871613550175. The gradient is checked by central differences.
func TestNNRegressionValue(t *testing.T) {
	var tp ad.Tape
	x := make([]float64, 10)
	for i := range x {
		x[i] = 0.3*float64(i) - 1
	}
	g := make([]float64, 10)
	f := func(t *ad.Tape, z ad.Var) ad.Var { return NNRegression{}.LogDensity(t, z) }
	got := ad.Gradient(&tp, f, x, g)
	// A sum of 19 terms of size ≤ 10³: rounding ~1e-12 relative to 2e3.
	if want := -2078.871613550175; math.Abs(got-want) > 1e-9 {
		t.Errorf("log density %.17g, want %.17g", got, want)
	}
	for i := range x {
		const h = 1e-6
		xp := append([]float64(nil), x...)
		xp[i] += h
		fp := ad.Gradient(&tp, f, xp, make([]float64, 10))
		xp[i] -= 2 * h
		fm := ad.Gradient(&tp, f, xp, make([]float64, 10))
		// Central differences: truncation h²·f‴ and rounding ε|f|/h ≈ 5e-7 for |f| ≈ 2e3.
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[i]) > 1e-5*(1+math.Abs(fd)) {
			t.Errorf("∂/∂z[%d]: tape %.10g, FD %.10g", i, g[i], fd)
		}
	}
}

// TestHiddenText pins the labels of the default flow's MADE in the k̂ table.
func TestHiddenText(t *testing.T) {
	for _, c := range []struct {
		h    []int
		want string
	}{{nil, "2×10"}, {[]int{32, 32}, "2×32"}, {[]int{8, 16}, "[8 16]"}, {[]int{}, "without hidden layers"}} {
		if got := hiddenText(c.h); got != c.want {
			t.Errorf("hiddenText(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}

// TestDefaultFlowLabel pins the labels of vigo's flow row for the affine layer and the maf
// kind.
func TestDefaultFlowLabel(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "BF-VI vigo default (M=20, linear tails, tanh MADE 2×10)"},
		{Config{Affine: "last"}, "BF-VI vigo default (M=20, linear tails, tanh MADE 2×10, then an affine IAF layer (tanh MADE 2×32, direct) last)"},
		{Config{Affine: "first", AffineHidden: []int{10, 10}, Layers: 2}, "BF-VI vigo default (M=20, linear tails, tanh MADE 2×10, 2 layers of alternating order, after an affine IAF layer (tanh MADE 2×10, direct) first)"},
		{Config{Kind: "maf"}, "vigo maf (2 IAF layers with direct connections, tanh, hidden 2×32)"},
		{Config{Kind: "realnvp", BaseDF: 5}, "vigo realnvp (4 coupling layers, tanh, hidden 2×32, Student-t base ν=5)"},
	} {
		if got := defaultFlowLabel(c.cfg, ""); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}
