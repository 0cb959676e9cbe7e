package apovi

import (
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
	"gonum.org/v1/gonum/mat"
)

// expLogLik is E_{w~N(μ,Σ)} Σ_t log N(y_t; x̃_tᵀw, σ²) = Σ_t [log N(y_t; x̃_tᵀμ, σ²) −
// x̃_tᵀΣx̃_t/(2σ²)], x̃ = [x, 1].
func expLogLik(d Dataset, Sig *mat.SymDense, mu []float64, sigma float64) float64 {
	s := 0.0
	for i := range d.N {
		xr := append(append([]float64(nil), d.X[i*d.DX:(i+1)*d.DX]...), 1)
		m, v := 0.0, 0.0
		for a := range xr {
			m += xr[a] * mu[a]
			for b := range xr {
				v += xr[a] * Sig.At(a, b) * xr[b]
			}
		}
		r := d.Y[i] - m
		s += -0.5*math.Log(2*math.Pi) - math.Log(sigma) - (r*r+v)/(2*sigma*sigma)
	}
	return s
}

// gaussKL is KL(N(μ₁,Σ₁) ‖ N(μ₂,Σ₂)) from its definition.
func gaussKL(t *testing.T, S1 *mat.SymDense, m1 []float64, S2 *mat.SymDense, m2 []float64) float64 {
	K := len(m1)
	var P2 mat.Dense
	if err := P2.Inverse(S2); err != nil {
		t.Fatal(err)
	}
	var PS mat.Dense
	PS.Mul(&P2, S1)
	q := 0.0
	for i := range K {
		for j := range K {
			q += (m1[i] - m2[i]) * P2.At(i, j) * (m1[j] - m2[j])
		}
	}
	l1, _ := mat.LogDet(S1)
	l2, _ := mat.LogDet(S2)
	return 0.5 * (mat.Trace(&PS) + q - float64(K) + l2 - l1)
}

// meanLoss averages the one-sample loss over n seeds and returns the mean and its standard
// error.
func meanLoss(t *testing.T, m Model, obj Objective, ctx, tgt Dataset, n int) (mean, se float64) {
	t.Helper()
	var tp ad.Tape
	sum, sum2 := 0.0, 0.0
	for s := range n {
		tp.Reset()
		l, err := m.Loss(&tp, tp.Input(m.Params()), obj, ctx, tgt, 1, rng.New(uint64(s), 6).Rand)
		if err != nil {
			t.Fatal(err)
		}
		v := tp.Float(l)
		sum += v
		sum2 += v * v
	}
	mean = sum / float64(n)
	return mean, math.Sqrt((sum2/float64(n) - mean*mean) / float64(n-1))
}

// TestObjectivesOneLayer checks NPML and NPVI as apovi.md §2 defines them on APOVI with one
// exact layer, where every conditional is a Bayesian-linear-regression posterior in closed form:
// NPML = −E_{q_C}[log p(y_T|w)]/|T| and NPVI = −(E_{q_{C∪T}}[log p(y_T|w)] − KL(q_{C∪T} ‖ q_C))/|T|.
// The one-sample losses are averaged over 1500 seeds; 4.5 standard errors give a two-sided
// false-failure rate of 6.8e-6 per check (normal approximation, n = 1500).
func TestObjectivesOneLayer(t *testing.T) {
	const sigma = 0.25
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: sigma}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, tgt := toyData(6, 1, 1, false, 21), toyData(5, 1, 1, false, 22)
	Sc, mc, _ := blrPosterior(t, ctx, sigma, 1)
	Sd, md, _ := blrPosterior(t, concat(ctx, tgt), sigma, 1)
	npml := -expLogLik(tgt, Sc, mc, sigma) / float64(tgt.N)
	npvi := -(expLogLik(tgt, Sd, md, sigma) - gaussKL(t, Sd, md, Sc, mc)) / float64(tgt.N)
	for _, c := range []struct {
		obj  Objective
		want float64
	}{{NPML, npml}, {NPVI, npvi}} {
		mean, se := meanLoss(t, m, c.obj, ctx, tgt, 1500)
		if math.Abs(mean-c.want) > 4.5*se || se == 0 {
			t.Errorf("%v: mean loss %.6g, closed form %.6g (se %.3g)", c.obj, mean, c.want, se)
		}
	}
}

// TestTrainingReducesLoss: 150 Adam steps on one dataset lower the ELBO loss of a small APOVI
// and of a small POVI, averaged over 200 seeds before and after (a fit that cannot move, or
// whose gradient has the wrong sign, fails).
func TestTrainingReducesLoss(t *testing.T) {
	d := toyData(12, 1, 1, false, 5)
	gauss := Likelihood{Kind: Gaussian, NoiseStd: 0.1, TrainNoise: true}
	a, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{8}, InferenceHidden: []int{8}, Likelihood: gauss}, 1)
	p, _ := NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{8}, M: 12, Inducing: d.X, Likelihood: gauss}, 1)
	for _, m := range []Model{a, p} {
		before, _ := meanLoss(t, m, ELBO, d, Dataset{}, 200)
		opt := optim.NewAdam(len(m.Params()), optim.AdamConfig{LR: 1e-2})
		r := rng.New(7, 0).Rand
		var tp ad.Tape
		for range 150 {
			tp.Reset()
			pv := tp.Input(m.Params())
			l, err := m.Loss(&tp, pv, ELBO, d, Dataset{}, 1, r)
			if err != nil {
				t.Fatal(err)
			}
			tp.Backward(l)
			opt.Step(m.Params(), tp.Grad(pv))
		}
		after, _ := meanLoss(t, m, ELBO, d, Dataset{}, 200)
		if !(after < before-0.5) {
			t.Errorf("%T: loss %.4g before, %.4g after 150 Adam steps", m, before, after)
		}
		t.Logf("%T: loss %.4g → %.4g", m, before, after)
	}
}
