package optim

import "math"

// AdagradConfig configures Adagrad. A zero field takes the default shown; the defaults are
// PyTorch's torch.optim.Adagrad (lr_decay 0, weight_decay 0).
type AdagradConfig struct {
	LR  float64 // base step size η; default 0.01
	Eps float64 // ε added to √G; default 1e-10
	// InitialAccumulator is the starting value G₀ of every squared-gradient sum (PyTorch's
	// initial_accumulator_value); default 0. Reset restores it.
	InitialAccumulator float64

	Schedule  Schedule // multiplies LR by Schedule.Scale(step); nil means Constant
	ClipNorm  float64  // > 0: rescale the gradient to global norm ≤ ClipNorm
	ClipValue float64  // > 0: clamp each gradient component to [−ClipValue, ClipValue]
}

// Adagrad is the diagonal AdaGrad of Duchi, Hazan & Singer (2011), "Adaptive subgradient
// methods for online learning and stochastic optimization", JMLR 12 (the diagonal
// composite-mirror-descent update with ψ_t(x) = ⟨x, (δI + diag(G_t)^{1/2}) x⟩), in the
// form PyTorch's torch.optim.Adagrad implements: with g the clipped gradient,
//
//	G ← G + g²,  θ ← θ − η_t·g/(√G + ε),
//
// G starting at InitialAccumulator. The first step on a coordinate with G₀ = 0 moves it by
// η_t·g/(|g| + ε) ≈ η_t·sign(g); afterwards the per-coordinate rate decays as the squared
// gradients accumulate, with no forgetting (unlike RMSprop). PyTorch's lr_decay is the
// schedule 1/(1 + k·lr_decay), which a Schedule can express. State: G and t.
type Adagrad struct {
	core
	eps, g0 float64
}

// NewAdagrad returns an Adagrad optimiser for n parameters.
func NewAdagrad(n int, cfg AdagradConfig) *Adagrad {
	a := &Adagrad{
		core: newCore("Adagrad", n, cfg.LR, 0.01, cfg.Schedule, cfg.ClipNorm, cfg.ClipValue, 1),
		eps:  orDefault(cfg.Eps, 1e-10),
		g0:   cfg.InitialAccumulator,
	}
	a.Reset()
	return a
}

// Reset sets every squared-gradient sum back to InitialAccumulator and the step count to 0.
func (a *Adagrad) Reset() {
	a.core.Reset()
	for i := range a.slots[0] {
		a.slots[0][i] = a.g0
	}
}

// Step moves params one Adagrad step against grad. It does not modify grad or allocate.
func (a *Adagrad) Step(params, grad []float64) {
	lr, scale := a.begin(params, grad)
	G := a.slots[0]
	for i := range params {
		g := a.g(grad, i, scale)
		G[i] += g * g
		params[i] -= lr * g / (math.Sqrt(G[i]) + a.eps)
	}
}
