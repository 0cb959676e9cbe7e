package bnn

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/flow"
)

// TestSemiStructuredRecoversCoefficients: y = sin(2·x₁) + 1.0·z₁ − 0.5·z₂ + N(0, 0.1²) with the
// network on x and the linear part on z (independent of x). Both a Gaussian (affine flow) and a
// Bernstein-flow posterior must centre on the true coefficients: with N = 600 and noise 0.1 the
// exact posterior sd is ≈ 0.1/√600 ≈ 0.004, and SGD noise in the fit adds a few hundredths at
// most, so |mean − truth| < 0.05 and sd < 0.05 separate a working fit from a broken one.
func TestSemiStructuredRecoversCoefficients(t *testing.T) {
	const n = 600
	r := rand.New(rand.NewPCG(3, 4))
	Xnn, Xlin, y := make([]float64, n), make([]float64, 2*n), make([]float64, n)
	for i := range n {
		x := 2*r.Float64() - 1
		z1, z2 := r.NormFloat64(), r.NormFloat64()
		Xnn[i], Xlin[2*i], Xlin[2*i+1] = x, z1, z2
		y[i] = math.Sin(2*x) + z1 - 0.5*z2 + 0.1*r.NormFloat64()
	}
	truth := []float64{1, -0.5}
	for _, fl := range []struct {
		name string
		f    flow.Flow
	}{{"gaussian", flow.NewAffine(2)}, {"bernstein", flow.NewBernstein(2, 10, flow.BernsteinTails(flow.LinearTails))}} {
		t.Run(fl.name, func(t *testing.T) {
			m := SemiStructured{Hidden: 20, Flow: fl.f}
			fit, err := FitSemiStructured(context.Background(), m, Xnn, 1, Xlin, y, n, FitConfig{Epochs: 150, BatchSize: 64, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			g := fit.Coefficients(2000, 5)
			for j := range 2 {
				s, ss := 0.0, 0.0
				for i := range 2000 {
					s += g[2*i+j]
					ss += g[2*i+j] * g[2*i+j]
				}
				mean := s / 2000
				sd := math.Sqrt(ss/2000 - mean*mean)
				t.Logf("γ_%d: mean %.4f sd %.4f (truth %.2f); σ = %.3f", j, mean, sd, truth[j], fit.Sigma())
				if math.Abs(mean-truth[j]) > 0.05 || sd > 0.05 {
					t.Errorf("γ_%d: mean %.4f sd %.4f, truth %.2f", j, mean, sd, truth[j])
				}
			}
		})
	}
}

// TestSemiStructuredMatchesConditionalPosterior: with g and σ at their fitted values the
// model is linear-Gaussian in γ, so the exact conditional posterior (ConditionalPosterior) is
// the ELBO's optimum over q(γ). Data as above but with correlated linear columns (ρ = 0.6,
// so a mean-field q cannot match the joint, only the marginals' means and the conditional
// sds) and few points (N = 200), so the posterior sd (≈ 0.1/√(200·(1−ρ²)) ≈ 0.009) is not
// swamped by the fit's SGD jitter.
func TestSemiStructuredMatchesConditionalPosterior(t *testing.T) {
	const n = 200
	r := rand.New(rand.NewPCG(7, 8))
	Xnn, Xlin, y := make([]float64, n), make([]float64, 2*n), make([]float64, n)
	for i := range n {
		x := 2*r.Float64() - 1
		z1 := r.NormFloat64()
		z2 := 0.6*z1 + 0.8*r.NormFloat64()
		Xnn[i], Xlin[2*i], Xlin[2*i+1] = x, z1, z2
		y[i] = math.Sin(2*x) + z1 - 0.5*z2 + 0.1*r.NormFloat64()
	}
	m := SemiStructured{Hidden: 20, Flow: flow.NewBernstein(2, 10, flow.BernsteinTails(flow.LinearTails))}
	fit, err := FitSemiStructured(context.Background(), m, Xnn, 1, Xlin, y, n, FitConfig{Epochs: 3000, BatchSize: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mu, cov, err := fit.ConditionalPosterior(Xnn, Xlin, y, n)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 4000
	g := fit.Coefficients(draws, 9)
	for j := range 2 {
		s, ss := 0.0, 0.0
		for i := range draws {
			s += g[2*i+j]
			ss += g[2*i+j] * g[2*i+j]
		}
		mean := s / draws
		sd := math.Sqrt(ss/draws - mean*mean)
		exactSD := math.Sqrt(cov[j*2+j])
		// Mean-field KL(q‖p) optimum for a Gaussian p: q's sd is the conditional sd
		// 1/√(Σ⁻¹)_jj, smaller than the marginal sd by √(1 − ρ_post²).
		rho := cov[1] / math.Sqrt(cov[0]*cov[3])
		condSD := exactSD * math.Sqrt(1-rho*rho)
		t.Logf("γ_%d: q mean %.5f sd %.5f; exact mean %.5f sd %.5f (conditional sd %.5f)", j, mean, sd, mu[j], exactSD, condSD)
		// Tolerances: the fit's last-epoch SGD jitter moves q's location by a fraction of
		// a posterior sd; 0.5 sd and a ±35% sd ratio fail any q that ignores the data's
		// information (prior sd 1 is 100× wider) or that collapsed.
		if math.Abs(mean-mu[j]) > 0.5*exactSD {
			t.Errorf("γ_%d: q mean %.5f, exact %.5f (sd %.5f)", j, mean, mu[j], exactSD)
		}
		if ratio := sd / condSD; ratio < 0.65 || ratio > 1.35 {
			t.Errorf("γ_%d: q sd %.5f vs mean-field optimum %.5f (ratio %.2f)", j, sd, condSD, ratio)
		}
	}
}
