package diag

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPSISEqualWeightsAreTheBestCase: when q equals the target up to a constant every log
// ratio is the same number, or the same up to the rounding of log p − log q. loo reports
// k̂ = Inf for a constant tail, and so did PSIS: the worst verdict ("do not trust") for the
// best approximation there is. Equal ratios now give k̂ = −Inf, Equal, a reliable verdict,
// uniform weights and ESS = S, for exactly constant and rounding-level-varying ratios at
// several magnitudes (−7000: an unnormalised target in 5,000 dimensions) and for an S too
// small for any tail fit.
func TestPSISEqualWeightsAreTheBestCase(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 5))
	for _, c := range []struct {
		name  string
		s     int
		level float64 // the constant
		noise float64 // the amplitude of the rounding-level noise, in units of ulp-ish size
	}{
		{"zero", 1000, 0, 0},
		{"constant 3", 1000, 3, 0},
		{"constant -7000", 1000, -7000, 0},
		{"1e-15 noise", 1000, 0.3, 1e-15},
		{"1e-15 noise around 3", 1000, 3, 1e-15},
		{"few-ulp noise around -7000", 1000, -7000, 3e-12},
		{"S = 10", 10, -1.5, 0},
		{"S = 4000", 4000, 2, 1e-15},
	} {
		lr := make([]float64, c.s)
		for i := range lr {
			lr[i] = c.level + c.noise*rnd.NormFloat64()
		}
		r, err := PSIS(lr)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !r.Equal || !math.IsInf(r.K, -1) || !r.Reliable() || Classify(r.K, c.s) != Good {
			t.Errorf("%s: Equal %v, k̂ %v, reliable %v, class %v; want equal weights, k̂ = -Inf, reliable, good", c.name, r.Equal, r.K, r.Reliable(), Classify(r.K, c.s))
		}
		if v := Verdict(r.K, c.s, ""); !strings.HasPrefix(v, "k̂ = -Inf: reliable") {
			t.Errorf("%s: verdict %q", c.name, v)
		}
		if math.Abs(r.ESS-float64(c.s)) > 1e-9*float64(c.s) {
			t.Errorf("%s: ESS %v, want %d", c.name, r.ESS, c.s)
		}
		for i, w := range r.Weights() {
			if math.Abs(w*float64(c.s)-1) > 1e-9 {
				t.Errorf("%s: weight %d is %v, want 1/%d", c.name, i, w, c.s)
				break
			}
		}
		if v := KhatBootVar(lr, 20, rand.New(rand.NewPCG(1, 1))); v != 0 {
			t.Errorf("%s: bootstrap variance %v, want 0 (every resample has equal weights)", c.name, v)
		}
	}
	// Noise well above rounding is not "equal": the tail is fitted as before (a Gaussian
	// log ratio of sd 1e-6 has a light tail, k̂ finite and well below 0.5).
	lr := make([]float64, 1000)
	for i := range lr {
		lr[i] = 1e-6 * rnd.NormFloat64()
	}
	if r, err := PSIS(lr); err != nil || r.Equal || math.IsInf(r.K, 0) || r.K > 0.5 {
		t.Errorf("noise 1e-6: Equal %v, k̂ %v, err %v; want a fitted light tail", r.Equal, r.K, err)
	}
	// A constant tail above ratios that vary (an atom at the largest weight) is loo's
	// "all tail values are the same": nothing is fitted and k̂ stays +Inf, as in loo.
	for i := range lr {
		lr[i] = math.Min(0, float64(i)/500-1.5)
	}
	if r, err := PSIS(lr); err != nil || r.Equal || !math.IsInf(r.K, 1) {
		t.Errorf("constant tail over a varying body: Equal %v, k̂ %v, err %v; want +Inf as loo", r.Equal, r.K, err)
	}
}

// TestFitGPDWithoutSpread: a sample with no positive spread (all zeros, or a first quarter
// tied at zero) or of one value has nothing to fit; FitGPD says so with k = +Inf instead of
// dividing by zero (or indexing x[−1] for one value).
func TestFitGPDWithoutSpread(t *testing.T) {
	for _, x := range [][]float64{{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1e-3, 2e-3, 3e-3, 4e-3}, {0.5}, {}} {
		k, sigma := FitGPD(x)
		if !math.IsInf(k, 1) || !math.IsNaN(sigma) {
			t.Errorf("FitGPD(%v) = %v, %v; want +Inf, NaN", x, k, sigma)
		}
	}
}
