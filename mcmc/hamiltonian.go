package mcmc

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// point is a point of phase space: position q, momentum p, the gradient g = ∇ log π(q) and
// lp = log π(q).
type point struct {
	q, p, g []float64
	lp      float64
}

func newPoint(d int) point {
	b := make([]float64, 3*d)
	return point{q: b[:d:d], p: b[d : 2*d : 2*d], g: b[2*d:]}
}

func (z *point) set(o *point) {
	copy(z.q, o.q)
	copy(z.p, o.p)
	copy(z.g, o.g)
	z.lp = o.lp
}

// metric is the Euclidean metric of the kinetic energy K(p) = ½ pᵀM⁻¹p. inv holds M⁻¹: D
// values (diagonal) or D×D row-major (dense); for a dense metric chol holds the lower
// Cholesky factor L of M⁻¹ (LLᵀ = M⁻¹), from which p ~ N(0, M) is drawn as p = L⁻ᵀu. A metric
// of kind Auto owns storage for both forms and switches between them (setDiag, setDense).
type metric struct {
	d     int
	dense bool
	inv   []float64 // diagInv or denseInv, whichever form is in use
	chol  []float64
	scale []float64 // diagonal: 1/√inv, the momentum scales

	cholTmp []float64 // setDense's factor before it is accepted

	diagInv, denseInv []float64
}

func newMetric(d int, kind MetricKind, inv []float64) (*metric, error) {
	m := &metric{d: d, diagInv: make([]float64, d), scale: make([]float64, d)}
	if kind == Dense || kind == Auto && (d <= autoMaxDim || len(inv) == d*d) {
		m.denseInv = make([]float64, d*d)
		m.chol = make([]float64, d*d)
	}
	switch {
	case kind == Dense && inv == nil:
		for i := range d {
			m.denseInv[i*d+i] = 1
		}
		return m, m.setDense(m.denseInv)
	case kind == Dense || kind == Auto && len(inv) == d*d && d > 1:
		return m, m.setDense(inv)
	case inv == nil || kind == Unit:
		for i := range m.diagInv {
			m.diagInv[i] = 1
		}
		return m, m.setDiag(m.diagInv)
	}
	return m, m.setDiag(inv)
}

// setDiag makes M⁻¹ the diagonal matrix with the D values v. It fails, leaving the metric
// as it was, when one is not positive and finite.
func (m *metric) setDiag(v []float64) error {
	for i, x := range v {
		if !(x > 0) || math.IsInf(x, 1) {
			return fmt.Errorf("inverse metric element %d is %v, want positive and finite", i+1, x)
		}
	}
	copy(m.diagInv, v)
	m.inv, m.dense = m.diagInv, false
	for i, x := range m.inv {
		m.scale[i] = 1 / math.Sqrt(x)
	}
	return nil
}

// setDense makes M⁻¹ the D×D row-major matrix a. It fails, leaving the metric as it was,
// when a is not positive definite (or has a non-finite entry). Only for metrics made with
// kind Dense or Auto. Cost O(D³).
func (m *metric) setDense(a []float64) error {
	if m.cholTmp == nil {
		m.cholTmp = make([]float64, len(m.chol))
	}
	if !mathx.Cholesky(m.cholTmp, a, m.d) {
		return fmt.Errorf("inverse metric is not positive definite")
	}
	m.chol, m.cholTmp = m.cholTmp, m.chol
	copy(m.denseInv, a)
	m.inv, m.dense = m.denseInv, true
	return nil
}

// stepScale returns the geometric mean of the standard deviations √(M⁻¹ᵢᵢ) the metric
// assigns: a leapfrog step of size ε moves a coordinate by about ε·stepScale. Cost O(D).
func (m *metric) stepScale() float64 {
	var s float64
	for i := range m.d {
		v := m.inv[i]
		if m.dense {
			v = m.inv[i*m.d+i]
		}
		s += math.Log(v)
	}
	return math.Exp(0.5 * s / float64(m.d))
}

// sharp writes p♯ = M⁻¹p into dst.
func (m *metric) sharp(dst, p []float64) {
	if !m.dense {
		for i, v := range m.inv {
			dst[i] = v * p[i]
		}
		return
	}
	d := m.d
	for i := range d {
		row := m.inv[i*d : (i+1)*d]
		var s float64
		for j, v := range row {
			s += v * p[j]
		}
		dst[i] = s
	}
}

// kinetic returns ½ pᵀM⁻¹p; tmp (len D) is scratch for a dense metric.
func (m *metric) kinetic(p, tmp []float64) float64 {
	var s float64
	if !m.dense {
		for i, v := range m.inv {
			s += v * p[i] * p[i]
		}
		return 0.5 * s
	}
	m.sharp(tmp, p)
	for i, v := range tmp {
		s += v * p[i]
	}
	return 0.5 * s
}

// sampleP draws p ~ N(0, M) into p.
func (m *metric) sampleP(r *rng.Stream, p []float64) {
	if !m.dense {
		for i, s := range m.scale {
			p[i] = r.NormFloat64() * s
		}
		return
	}
	for i := range p {
		p[i] = r.NormFloat64()
	}
	// Solve Lᵀp = u by back substitution: Cov(p) = L⁻ᵀL⁻¹ = (LLᵀ)⁻¹ = M.
	d := m.d
	for i := d - 1; i >= 0; i-- {
		s := p[i]
		for k := i + 1; k < d; k++ {
			s -= m.chol[k*d+i] * p[k]
		}
		p[i] = s / m.chol[i*d+i]
	}
}

// system is the Hamiltonian system of one chain: the target with its tape, the metric and a
// count of gradient evaluations.
type system struct {
	tg    model.Target
	tape  *ad.Tape
	met   *metric
	grads int64
	tmp   []float64
}

// eval sets z.lp and z.g at z.q. A NaN or +∞ log density becomes −∞: the point is rejected
// (a divergence), as Stan treats a non-finite log density. A +∞ is no density a proper
// posterior has; accepting it would make every later energy difference ∞ − ∞ = NaN and the
// acceptance statistic, hence the adapted step size, NaN.
func (s *system) eval(z *point) {
	s.grads++
	z.lp = model.Gradient(s.tape, s.tg, z.q, z.g)
	if math.IsNaN(z.lp) || math.IsInf(z.lp, 1) {
		z.lp = math.Inf(-1)
	}
}

// energy returns H(z) = −log π(q) + ½ pᵀM⁻¹p, +∞ in place of NaN or −∞.
func (s *system) energy(z *point) float64 {
	h := -z.lp + s.met.kinetic(z.p, s.tmp)
	if math.IsNaN(h) || math.IsInf(h, -1) {
		return math.Inf(1)
	}
	return h
}

// leapfrog advances z by one leapfrog step of size eps (negative: backwards in time):
// p ← p + (ε/2)∇log π(q); q ← q + εM⁻¹p; p ← p + (ε/2)∇log π(q). One gradient evaluation.
func (s *system) leapfrog(z *point, eps float64) {
	h := 0.5 * eps
	for i, g := range z.g {
		z.p[i] += h * g
	}
	s.met.sharp(s.tmp, z.p)
	for i, v := range s.tmp {
		z.q[i] += eps * v
	}
	s.eval(z)
	for i, g := range z.g {
		z.p[i] += h * g
	}
}
