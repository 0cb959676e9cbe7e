package bench

import (
	"context"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"math"
	"strings"
	"testing"
	"time"
)

// TestRunDNCPSmall runs the study in a small configuration: the sampled toy correlations must
// match the analytic ones, and on the DBN with σ_z = 0.02 the non-centred form must mix far
// better than the centred one (the paper's claim).
func TestRunDNCPSmall(t *testing.T) {
	cfg := DNCPConfig{Toy: [][2]float64{{1, 0.1}, {1, 3}}, T: 4, K: 2, P: 5, Sigmas: []float64{0.02, 1},
		Warmup: 300, Draws: 600, Chains: 2}
	rep, err := RunDNCP(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Toy {
		// 5 standard errors; the se uses the pair's smaller bulk ESS.
		if math.Abs(row.SampledCP-row.CP) > 5*row.SECP || math.Abs(row.SampledDNCP-row.DNCP) > 5*row.SEDNCP {
			t.Errorf("σ_z=%v: sampled correlations %.4f ± %.4f, %.4f ± %.4f; analytic %.4f, %.4f",
				row.SigmaZ, row.SampledCP, row.SECP, row.SampledDNCP, row.SEDNCP, row.CP, row.DNCP)
		}
		if row.DNCPPreferred != row.ThisPreferred {
			t.Errorf("σ_z=%v: the sampled correlations prefer the other form", row.SigmaZ)
		}
	}
	small := rep.DBN[0]
	// With σ_z = 0.02 the CP step size is of order σ_z, so 10 steps move the chain ≈ 0.2
	// posterior sds per iteration and its ESS is a few per cent of DNCP's; a factor 3 is safe.
	if !(small.RunDNCP.MinESS > 3*small.RunCP.MinESS) {
		t.Errorf("σ_z = 0.02: min ESS CP %.0f, DNCP %.0f; want DNCP ≫ CP", small.RunCP.MinESS, small.RunDNCP.MinESS)
	}
	for _, d := range rep.DBN {
		for _, s := range []SamplerRun{d.RunCP, d.RunDNCP, d.RunMix} {
			// Dual averaging steers the mean acceptance to 0.9; the kept draws use the averaged
			// step size, which accepts a little more or less: 0.8–0.99.
			if s.Accept < 0.8 || s.Accept > 0.99 {
				t.Errorf("σ_z = %v: mean acceptance %.3f, want ≈ 0.9", d.SigmaZ, s.Accept)
			}
		}
	}
	var b strings.Builder
	if err := rep.Markdown(&b, resultmd.Header{Date: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 1. Two-latent Gaussian toy", "## 2. HMC on the nonlinear tanh DBN", "| 0.02 |", "| 1 | 3 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
