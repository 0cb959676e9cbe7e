package flow

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

// Coupling is the affine coupling layer of Real NVP (Dinh, Sohl-Dickstein & Bengio 2017,
// ICLR, §3.3): the coordinates split into a kept set A and a changed set B,
//
//	z_A = u_A,   z_B = u_B ⊙ exp(s(u_A)) + m(u_A),
//
// with (m, r) = MLP(u_A) ∈ ℝ^{2|B|} (output layout [m | r]) and the soft-clamped log-scale
// s = c·tanh(r/c) (as in MAF). With A empty the conditioner is a free parameter vector [m | r]
// (the layer is an elementwise affine map of B).
//
//	log|det ∂z/∂u| = Σ_{j∈B} s_j
//
// Both directions cost one MLP pass (u_A = z_A is known either way). Parameters: those of the
// MLP (sizes |A|, hidden…, 2|B|), or 2|B| when A is empty.
type Coupling struct {
	d            int
	keep, change []int
	unperm       []int // z = gather(concat(z_A, z_B), unperm)
	net          *nn.MLP
	clamp        float64
}

// NewCoupling returns the affine coupling layer on ℝ^d that keeps the coordinates in keep and
// transforms the others, with an MLP conditioner of the given hidden sizes and activation.
// clamp is the soft clamp of the log-scale (0 disables it; 5 is MAF's default).
func NewCoupling(d int, keep []int, hidden []int, act ad.Activation, clamp float64) *Coupling {
	if d < 1 {
		panic(fmt.Sprintf("flow: NewCoupling: d=%d, want ≥ 1", d))
	}
	in := make([]bool, d)
	for _, i := range keep {
		if i < 0 || i >= d || in[i] {
			panic(fmt.Sprintf("flow: NewCoupling: keep %v must be distinct indices in 0..%d", keep, d-1))
		}
		in[i] = true
	}
	if len(keep) == d {
		panic("flow: NewCoupling: keep holds every coordinate: nothing to transform")
	}
	if clamp < 0 || math.IsNaN(clamp) {
		panic(fmt.Sprintf("flow: NewCoupling: scale clamp %g, want ≥ 0", clamp))
	}
	c := &Coupling{d: d, keep: append([]int(nil), keep...), clamp: clamp}
	for i := range d {
		if !in[i] {
			c.change = append(c.change, i)
		}
	}
	c.unperm = make([]int, d)
	for k, i := range c.keep {
		c.unperm[i] = k
	}
	for k, i := range c.change {
		c.unperm[i] = len(c.keep) + k
	}
	if len(c.keep) > 0 {
		sizes := append(append([]int{len(c.keep)}, hidden...), 2*len(c.change))
		c.net = nn.NewMLP(sizes, act)
	}
	return c
}

// Keep returns the kept coordinates A.
func (c *Coupling) Keep() []int { return c.keep }

// Change returns the transformed coordinates B.
func (c *Coupling) Change() []int { return c.change }

// ScaleClamp returns the soft clamp of the log-scale (0 means none).
func (c *Coupling) ScaleClamp() float64 { return c.clamp }

// Net returns the conditioner MLP (nil when A is empty).
func (c *Coupling) Net() *nn.MLP { return c.net }

// Spec returns the coupling layer's spec (type coupling; hidden and activation only with a
// conditioner network).
func (c *Coupling) Spec() Spec {
	s := Spec{Type: SpecCoupling, Dim: c.d, ScaleClamp: clampSpec(c.clamp)}
	if c.net != nil {
		s.Keep = append([]int(nil), c.keep...)
		sz := c.net.Sizes()
		s.Hidden = append([]int(nil), sz[1:len(sz)-1]...)
		s.Activation = c.net.Activation().String()
	}
	return s
}

// Dim returns d.
func (c *Coupling) Dim() int { return c.d }

// NumParams returns the conditioner's parameter count.
func (c *Coupling) NumParams() int {
	if c.net == nil {
		return 2 * len(c.change)
	}
	return c.net.NumParams()
}

// Init initialises the MLP (Glorot from rnd, or a fixed stream when nil), draws the hidden
// biases from U(−1, 1) and zeroes the output layer, so the layer starts at the identity
// exactly (see initConditioner).
func (c *Coupling) Init(params []float64, rnd *rand.Rand) {
	checkLen("Coupling.Init", "params", len(params), c.NumParams())
	if c.net == nil {
		clear(params)
		return
	}
	rnd = defaultRand(rnd)
	c.net.Init(params, rnd)
	initConditioner(params, c.net.Layers(), c.net.Layer, rnd)
}

