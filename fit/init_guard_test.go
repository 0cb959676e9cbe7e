package fit

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/model"
)

// ringTarget is log p(z) = −½((‖z‖ − 2)/0.4)² − ½·c·z₂²: a ring whose curvature along z₂ at the
// mode (2, 0) is only c (the ring's own curvature there is zero), so the inverse Hessian's sd in
// z₂ is 1/√c although p falls by tens of nats within a few units.
func ringTarget(c float64) model.GradFunc {
	return model.GradFunc{N: 2, F: func(z, g []float64) float64 {
		r := math.Hypot(z[0], z[1])
		u := (r - 2) / 0.4
		dr := -u / 0.4 // d/dr of −½u²
		g[0] = dr * z[0] / r
		g[1] = dr*z[1]/r - c*z[1]
		return -0.5*u*u - 0.5*c*z[1]*z[1]
	}}
}

// The Laplace scale guard shrinks an sd of 1000 (curvature 1e-6 along the ring) to a few units —
// where log p falls by at most ScaleGuardDrop within one sd — and leaves a wide but Gaussian
// direction (sd 50) alone.
func TestLaplaceScaleGuard(t *testing.T) {
	lap, err := laplace(ringTarget(1e-6), []float64{3, 0.1}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(lap.Cov[3])
	if !(sd > 1 && sd < 2*ScaleGuardSD) || !strings.Contains(lap.Note, "shrunk in 1 coordinate") {
		t.Errorf("ring: sd in z₂ = %g, note %q; want a few units and the note", sd, lap.Note)
	}
	if got := lap.Chol[2]*lap.Chol[2] + lap.Chol[3]*lap.Chol[3]; math.Abs(got-lap.Cov[3]) > 1e-9*lap.Cov[3] {
		t.Errorf("Chol does not factor the shrunk Cov: %g vs %g", got, lap.Cov[3])
	}
	wide := model.GradFunc{N: 2, F: func(z, g []float64) float64 {
		g[0], g[1] = -z[0], -z[1]/2500
		return -0.5*z[0]*z[0] - 0.5*z[1]*z[1]/2500
	}}
	lw, err := laplace(wide, []float64{1, 1}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if sd := math.Sqrt(lw.Cov[3]); math.Abs(sd-50) > 1e-3 || strings.Contains(lw.Note, "shrunk") {
		t.Errorf("wide Gaussian: sd %g (want 50), note %q", sd, lw.Note)
	}
	// A wide and strongly correlated Gaussian (sds 50 and 1, correlation 0.9999, as in an
	// uncentred interaction regression): moving z₂ alone by its sd would drop log p by
	// ½/(1 − ρ²) ≈ 2500 nats, but the Laplace fit is exact and must be left alone.
	const rho, s1, s2 = 0.9999, 1.0, 50.0
	corr := model.GradFunc{N: 2, F: func(z, g []float64) float64 {
		a, b := z[0]/s1, z[1]/s2
		k := 1 / (1 - rho*rho)
		g[0] = -k * (a - rho*b) / s1
		g[1] = -k * (b - rho*a) / s2
		return -0.5 * k * (a*a - 2*rho*a*b + b*b)
	}}
	lc, err := laplace(corr, []float64{0.5, 10}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if sd := math.Sqrt(lc.Cov[3]); math.Abs(sd-s2) > 1e-3*s2 || strings.Contains(lc.Note, "shrunk") {
		t.Errorf("correlated Gaussian: sd %g (want %g), note %q", sd, s2, lc.Note)
	}
}

// With the guard, a mean-field fit started at the ring's Laplace approximation reaches a sane
// ELBO; before it, the start's sd of 1000 in z₂ left the fit at an ELBO of order −10⁶ (the
// MISELBO benchmark's U₁ finding).
func TestMeanFieldFromAGuardedLaplaceStart(t *testing.T) {
	r := DefaultRecipe(KindMeanField)
	r.Init.Starts = 1
	r.Init.Point = []float64{3, 0.1}
	r.MaxIter, r.DiagDraws = 3000, 500
	res, err := Run(context.Background(), ringTarget(1e-6), r)
	if err != nil {
		t.Fatal(err)
	}
	// log Z of the ring ≈ log(2π·2·0.4·√(2π)) ≈ 2.53 (its mass is a thin annulus); a Gaussian on
	// one side of it has an ELBO within a few nats of that, never −10⁶.
	if !(res.ELBO > -10) {
		t.Errorf("ELBO %g: the start's scale was not guarded", res.ELBO)
	}
}
