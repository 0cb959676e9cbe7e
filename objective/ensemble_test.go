package objective

import (
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/rng"
)

// normLog is log N(z; m, s²).
func normLog(z, m, s float64) float64 {
	u := (z - m) / s
	return -0.5*u*u - math.Log(s) - 0.5*math.Log(2*math.Pi)
}

// TestEnsembleBoundsJSD checks Theorem 1 of Kviman et al. (2022) and the estimator of
// EnsembleBounds on two 1-D Gaussian members q_1 = N(0, 1), q_2 = N(3, 2²) and the target
// p(z) = e^{0.7}·N(z; 1, 1.5²) (log Z = 0.7), with uniform and with (0.3, 0.7) weights:
//
//   - the identity MISELBO_1 − mean ELBO = JSD holds for the estimates to rounding;
//   - the JSD estimate agrees with H[q_w] − Σ w_s H[q_s], the mixture's entropy by the
//     trapezoidal rule on [−30, 40] with step 1e-3 (error ≪ 1e-8) and the members' in closed
//     form, and lies in [0, H(w)];
//   - the mean ELBO agrees with Σ w_s ELBO_s in closed form, E_q log N(z; a, b²) =
//     −½ log 2πb² − ((μ − a)² + σ²)/(2b²);
//   - MISELBO_L equals IWELBO of MixtureLogWeights' grid (the package's own MISELBO) for
//     uniform weights, and MISELBO_L ≥ MISELBO_1 ≥ mean ELBO.
//
// Monte Carlo tolerances are 4.5 standard errors of the estimates (normal approximation:
// false-failure rate < 1e-5 per check) on 20,000 draws per member.
func TestEnsembleBoundsJSD(t *testing.T) {
	mu, sd := []float64{0, 3}, []float64{1, 2}
	const logZ, pm, ps = 0.7, 1.0, 1.5
	const N, L = 20000, 10
	for _, w := range [][]float64{nil, {0.3, 0.7}} {
		ww := w
		if ww == nil {
			ww = []float64{0.5, 0.5}
		}
		r := rng.New(41, 0)
		lp := make([]float64, 2*N)
		lq := make([]float64, 2*N*2)
		for a := range 2 {
			for n := range N {
				z := mu[a] + sd[a]*r.NormFloat64()
				row := a*N + n
				lp[row] = logZ + normLog(z, pm, ps)
				for j := range 2 {
					lq[row*2+j] = normLog(z, mu[j], sd[j])
				}
			}
		}
		b, err := EnsembleBounds(lp, lq, 2, L, w)
		if err != nil {
			t.Fatal(err)
		}
		if d := b.MISELBO1 - b.MeanELBO - b.JSD; math.Abs(d) > 1e-12 {
			t.Errorf("w=%v: MISELBO_1 − mean ELBO − JSD = %g, want 0", ww, d)
		}
		// Exact JSD by quadrature.
		h := 1e-3
		Hmix := 0.0
		for k := 0; ; k++ {
			z := -30 + float64(k)*h
			if z > 40 {
				break
			}
			m := ww[0]*math.Exp(normLog(z, mu[0], sd[0])) + ww[1]*math.Exp(normLog(z, mu[1], sd[1]))
			f := 0.0
			if m > 0 {
				f = -m * math.Log(m)
			}
			if k == 0 {
				f /= 2
			}
			Hmix += f * h
		}
		jsd, meanELBO, Hw := Hmix, 0.0, 0.0
		for s := range 2 {
			H := 0.5 * math.Log(2*math.Pi*math.E*sd[s]*sd[s])
			jsd -= ww[s] * H
			elbo := logZ - 0.5*math.Log(2*math.Pi*ps*ps) - ((mu[s]-pm)*(mu[s]-pm)+sd[s]*sd[s])/(2*ps*ps) + H
			meanELBO += ww[s] * elbo
			if d := b.ELBO[s] - elbo; math.Abs(d) > 4.5*b.ELBOSE[s] {
				t.Errorf("w=%v: member %d ELBO %g ± %g, exact %g", ww, s, b.ELBO[s], b.ELBOSE[s], elbo)
			}
			Hw -= ww[s] * math.Log(ww[s])
		}
		if jsd <= 0.05 || jsd >= Hw {
			t.Fatalf("test setup: exact JSD %g is not inside (0, H(w) = %g)", jsd, Hw)
		}
		if d := b.JSD - jsd; math.Abs(d) > 4.5*b.JSDSE {
			t.Errorf("w=%v: JSD %g ± %g, exact %g", ww, b.JSD, b.JSDSE, jsd)
		}
		if d := b.MeanELBO - meanELBO; math.Abs(d) > 4.5*b.MeanELBOSE {
			t.Errorf("w=%v: mean ELBO %g ± %g, exact %g", ww, b.MeanELBO, b.MeanELBOSE, meanELBO)
		}
		if b.MISELBO < b.MISELBO1-4.5*b.MISELBOSE || b.MISELBO1 < b.MeanELBO {
			t.Errorf("w=%v: MISELBO_%d %g, MISELBO_1 %g, mean ELBO %g: not increasing", ww, L, b.MISELBO, b.MISELBO1, b.MeanELBO)
		}
		if b.MISELBO > logZ+4.5*b.MISELBOSE {
			t.Errorf("w=%v: MISELBO_%d %g above log Z = %g", ww, L, b.MISELBO, logZ)
		}
		if w == nil {
			grid := make([]float64, len(lp))
			MixtureLogWeights(grid, lp, lq, 2)
			if d := IWELBO(grid, L) - b.MISELBO; math.Abs(d) > 1e-12 {
				t.Errorf("MISELBO_%d %g, IWELBO of MixtureLogWeights %g", L, b.MISELBO, IWELBO(grid, L))
			}
		}
	}
}

// TestEnsembleBoundsIdenticalMembers: members that are the same distribution have JSD 0
// exactly (log q_s = log q_w) and MISELBO equal to the mean IWELBO.
func TestEnsembleBoundsIdenticalMembers(t *testing.T) {
	r := rng.New(42, 0)
	const N = 40
	lp, lq := make([]float64, 3*N), make([]float64, 3*N*3)
	for n := range 3 * N {
		z := r.NormFloat64()
		lp[n] = normLog(z, 0.3, 1.2)
		for j := range 3 {
			lq[n*3+j] = normLog(z, 0, 1)
		}
	}
	b, err := EnsembleBounds(lp, lq, 3, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(b.JSD) > 1e-14 || math.Abs(b.MISELBO-b.MeanIWELBO) > 1e-13 {
		t.Errorf("identical members: JSD %g, MISELBO %g vs mean IWELBO %g", b.JSD, b.MISELBO, b.MeanIWELBO)
	}
}

func TestEnsembleBoundsErrors(t *testing.T) {
	lp, lq := make([]float64, 12), make([]float64, 24)
	for _, c := range []struct {
		A, L int
		lq   []float64
		w    []float64
		want string
	}{
		{0, 1, lq, nil, "0 members"},
		{2, 0, lq, nil, "L = 0"},
		{2, 5, lq, nil, "not a positive multiple of A·L = 10"},
		{2, 1, lq[:20], nil, "len(logq) = 20, want 24"},
		{2, 1, lq, []float64{1}, "1 weights for 2 members"},
	} {
		if _, err := EnsembleBounds(lp, c.lq, c.A, c.L, c.w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EnsembleBounds(A=%d, L=%d): %v, want %q", c.A, c.L, err, c.want)
		}
	}
}
