package family

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// With FlowFixedOutput the output layer's parameters are never read: whatever their values,
// Draw, Sample, LogDensity and LogProb equal those of the plain family at μ = 0, ω = 0, the
// gradient of log q and z with respect to them is exactly zero, Init writes zeros whatever loc
// and scale, and SetMoments refuses.
func TestFlowFixedOutput(t *testing.T) {
	const d = 3
	mk := func(opts ...FlowOption) *Flow {
		return NewFlow(flow.NewMAF(nn.NewMADE(d, []int{5}, 2, nn.WithActivation(ad.Tanh))), opts...)
	}
	fixed, plain := mk(FlowFixedOutput()), mk()
	if !fixed.FixedOutput() || plain.FixedOutput() || fixed.NumParams() != plain.NumParams() {
		t.Fatalf("FixedOutput %v/%v, %d/%d params", fixed.FixedOutput(), plain.FixedOutput(), fixed.NumParams(), plain.NumParams())
	}
	p := make([]float64, fixed.NumParams())
	fixed.Init(p, []float64{1, 2, 3}, 5)
	n := fixed.Flow().NumParams()
	for i, v := range p[n:] {
		if v != 0 {
			t.Fatalf("Init: output parameter %d = %g, want 0", i, v)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range p[:n] {
		p[i] += 0.3 * r.NormFloat64()
	}
	moved := append([]float64(nil), p...)
	for i := n; i < len(moved); i++ {
		moved[i] = r.NormFloat64() // ignored by the fixed family
	}
	eps := []float64{0.4, -1.2, 0.7}
	z1, z2 := make([]float64, d), make([]float64, d)
	lq1, lq2 := fixed.Sample(moved, eps, z1), plain.Sample(p, eps, z2)
	for i := range z1 {
		if z1[i] != z2[i] {
			t.Fatalf("Sample: z %v, want %v", z1, z2)
		}
	}
	if lq1 != lq2 || fixed.LogProb(moved, z1) != plain.LogProb(p, z2) {
		t.Errorf("log q: Sample %g vs %g, LogProb %g vs %g", lq1, lq2, fixed.LogProb(moved, z1), plain.LogProb(p, z2))
	}
	var tp ad.Tape
	pv := tp.Input(moved)
	z, lq := fixed.Draw(&tp, pv, eps)
	tp.Backward(tp.Add(lq, tp.Sum(tp.Square(z))))
	g := tp.Grad(pv)
	for i, v := range g[n:] {
		if v != 0 {
			t.Errorf("gradient of output parameter %d = %g, want 0", i, v)
		}
	}
	tp.Reset()
	ld := tp.Float(fixed.LogDensity(&tp, tp.Const(moved...), tp.Const(z1...)))
	if math.Abs(ld-lq1) > 1e-10 {
		t.Errorf("LogDensity %g, want %g", ld, lq1)
	}
	if err := fixed.SetMoments(p, make([]float64, d), []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}); err == nil {
		t.Error("SetMoments: no error with a fixed output layer")
	}
}
