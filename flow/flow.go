// Package flow holds vigo's normalizing flows: invertible maps T_φ: ℝ^d → ℝ^d with exact
// log-determinants, used as variational families (family.Flow pushes N(0, I) through one).
//
// A flow holds structure, never values: its parameters φ arrive as a caller-owned slice or a
// Var on an ad.Tape (DESIGN.md §2), so one flow value serves any number of parameter vectors
// and goroutines.
//
// Direction. Forward is the sampling direction, u (base noise) ↦ z; it is what a VI step
// evaluates S times on the tape, so every flow here makes it cheap. Inverse, z ↦ u, is needed
// only for the density of external points (PSIS on foreign draws, LogProb in tests, mixture
// components); it runs in float64 and may be more expensive (sequential for autoregressive
// flows, root finding for Bernstein flows). The log-determinant returned in both directions is
// that of the forward map at u:
//
//	log q(z) = log p_base(u) − log|det ∂T/∂u|,   u = T⁻¹(z).
//
// Composition order is data-flow order, like NumPyro's ComposeTransform and the opposite of
// TFP's Chain: Compose(f₁, f₂, …, f_k) maps u through f₁ first and f_k last.
package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
)

// Flow is an invertible map T_φ: ℝ^Dim → ℝ^Dim with NumParams parameters. Implementations
// hold no mutable state and are safe for concurrent use. flowtest.Check tests an
// implementation against every rule below.
type Flow interface {
	// Dim is the dimension d of u and z.
	Dim() int
	// NumParams is the length of φ.
	NumParams() int
	// Forward records z = T(u; φ) and log|det ∂T/∂u| (a scalar) on t. params has NumParams
	// elements, u has Dim.
	Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var)
	// InverseTape records u = T⁻¹(z; φ) and the forward log|det ∂T/∂u| at that u on t,
	// differentiable in z and φ. family.Flow needs it for LogDensity of a point on the tape
	// (sticking-the-landing gradients, mixtures). Where the float inverse searches for a root
	// (Bernstein flows), the recorded graph is that of the converged root, with derivatives
	// by the implicit function theorem.
	InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var)
	// Inverse writes u = T⁻¹(z; φ) and returns log|det ∂T/∂u| at that u (the forward
	// log-determinant, so log q(z) = log p_base(u) − logdet). It fails when z is outside the
	// range of T or the inversion does not converge; it does not allocate in steady state.
	Inverse(params, z, u []float64) (logdet float64, err error)
	// Init writes parameters for which T is the identity or close to it (so a flow family
	// starts at its base distribution). rnd, when not nil, draws the parts that need random
	// symmetry breaking (hidden weights of conditioner networks); nil gives a fixed,
	// deterministic initialisation.
	Init(params []float64, rnd *rand.Rand)
	// Spec describes the structure of the flow (never its parameter values): FromSpec(Spec())
	// builds a flow with the same map for the same parameter vector.
	Spec() Spec
}

// tapes is a pool of scratch tapes for the float64 methods (Inverse, family.Flow.LogProb),
// which reuse the tape code paths without allocating in steady state.
var tapes = sync.Pool{New: func() any { return new(ad.Tape) }}

// GetTape returns a reset scratch tape from a shared pool; return it with PutTape.
func GetTape() *ad.Tape {
	t := tapes.Get().(*ad.Tape)
	t.Reset()
	return t
}

// PutTape returns a tape obtained from GetTape to the pool.
func PutTape(t *ad.Tape) { tapes.Put(t) }

// inverseOnTape is the float64 Inverse of a flow whose tape inverse is made of recorded
// operations alone, without a root search (MAF, Coupling): it evaluates InverseTape on a pooled scratch tape with
// constant inputs, so it does not allocate in steady state. u may alias z. fn names the
// method in errors.
func inverseOnTape(f Flow, fn string, params, z, u []float64) (float64, error) {
	t := GetTape()
	defer PutTape(t)
	x, ld := f.InverseTape(t, t.ConstRef(params), t.ConstRef(z))
	v := t.Float(ld)
	copy(u, t.Value(x))
	if !finite(v, u) {
		return math.NaN(), fmt.Errorf("flow: %s: non-finite result (log-det %g)", fn, v)
	}
	return v, nil
}

