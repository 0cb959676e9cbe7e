package optim

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/internal/race"
)

// closeTo reports |got−want| ≤ tol·max(1, |want|).
func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// Hand-computed Adam steps on one parameter, θ₀ = 1, α = 0.1, β₁ = 0.9, β₂ = 0.999, ε = 1e-8,
// gradients 0.5 then −1:
//
//	t=1: m = 0.1·0.5 = 0.05, v = 0.001·0.25 = 0.00025, m̂ = 0.05/0.1 = 0.5,
//	     v̂ = 0.00025/0.001 = 0.25, √v̂ = 0.5, θ₁ = 1 − 0.1·0.5/(0.5+1e-8) = 0.900000002 (to 9 digits).
//	t=2: m = 0.9·0.05 − 0.1 = −0.055, v = 0.999·0.00025 + 0.001 = 0.00124975,
//	     m̂ = −0.055/0.19 = −0.2894736842, v̂ = 0.00124975/0.001999 = 0.6251875938,
//	     √v̂ = 0.7906880509, θ₂ = θ₁ + 0.1·0.2894736842/(0.7906880509+1e-8) = 0.9366103542.
//
// Full-precision values from mpmath (mp.dps = 40) running the same recursion:
// 0.9000000019999999600000007999999840000003 and 0.9366103542405656028107376912680344925013.
// Tolerance 1e-14: a handful of float64 roundings in a well-conditioned recursion.
func TestAdamFirstSteps(t *testing.T) {
	a := NewAdam(1, AdamConfig{LR: 0.1})
	th := []float64{1}
	a.Step(th, []float64{0.5})
	if want := 0.9000000019999999600000008; !closeTo(th[0], want, 1e-14) {
		t.Errorf("step 1: θ = %.17g, want %.17g", th[0], want)
	}
	a.Step(th, []float64{-1})
	if want := 0.9366103542405656028107377; !closeTo(th[0], want, 1e-14) {
		t.Errorf("step 2: θ = %.17g, want %.17g", th[0], want)
	}
	if a.Steps() != 2 {
		t.Errorf("Steps = %d, want 2", a.Steps())
	}
}

// RMSprop (Keras defaults) on θ₀ = 1 with gradients 0.5, −1:
//
//	t=1: v = 0.1·0.25 = 0.025, θ₁ = 1 − 0.001·0.5/(√0.025 + 1e-7) = 1 − 0.0005/0.15811398 = 0.99683772
//	t=2: v = 0.9·0.025 + 0.1 = 0.1225, θ₂ = θ₁ + 0.001/(0.35 + 1e-7) = 0.99969487
//
// mpmath (dps 40): 0.9968377243398303557577…, 0.9996948663806469155244…; tolerance as for Adam.
func TestRMSpropFirstSteps(t *testing.T) {
	r := NewRMSprop(1, RMSpropConfig{})
	th := []float64{1}
	r.Step(th, []float64{0.5})
	if want := 0.9968377243398303557577; !closeTo(th[0], want, 1e-14) {
		t.Errorf("step 1: θ = %.17g, want %.17g", th[0], want)
	}
	r.Step(th, []float64{-1})
	if want := 0.9996948663806469155244; !closeTo(th[0], want, 1e-14) {
		t.Errorf("step 2: θ = %.17g, want %.17g", th[0], want)
	}
}

// SGD with μ = 0.5, α = 0.1, gradients 1, 1 from θ₀ = 0:
// heavy ball: b = 1, θ = −0.1; b = 1.5, θ = −0.25.
// Nesterov:   b = 1, θ = −0.1·(1+0.5) = −0.15; b = 1.5, θ = −0.15 − 0.1·(1 + 0.75) = −0.325.
func TestSGDMomentum(t *testing.T) {
	for _, c := range []struct {
		nest bool
		want [2]float64
	}{{false, [2]float64{-0.1, -0.25}}, {true, [2]float64{-0.15, -0.325}}} {
		s := NewSGD(1, SGDConfig{LR: 0.1, Momentum: 0.5, Nesterov: c.nest})
		th := []float64{0}
		for k := range 2 {
			s.Step(th, []float64{1})
			if !closeTo(th[0], c.want[k], 1e-15) {
				t.Errorf("nesterov=%v step %d: θ = %.17g, want %g", c.nest, k+1, th[0], c.want[k])
			}
		}
	}
}

