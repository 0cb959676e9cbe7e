package bench

import (
	"math"

	"github.com/vigo-bayes/vigo/rng"
)

// latentTarget is a differentiable log density over ℝ^d: logDensity returns log π(q) and
// sets g to its gradient.
type latentTarget interface {
	logDensity(q, g []float64) float64
}

// hmcWork is one HMC transition's scratch for dimension d.
type hmcWork struct {
	q0, g0, p []float64
}

func newHMCWork(d int) *hmcWork {
	return &hmcWork{q0: make([]float64, d), g0: make([]float64, d), p: make([]float64, d)}
}

// hmcTransition is one static HMC transition with a unit metric (Duane, Kennedy, Pendleton &
// Roweth 1987; Neal 2011, "MCMC using Hamiltonian dynamics", §5.2): momentum p ~ N(0, I),
// steps leapfrog steps of size h from (q, p) under H(q, p) = −log π(q) + ½|p|², and a
// Metropolis accept of the end point with probability min(1, e^{H₀ − H₁}). q and g (the
// gradient at q, with lp = log π(q)) are updated in place; it returns the new log density and
// the acceptance probability (0 when the end point is not finite). It leaves π invariant for
// any h > 0. The mcmc package runs whole chains with warmup on a model.Target; the MCEM E-step
// needs one transition per image per epoch on a persistent chain, which this is.
// Cost: steps gradients; nothing allocates.
func hmcTransition(t latentTarget, q, g []float64, lp, h float64, steps int, r *rng.Stream, w *hmcWork) (float64, float64) {
	copy(w.q0, q)
	copy(w.g0, g)
	var k0 float64
	for i := range w.p {
		w.p[i] = r.NormFloat64()
		k0 += w.p[i] * w.p[i]
	}
	h0 := -lp + 0.5*k0
	for i := range w.p {
		w.p[i] += 0.5 * h * g[i]
	}
	lpNew := lp
	for s := range steps {
		for i := range q {
			q[i] += h * w.p[i]
		}
		lpNew = t.logDensity(q, g)
		c := h
		if s == steps-1 {
			c = 0.5 * h
		}
		for i := range w.p {
			w.p[i] += c * g[i]
		}
	}
	var k1 float64
	for _, v := range w.p {
		k1 += v * v
	}
	h1 := -lpNew + 0.5*k1
	acc := 0.0
	if !math.IsNaN(h1) && !math.IsInf(h1, 0) {
		acc = math.Min(1, math.Exp(h0-h1))
	}
	if r.Float64() < acc {
		return lpNew, acc
	}
	copy(q, w.q0)
	copy(g, w.g0)
	return lp, acc
}

// stepAdapter adapts one HMC step size shared by all chains by the Robbins–Monro recursion
// log h ← log h + κ·(a − δ) on each transition's acceptance probability a, with target δ;
// a constant gain κ keeps tracking the posterior as the weights move. h stays in
// [1e-4, 10].
type stepAdapter struct {
	logH, target, gain float64
}

func (s *stepAdapter) h() float64 { return math.Exp(s.logH) }

func (s *stepAdapter) update(acc float64) {
	s.logH = math.Max(math.Log(1e-4), math.Min(math.Log(10), s.logH+s.gain*(acc-s.target)))
}

// imageTarget is log p_θ(x, ε) of one image as a latentTarget.
type imageTarget struct {
	net *dncpNet
	w   *netWork
	x   []int
}

func (t *imageTarget) logDensity(q, g []float64) float64 { return t.net.logJoint(t.w, q, t.x, g) }