// defaultRand returns rnd, or a fixed-seed generator when rnd is nil.
func defaultRand(rnd *rand.Rand) *rand.Rand {
	if rnd != nil {
		return rnd
	}
	return rand.New(rand.NewPCG(0x766967, 0x666c6f77))
}

// initConditioner finishes the initialisation of a conditioner network whose weights are
// already drawn: hidden biases from U(−1, 1), output layer zero (the flow is the identity).
//
// Why random biases: with zero biases and odd activations (tanh) every hidden unit is an odd
// function of the input, so at the identity the gradient of the output layer, E[h(u)·g(u)],
// vanishes for every even correction g the target needs (a banana's u₁² ridge): the fit sits
// on a saddle until Monte Carlo noise pushes it off. Random biases give the units even parts.
func initConditioner(params []float64, layers int, layer func([]float64, int) (W, b []float64), rnd *rand.Rand) {
	for l := 0; l < layers-1; l++ {
		_, b := layer(params, l)
		for i := range b {
			b[i] = 2*rnd.Float64() - 1
		}
	}
	W, b := layer(params, layers-1)
	clear(W)
	clear(b)
}

func checkLen(fn, name string, got, want int) {
	if got != want {
		panic(fmt.Sprintf("flow: %s: len(%s)=%d, want %d", fn, name, got, want))
	}
}

// finite reports whether every element of x and the value v are finite.
func finite(v float64, x []float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	for _, xi := range x {
		if math.IsNaN(xi) || math.IsInf(xi, 0) {
			return false
		}
	}
	return true
}

// Composed is the composition of flows in data-flow order: T = f_k ∘ … ∘ f₂ ∘ f₁. Its
// parameters are those of f₁, f₂, …, f_k concatenated in that order, and its log-determinant
// is the sum of the parts' (each at its own input).
type Composed struct {
	parts []Flow
	offs  []int
	d     int
}

// Compose returns the flow that applies fs[0] first and fs[len−1] last. All parts must have
// the same dimension.
func Compose(fs ...Flow) *Composed {
	if len(fs) == 0 {
		panic("flow: Compose: no flows")
	}
	c := &Composed{parts: fs, offs: make([]int, len(fs)+1), d: fs[0].Dim()}
	for i, f := range fs {
		if f.Dim() != c.d {
			panic(fmt.Sprintf("flow: Compose: part %d has dimension %d, part 0 has %d", i, f.Dim(), c.d))
		}
		c.offs[i+1] = c.offs[i] + f.NumParams()
	}
	return c
}

// Parts returns the composed flows in application order.
func (c *Composed) Parts() []Flow { return c.parts }

// Offset returns the offset of part i's parameters in the composed parameter vector.
func (c *Composed) Offset(i int) int { return c.offs[i] }

// Dim returns d.
func (c *Composed) Dim() int { return c.d }

// NumParams returns the sum of the parts' parameter counts.
func (c *Composed) NumParams() int { return c.offs[len(c.parts)] }

func (c *Composed) view(t *ad.Tape, params ad.Var, i int) ad.Var {
	if len(c.parts) == 1 {
		return params
	}
	return t.Slice(params, c.offs[i], c.offs[i+1])
}

// Forward applies the parts in order and sums their log-determinants.
func (c *Composed) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	checkLen("Composed.Forward", "params", t.Size(params), c.NumParams())
	z = u
	for i, f := range c.parts {
		var ld ad.Var
		z, ld = f.Forward(t, c.view(t, params, i), z)
		if i == 0 {
			logdet = ld
		} else {
			logdet = t.Add(logdet, ld)
		}
	}
	return z, logdet
}

