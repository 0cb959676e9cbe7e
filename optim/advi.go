package optim

import "math"

// ADVIConfig configures the Stan ADVI step-size sequence. A zero field takes the default shown.
type ADVIConfig struct {
	Eta   float64 // scale η; default 1 (Stan's default when eta adaptation is off)
	Alpha float64 // weight of the newest squared gradient ∈ (0, 1]; default 0.1
	Tau   float64 // τ added to √s; default 1

	Schedule  Schedule // multiplies η by Schedule.Scale(step); nil means Constant
	ClipNorm  float64  // > 0: rescale the gradient to global norm ≤ ClipNorm
	ClipValue float64  // > 0: clamp each gradient component to [−ClipValue, ClipValue]
}

// ADVI is the adaptive step-size sequence of Stan's ADVI (Kucukelbir, Tran, Ranganath, Gelman
// & Blei 2017, "Automatic differentiation variational inference", JMLR 18(14), eq. 10), an
// AdaGrad/RMSprop hybrid with a built-in 1/√t decay: with g the clipped gradient and t the
// 1-based step,
//
//	s ← g² at t = 1,  s ← αg² + (1−α)s afterwards,
//	θ ← θ − η_t·t^(−1/2)·g/(τ + √s),
//
// η_t = Eta·Schedule.Scale(t−1). (The paper writes t^(−1/2+ε); Stan uses t^(−1/2).) Stan
// ascends the ELBO; here, as everywhere in this package, grad is the gradient of the loss.
// Stan's choice of η by a pilot search over {100, 10, 1, 0.1, 0.01} is left to the caller.
// State: s and t.
type ADVI struct {
	core
	alpha, tau float64
}

// NewADVI returns a Stan-ADVI step-size sequence for n parameters.
func NewADVI(n int, cfg ADVIConfig) *ADVI {
	return &ADVI{
		core:  newCore("ADVI", n, cfg.Eta, 1, cfg.Schedule, cfg.ClipNorm, cfg.ClipValue, 1),
		alpha: orDefault(cfg.Alpha, 0.1),
		tau:   orDefault(cfg.Tau, 1),
	}
}

// Step moves params one ADVI step against grad. It does not modify grad or allocate.
func (a *ADVI) Step(params, grad []float64) {
	lr, scale := a.begin(params, grad)
	lr /= math.Sqrt(float64(a.t))
	s := a.slots[0]
	for i := range params {
		g := a.g(grad, i, scale)
		if a.t == 1 {
			s[i] = g * g
		} else {
			s[i] = a.alpha*g*g + (1-a.alpha)*s[i]
		}
		params[i] -= lr * g / (a.tau + math.Sqrt(s[i]))
	}
}
