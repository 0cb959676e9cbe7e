package apovi

import (
	"bytes"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// BenchmarkAPOVIStep1D is one training step (loss and gradient) of the thesis's 1-D APOVI:
// BNN [1, 50, 50, 1], inference nets [2, 50, 50, 100], exact last layer, trained noise, ELBO,
// S = 1, on one dataset of N = 15 points.
func BenchmarkAPOVIStep1D(b *testing.B) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{50, 50}, InferenceHidden: []int{50, 50},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.01, TrainNoise: true}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := toyData(15, 1, 1, false, 1)
	r := rng.New(1, 1).Rand
	var t ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		t.Reset()
		p := t.Input(m.Params())
		l, err := m.Loss(&t, p, ELBO, d, Dataset{}, 1, r)
		if err != nil {
			b.Fatal(err)
		}
		t.Backward(l)
	}
}

// benchLayer is one hidden global-inducing-point layer (forward and backward) with din inputs,
// D units and n data points as inducing inputs, amortised pseudo-likelihood, gradients to the
// layer input and the pseudo-likelihood.
func benchLayer(b *testing.B, n, din, D int) {
	r := rng.New(2, 0)
	h := make([]float64, n*din)
	for i := range h {
		h[i] = r.Float64()
	}
	raw := make([]float64, n*2*D)
	for i := range raw {
		raw[i] = 0.1 * r.NormFloat64()
	}
	g := &gip{din: din, dout: D, mode: amortised, alpha: 1}
	var t ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		t.Reset()
		H := t.AsMatrix(t.Input(h), n, din)
		R := t.Input(raw)
		W, bb, kl := g.record(&t, H, R, nil, r.Rand)
		t.Backward(t.Add(t.Add(t.Sum(W), t.Sum(bb)), kl))
	}
}

// BenchmarkGipLayerImage is one 150-unit hidden layer of the thesis's image APOVI (K = 151) on
// N = 392 context pixels (a mask with p = 1/2).
func BenchmarkGipLayerImage(b *testing.B) { benchLayer(b, 392, 150, 150) }

// BenchmarkGipLayer50 is a 50-unit layer (K = 51) on N = 392 points.
func BenchmarkGipLayer50(b *testing.B) { benchLayer(b, 392, 50, 50) }

// BenchmarkAPOVIStepELBOExp is one training step of the ELBO experiment's APOVI: BNN
// [1, 32, 32, 1], inference nets [2, 50, 50, 64], fixed noise 0.05, ELBO, S = 1, N = 30.
func BenchmarkAPOVIStepELBOExp(b *testing.B) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{50, 50},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.05}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := toyData(30, 1, 1, false, 1)
	r := rng.New(1, 1).Rand
	var t ad.Tape
	b.ReportAllocs()
	for b.Loop() {
		t.Reset()
		p := t.Input(m.Params())
		l, err := m.Loss(&t, p, ELBO, d, Dataset{}, 1, r)
		if err != nil {
			b.Fatal(err)
		}
		t.Backward(l)
	}
}

// BenchmarkPredictELBOExp is vigo predict's forward pass at the CLI default S = 100 on the
// speed part's setting (bench/apovi_speed.go): the ELBO experiment's APOVI, N = 24 context
// points, 500 test inputs; BenchmarkPredictTapeELBOExp is the same on the tape path.
func BenchmarkPredictELBOExp(b *testing.B)     { benchPredict(b, false) }
func BenchmarkPredictTapeELBOExp(b *testing.B) { benchPredict(b, true) }

func benchPredict(b *testing.B, tape bool) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{50, 50},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.05}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := toyData(24, 1, 1, false, 1)
	grid := make([]float64, 500)
	for i := range grid {
		grid[i] = -2 + 4*float64(i)/499
	}
	r := rng.New(1, 1).Rand
	b.ReportAllocs()
	for b.Loop() {
		if tape {
			m.predictTape(d, grid, 100, r)
		} else if _, err := m.Predict(d, grid, 100, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadELBOExp is apovi.Load of the ELBO experiment's saved APOVI (vigo predict's
// first step).
func BenchmarkLoadELBOExp(b *testing.B) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{50, 50},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.05}}, 1)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Save(&buf, m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