// Inverse inverts the parts in reverse order. u may alias z.
func (c *Composed) Inverse(params, z, u []float64) (float64, error) {
	checkLen("Composed.Inverse", "params", len(params), c.NumParams())
	if &u[0] != &z[0] {
		copy(u, z)
	}
	sum := 0.0
	for i := len(c.parts) - 1; i >= 0; i-- {
		ld, err := c.parts[i].Inverse(params[c.offs[i]:c.offs[i+1]], u, u)
		if err != nil {
			return math.NaN(), err
		}
		sum += ld
	}
	return sum, nil
}

// InverseTape records the inverse of every part in reverse order.
func (c *Composed) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	checkLen("Composed.InverseTape", "params", t.Size(params), c.NumParams())
	u = z
	for i := len(c.parts) - 1; i >= 0; i-- {
		var ld ad.Var
		u, ld = c.parts[i].InverseTape(t, c.view(t, params, i), u)
		if i == len(c.parts)-1 {
			logdet = ld
		} else {
			logdet = t.Add(logdet, ld)
		}
	}
	return u, logdet
}

// Init initialises every part.
func (c *Composed) Init(params []float64, rnd *rand.Rand) {
	checkLen("Composed.Init", "params", len(params), c.NumParams())
	for i, f := range c.parts {
		f.Init(params[c.offs[i]:c.offs[i+1]], rnd)
	}
}

// Permutation reorders coordinates: z_i = u_{Perm[i]}. It has no parameters and
// log-determinant 0. Put one between autoregressive or coupling layers so every coordinate
// gets to condition on every other.
type Permutation struct {
	perm, inv []int
}

// Permute returns the permutation z_i = u_{perm[i]}; perm must be a permutation of 0..d−1.
func Permute(perm []int) *Permutation {
	d := len(perm)
	p := &Permutation{perm: append([]int(nil), perm...), inv: make([]int, d)}
	for i := range p.inv {
		p.inv[i] = -1
	}
	for i, j := range perm {
		if j < 0 || j >= d || p.inv[j] >= 0 {
			panic(fmt.Sprintf("flow: Permute: %v is not a permutation of 0..%d", perm, d-1))
		}
		p.inv[j] = i
	}
	return p
}

// Reverse returns the permutation z_i = u_{d−1−i}.
func Reverse(d int) *Permutation {
	perm := make([]int, d)
	for i := range perm {
		perm[i] = d - 1 - i
	}
	return Permute(perm)
}

// Perm returns the permutation (z_i = u_{Perm[i]}). Do not modify it.
func (p *Permutation) Perm() []int { return p.perm }

// Dim returns d.
func (p *Permutation) Dim() int { return len(p.perm) }

// NumParams returns 0.
func (p *Permutation) NumParams() int { return 0 }

// Forward records z = u[perm] (one gather node) and a zero log-determinant.
func (p *Permutation) Forward(t *ad.Tape, _, u ad.Var) (z, logdet ad.Var) {
	return t.Gather(u, p.perm), t.Const(0)
}

// InverseTape records u = z[perm⁻¹].
func (p *Permutation) InverseTape(t *ad.Tape, _, z ad.Var) (u, logdet ad.Var) {
	return t.Gather(z, p.inv), t.Const(0)
}

// Inverse writes u with u_{perm[i]} = z_i. u may alias z (then a pooled scratch is used).
func (p *Permutation) Inverse(_, z, u []float64) (float64, error) {
	checkLen("Permutation.Inverse", "z", len(z), len(p.perm))
	checkLen("Permutation.Inverse", "u", len(u), len(p.perm))
	if &u[0] == &z[0] {
		t := GetTape()
		tmp := t.Scratch(len(z))
		copy(tmp, z)
		for i, j := range p.perm {
			u[j] = tmp[i]
		}
		PutTape(t)
		return 0, nil
	}
	for i, j := range p.perm {
		u[j] = z[i]
	}
	return 0, nil
}

// Init does nothing: a permutation has no parameters.
func (p *Permutation) Init([]float64, *rand.Rand) {}

var (
	_ Flow = (*Composed)(nil)
	_ Flow = (*Permutation)(nil)
)