// ADVI, η = 1, α = 0.1, τ = 1, gradients 2 then 1 from θ₀ = 0:
// t=1: s = 4, θ = −1·2/(1+2) = −2/3.
// t=2: s = 0.1·1 + 0.9·4 = 3.7, θ = −2/3 − (1/√2)·1/(1+√3.7) = −0.90853… (python:
// -2/3 - 1/math.sqrt(2)/(1+math.sqrt(3.7)) = -0.9085334332174062).
func TestADVIFirstSteps(t *testing.T) {
	a := NewADVI(1, ADVIConfig{})
	th := []float64{0}
	a.Step(th, []float64{2})
	if !closeTo(th[0], -2.0/3, 1e-15) {
		t.Errorf("step 1: θ = %.17g, want -2/3", th[0])
	}
	a.Step(th, []float64{1})
	if want := -0.9085334332174062; !closeTo(th[0], want, 1e-14) {
		t.Errorf("step 2: θ = %.17g, want %.17g", th[0], want)
	}
}

// quadGrad is the gradient of ½Σ aᵢ(xᵢ − cᵢ)², condition number 100.
var quadA, quadC = []float64{1, 10, 100}, []float64{1, -2, 3}

func quadGrad(x, g []float64) {
	for i := range x {
		g[i] = quadA[i] * (x[i] - quadC[i])
	}
}

// Every optimiser reaches the minimum of an ill-conditioned quadratic. The tolerances are
// what each method's fixed point allows: cosine annealing to 0 lets Adam/RMSprop settle
// (their constant-rate limit cycle has amplitude ~α), SGD's contraction |1 − αaᵢ| ≤ 0.99/step
// gives ≪1e-6 after 3000 steps.
func TestConvergeQuadratic(t *testing.T) {
	const steps = 3000
	cases := []struct {
		name string
		opt  Optimizer
		tol  float64
	}{
		{"Adam", NewAdam(3, AdamConfig{LR: 0.05, Schedule: Cosine{Steps: steps}}), 1e-3},
		{"RMSprop", NewRMSprop(3, RMSpropConfig{LR: 0.05, Schedule: Cosine{Steps: steps}}), 1e-3},
		{"SGD", NewSGD(3, SGDConfig{LR: 0.01}), 1e-6},
		{"SGD momentum", NewSGD(3, SGDConfig{LR: 0.005, Momentum: 0.9}), 1e-6},
		{"SGD Nesterov", NewSGD(3, SGDConfig{LR: 0.005, Momentum: 0.9, Nesterov: true}), 1e-6},
		{"ADVI", NewADVI(3, ADVIConfig{Eta: 1}), 1e-3},
	}
	for _, c := range cases {
		x, g := make([]float64, 3), make([]float64, 3)
		for range steps {
			quadGrad(x, g)
			c.opt.Step(x, g)
		}
		for i := range x {
			if math.Abs(x[i]-quadC[i]) > c.tol {
				t.Errorf("%s: x[%d] = %g, want %g ± %g", c.name, i, x[i], quadC[i], c.tol)
			}
		}
	}
}

func TestClipFuncs(t *testing.T) {
	g := []float64{3, 4}
	if n := ClipNorm(g, 1); n != 5 || !closeTo(g[0], 0.6, 1e-15) || !closeTo(g[1], 0.8, 1e-15) {
		t.Errorf("ClipNorm: norm %g, g = %v; want 5, [0.6 0.8]", n, g)
	}
	g = []float64{3, -4, 0.5}
	if k := ClipValue(g, 1); k != 2 || g[0] != 1 || g[1] != -1 || g[2] != 0.5 {
		t.Errorf("ClipValue: %d clamped, g = %v; want 2, [1 -1 0.5]", k, g)
	}
	// Norm does not overflow where Σg² would.
	if n := Norm([]float64{3e200, 4e200}); !closeTo(n, 5e200, 1e-15) {
		t.Errorf("Norm of huge vector = %g, want 5e200", n)
	}
}