// apply records the coupling in either direction.
func (c *Coupling) apply(t *ad.Tape, params, x ad.Var, inverse bool) (ad.Var, ad.Var) {
	y, ld, _ := c.applyS(t, params, x, inverse)
	return y, ld
}

// applyS is apply that also returns the log-scales s of the changed coordinates.
func (c *Coupling) applyS(t *ad.Tape, params, x ad.Var, inverse bool) (y, logdet, s ad.Var) {
	nb := len(c.change)
	xa := t.Gather(x, c.keep)
	var o ad.Var
	if c.net == nil {
		o = params
	} else {
		o = c.net.Forward(t, params, xa)
	}
	shift := t.Slice(o, 0, nb)
	s = softClamp(t, t.Slice(o, nb, 2*nb), c.clamp)
	xb := t.Gather(x, c.change)
	var yb ad.Var
	if inverse {
		yb = t.Mul(t.Sub(xb, shift), t.Exp(t.Neg(s)))
	} else {
		yb = t.Add(t.Mul(xb, t.Exp(s)), shift)
	}
	if len(c.keep) == 0 {
		return t.Gather(yb, c.unperm), t.Sum(s), s
	}
	return t.Gather(t.Concat(xa, yb), c.unperm), t.Sum(s), s
}

// Forward records z = T(u) and Σ_B s (one MLP pass).
func (c *Coupling) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	checkLen("Coupling.Forward", "params", t.Size(params), c.NumParams())
	checkLen("Coupling.Forward", "u", t.Size(u), c.d)
	return c.apply(t, params, u, false)
}

// InverseTape records u = T⁻¹(z) and Σ_B s (one MLP pass).
func (c *Coupling) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	checkLen("Coupling.InverseTape", "params", t.Size(params), c.NumParams())
	checkLen("Coupling.InverseTape", "z", t.Size(z), c.d)
	return c.apply(t, params, z, true)
}

// Inverse writes u = T⁻¹(z) and returns Σ_B s (one MLP pass on a pooled tape). u may alias z.
func (c *Coupling) Inverse(params, z, u []float64) (float64, error) {
	checkLen("Coupling.Inverse", "params", len(params), c.NumParams())
	checkLen("Coupling.Inverse", "z", len(z), c.d)
	checkLen("Coupling.Inverse", "u", len(u), c.d)
	return inverseOnTape(c, "Coupling.Inverse", params, z, u)
}

// RealNVPOption configures NewRealNVP.
type RealNVPOption func(*realNVPConfig)

type realNVPConfig struct {
	act   ad.Activation
	clamp float64
}

// RealNVPActivation sets the conditioners' hidden activation (default ad.Tanh).
func RealNVPActivation(a ad.Activation) RealNVPOption {
	return func(c *realNVPConfig) { c.act = a }
}

// RealNVPScaleClamp sets the soft clamp of the log-scales (default 5; 0 disables).
func RealNVPScaleClamp(clamp float64) RealNVPOption {
	return func(c *realNVPConfig) { c.clamp = clamp }
}

// NewRealNVP returns layers affine coupling layers on ℝ^d with alternating masks, composed in
// order: layer l keeps the coordinates i with i ≡ l (mod 2) and transforms the others, so two
// consecutive layers change every coordinate once (Dinh et al. 2017, §3.4). For d = 1 every
// layer keeps nothing and is an elementwise affine map. Each conditioner is an MLP with the
// given hidden sizes. Cost: one MLP pass per layer in both directions.
func NewRealNVP(d, layers int, hidden []int, opts ...RealNVPOption) *Composed {
	if layers < 1 {
		panic(fmt.Sprintf("flow: NewRealNVP: layers=%d, want ≥ 1", layers))
	}
	cfg := realNVPConfig{act: ad.Tanh, clamp: 5}
	for _, o := range opts {
		o(&cfg)
	}
	parts := make([]Flow, layers)
	for l := range parts {
		var keep []int
		if d > 1 {
			for i := l % 2; i < d; i += 2 {
				keep = append(keep, i)
			}
		}
		parts[l] = NewCoupling(d, keep, hidden, cfg.act, cfg.clamp)
	}
	return Compose(parts...)
}

var _ Flow = (*Coupling)(nil)
