package optim

// SGDConfig configures SGD. A zero field takes the default shown.
type SGDConfig struct {
	LR       float64 // base step size; default 0.01
	Momentum float64 // momentum μ ∈ [0, 1); default 0 (plain SGD)
	Nesterov bool    // use Nesterov's look-ahead form (needs Momentum > 0)

	Schedule  Schedule // multiplies LR by Schedule.Scale(step); nil means Constant
	ClipNorm  float64  // > 0: rescale the gradient to global norm ≤ ClipNorm
	ClipValue float64  // > 0: clamp each gradient component to [−ClipValue, ClipValue]
}

// SGD is stochastic gradient descent with optional momentum in the form PyTorch uses
// (Sutskever, Martens, Dahl & Hinton 2013, "On the importance of initialization and momentum
// in deep learning", ICML): with g the clipped gradient,
//
//	b ← μb + g,  θ ← θ − α_t·b            (heavy ball)
//	b ← μb + g,  θ ← θ − α_t·(g + μb)     (Nesterov)
//
// b starts at 0, so the first step is α_t·g (α_t·(1+μ)g for Nesterov). State: b and t.
type SGD struct {
	core
	mu       float64
	nesterov bool
}

// NewSGD returns an SGD optimiser for n parameters.
func NewSGD(n int, cfg SGDConfig) *SGD {
	return &SGD{
		core:     newCore("SGD", n, cfg.LR, 0.01, cfg.Schedule, cfg.ClipNorm, cfg.ClipValue, 1),
		mu:       cfg.Momentum,
		nesterov: cfg.Nesterov,
	}
}

// Step moves params one SGD step against grad. It does not modify grad or allocate.
func (s *SGD) Step(params, grad []float64) {
	lr, scale := s.begin(params, grad)
	b := s.slots[0]
	for i := range params {
		g := s.g(grad, i, scale)
		if s.mu == 0 {
			params[i] -= lr * g
			continue
		}
		b[i] = s.mu*b[i] + g
		if s.nesterov {
			params[i] -= lr * (g + s.mu*b[i])
		} else {
			params[i] -= lr * b[i]
		}
	}
}