// Clipping inside Step: SGD with α = 1 makes the step equal the clipped gradient.
func TestClipInStep(t *testing.T) {
	g := []float64{3, 4}
	x := []float64{0, 0}
	NewSGD(2, SGDConfig{LR: 1, ClipNorm: 1}).Step(x, g)
	if !closeTo(x[0], -0.6, 1e-15) || !closeTo(x[1], -0.8, 1e-15) {
		t.Errorf("ClipNorm step = %v, want [-0.6 -0.8]", x)
	}
	if g[0] != 3 || g[1] != 4 {
		t.Errorf("Step modified grad: %v", g)
	}
	// Value first (3,4 → 2,2), then norm (2√2 → 1): each component 1/√2.
	x = []float64{0, 0}
	NewSGD(2, SGDConfig{LR: 1, ClipValue: 2, ClipNorm: 1}).Step(x, g)
	for i := range x {
		if !closeTo(x[i], -1/math.Sqrt2, 1e-15) {
			t.Errorf("value+norm clip: x[%d] = %g, want %g", i, x[i], -1/math.Sqrt2)
		}
	}
	x = []float64{0, 0}
	NewSGD(2, SGDConfig{LR: 1, ClipValue: 3.5}).Step(x, g)
	if x[0] != -3 || x[1] != -3.5 {
		t.Errorf("ClipValue step = %v, want [-3 -3.5]", x)
	}
}

// noisyGrad is a deterministic "stochastic" gradient: quadratic plus a step-dependent wiggle.
func noisyGrad(x, g []float64, k int) {
	quadGrad(x, g)
	for i := range g {
		g[i] += math.Sin(float64(7*k + 3*i))
	}
}

func run(o Optimizer, x, g []float64, from, to int) {
	for k := from; k < to; k++ {
		noisyGrad(x, g, k)
		o.Step(x, g)
	}
}

// A run saved at step 20 and resumed (through bytes and through JSON) ends bit-identical
// to the uninterrupted run.
func TestSaveRestoreBitIdentical(t *testing.T) {
	makers := map[string]func() Optimizer{
		"Adam":    func() Optimizer { return NewAdam(3, AdamConfig{LR: 0.01, ClipNorm: 5, Schedule: Warmup{Steps: 5}}) },
		"RMSprop": func() Optimizer { return NewRMSprop(3, RMSpropConfig{Momentum: 0.3}) },
		"SGD":     func() Optimizer { return NewSGD(3, SGDConfig{LR: 0.003, Momentum: 0.9, Nesterov: true}) },
		"ADVI":    func() Optimizer { return NewADVI(3, ADVIConfig{Eta: 0.1, Schedule: RobbinsMonro{Kappa: 0.6}}) },
		"Adagrad": func() Optimizer { return NewAdagrad(3, AdagradConfig{LR: 0.05, InitialAccumulator: 0.1}) },
	}
	for name, mk := range makers {
		g := make([]float64, 3)
		ref := mk()
		xr := []float64{0.1, 0.2, 0.3}
		run(ref, xr, g, 0, 50)

		for _, via := range []string{"binary", "json"} {
			o := mk()
			x := []float64{0.1, 0.2, 0.3}
			run(o, x, g, 0, 20)
			var blob []byte
			var err error
			if via == "binary" {
				blob, err = o.MarshalBinary()
			} else {
				blob, err = json.Marshal(o)
			}
			if err != nil {
				t.Fatalf("%s %s marshal: %v", name, via, err)
			}
			o2 := mk()
			if via == "binary" {
				err = o2.UnmarshalBinary(blob)
			} else {
				err = json.Unmarshal(blob, o2)
			}
			if err != nil {
				t.Fatalf("%s %s unmarshal: %v", name, via, err)
			}
			if o2.Steps() != 20 {
				t.Errorf("%s %s: restored Steps = %d, want 20", name, via, o2.Steps())
			}
			run(o2, x, g, 20, 50)
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(xr[i]) {
					t.Errorf("%s %s: x[%d] = %v after resume, uninterrupted %v", name, via, i, x[i], xr[i])
				}
			}
			// Re-marshalling the resumed optimiser gives the same bytes as the reference.
			b1, _ := o2.MarshalBinary()
			b2, _ := ref.MarshalBinary()
			if !bytes.Equal(b1, b2) {
				t.Errorf("%s %s: final states differ", name, via)
			}
		}
	}
}

