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
