package optim

import "math"

// RMSpropConfig configures RMSprop. A zero field takes the default shown; the defaults are
// Keras's (TensorFlow 2), which the Bernstein-flow VI paper uses.
type RMSpropConfig struct {
	LR       float64 // base step size; default 0.001
	Rho      float64 // decay ρ of the mean square ∈ (0, 1); default 0.9
	Eps      float64 // ε added to √v; default 1e-7
	Momentum float64 // heavy-ball momentum μ ∈ [0, 1); default 0 (none)

	Schedule  Schedule // multiplies LR by Schedule.Scale(step); nil means Constant
	ClipNorm  float64  // > 0: rescale the gradient to global norm ≤ ClipNorm
	ClipValue float64  // > 0: clamp each gradient component to [−ClipValue, ClipValue]
}

// RMSprop is Hinton's RMSprop (Tieleman & Hinton 2012, Coursera NN lecture 6.5) as Keras 2
// implements it with momentum 0: with g the clipped gradient,
//
//	v ← ρv + (1−ρ)g²,  θ ← θ − α_t·g/(√v + ε),
//
// v starting at 0 and no bias correction, so the first step is α/√(1−ρ) ≈ 3.16α per
// coordinate. With Momentum μ > 0 the increment is accumulated, d ← μd + α_t·g/(√v + ε),
// θ ← θ − d (ε stays outside the square root; Keras's fused momentum kernel puts it inside).
// State: v, d and t.
type RMSprop struct {
	core
	rho, eps, mu float64
}

// NewRMSprop returns an RMSprop optimiser for n parameters.
func NewRMSprop(n int, cfg RMSpropConfig) *RMSprop {
	return &RMSprop{
		core: newCore("RMSprop", n, cfg.LR, 0.001, cfg.Schedule, cfg.ClipNorm, cfg.ClipValue, 2),
		rho:  orDefault(cfg.Rho, 0.9),
		eps:  orDefault(cfg.Eps, 1e-7),
		mu:   cfg.Momentum,
	}
}

// Step moves params one RMSprop step against grad. It does not modify grad or allocate.
func (r *RMSprop) Step(params, grad []float64) {
	lr, scale := r.begin(params, grad)
	v, d := r.slots[0], r.slots[1]
	for i := range params {
		g := r.g(grad, i, scale)
		v[i] = r.rho*v[i] + (1-r.rho)*g*g
		inc := lr * g / (math.Sqrt(v[i]) + r.eps)
		if r.mu != 0 {
			d[i] = r.mu*d[i] + inc
			inc = d[i]
		}
		params[i] -= inc
	}
}