func TestUnmarshalRejects(t *testing.T) {
	a := NewAdam(3, AdamConfig{})
	b, _ := a.MarshalBinary()
	if err := NewAdam(4, AdamConfig{}).UnmarshalBinary(b); err == nil {
		t.Error("length mismatch accepted")
	}
	if err := NewRMSprop(3, RMSpropConfig{}).UnmarshalBinary(b); err == nil {
		t.Error("kind mismatch accepted")
	}
	if err := NewAdam(3, AdamConfig{}).UnmarshalBinary(b[:len(b)-1]); err == nil {
		t.Error("truncated state accepted")
	}
	if err := NewAdam(3, AdamConfig{}).UnmarshalJSON([]byte(`{"kind":"Adam","n":3,"step":1,"slots":["x","y"]}`)); err == nil {
		t.Error("bad base64 accepted")
	}
}

func TestNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	x, g := make([]float64, 100), make([]float64, 100)
	for i := range g {
		g[i] = float64(i) - 50
	}
	for _, o := range []Optimizer{
		NewAdam(100, AdamConfig{ClipNorm: 1, ClipValue: 10, Schedule: Warmup{Steps: 10, Then: Cosine{Steps: 100}}}),
		NewRMSprop(100, RMSpropConfig{Momentum: 0.9}),
		NewSGD(100, SGDConfig{Momentum: 0.9, Schedule: ExpDecay{Rate: 0.5, Every: 10}}),
		NewADVI(100, ADVIConfig{}),
		NewAdagrad(100, AdagradConfig{ClipValue: 10}),
	} {
		if n := testing.AllocsPerRun(100, func() { o.Step(x, g) }); n != 0 {
			t.Errorf("%T.Step: %v allocs per call, want 0", o, n)
		}
	}
}

func TestStepPanicsOnLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	NewAdam(2, AdamConfig{}).Step(make([]float64, 2), make([]float64, 3))
}

func TestSchedules(t *testing.T) {
	cases := []struct {
		name string
		s    Schedule
		k    int
		want float64
	}{
		{"constant", Constant{}, 1000, 1},
		{"exp k=0", ExpDecay{Rate: 0.5, Every: 10}, 0, 1},
		{"exp k=5", ExpDecay{Rate: 0.5, Every: 10}, 5, math.Sqrt(0.5)},
		{"exp k=20", ExpDecay{Rate: 0.5, Every: 10}, 20, 0.25},
		{"exp stair k=19", ExpDecay{Rate: 0.5, Every: 10, Staircase: true}, 19, 0.5},
		{"exp zero", ExpDecay{}, 7, 1},
		{"cos k=0", Cosine{Steps: 100, Min: 0.1}, 0, 1},
		{"cos k=50", Cosine{Steps: 100, Min: 0.1}, 50, 0.55}, // 0.1 + 0.9·½(1+cos π/2)
		{"cos k=100", Cosine{Steps: 100, Min: 0.1}, 100, 0.1},
		{"cos k=500", Cosine{Steps: 100, Min: 0.1}, 500, 0.1},
		{"cos zero", Cosine{}, 5, 1},
		{"warm k=0", Warmup{Steps: 4}, 0, 0.25},
		{"warm k=3", Warmup{Steps: 4}, 3, 1},
		{"warm then", Warmup{Steps: 4, Then: ExpDecay{Rate: 0.5}}, 6, 0.25},
		{"RM k=0", RobbinsMonro{}, 0, 1},
		{"RM k=3", RobbinsMonro{}, 3, 0.25},
		{"RM κ=.5 k=3", RobbinsMonro{Kappa: 0.5}, 3, 0.5},
		{"RM T0", RobbinsMonro{Kappa: 1, T0: 9}, 10, 0.5}, // (1+9)/(10+1+9)
	}
	for _, c := range cases {
		if got := c.s.Scale(c.k); !closeTo(got, c.want, 1e-15) {
			t.Errorf("%s: Scale(%d) = %.17g, want %.17g", c.name, c.k, got, c.want)
		}
	}
	// Rate reports the step size of the next step.
	a := NewAdam(1, AdamConfig{LR: 0.1, Schedule: Warmup{Steps: 2}})
	if a.Rate() != 0.05 {
		t.Errorf("Rate before step 1 = %g, want 0.05", a.Rate())
	}
	a.Step([]float64{0}, []float64{1})
	if a.Rate() != 0.1 {
		t.Errorf("Rate before step 2 = %g, want 0.1", a.Rate())
	}
	a.Reset()
	if a.Steps() != 0 || a.Rate() != 0.05 {
		t.Errorf("after Reset: Steps %d Rate %g", a.Steps(), a.Rate())
	}
}
