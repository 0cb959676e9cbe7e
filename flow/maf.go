package flow

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

// MAF is the affine autoregressive flow with a MADE conditioner (Papamakarios, Pavlakou &
// Murray 2017, NeurIPS, "Masked autoregressive flow for density estimation", §3; Kingma,
// Salimans, Jozefowicz, Chen, Sutskever & Welling 2016, NeurIPS, "Improved variational
// inference with inverse autoregressive flow", §4). The conditioner is passed in: a nn.MADE on
// ℝ^d with K = 2 outputs per dimension, whose parameter-major output is [m (d) | r (d)]; the
// log-scale is the soft-clamped s = c·tanh(r/c) (c = ScaleClamp, default 5, so a layer scales a
// coordinate by at most e^±c and cannot overflow; s ≈ r for |r| ≪ c).
//
// Two directions, one structure:
//
//   - Default (IAF, the VI direction): the conditioner reads the input u,
//     z_j = u_j·exp(s_j(u_<j)) + m_j(u_<j). Forward (sampling, what every VI step needs) is one
//     MADE pass; Inverse (density of an external z) is sequential: d MADE passes.
//   - ConditionOnOutput (MAF proper, the density-estimation direction): the conditioner reads
//     the output z, z_j = u_j·exp(s_j(z_<j)) + m_j(z_<j). Inverse is one pass; Forward is d
//     passes.
//
// The sequential direction is computed as d passes of the fixed-point iteration
// x ← F(x) (x⁽⁰⁾ = the known vector): after pass k every coordinate of order ≤ k is exact, so
// d passes give the exact map, and on the tape the recorded composition is identically equal to
// it as a function, so its derivatives are exact too.
//
//	log|det ∂z/∂u| = Σ_j s_j
//
// The Jacobian is triangular in the MADE's ordering. Cost of one pass: one MADE forward
// (2·Σ_l in_l·out_l flops, ≈ 2·(d·H + H² + 2H·d) for two hidden layers of H) plus O(d).
// Parameters: those of the MADE.
type MAF struct {
	made     *nn.MADE
	d        int
	onOutput bool
	clamp    float64
}

// MAFOption configures a MAF.
type MAFOption func(*MAF)

// ConditionOnOutput makes the conditioner read z instead of u (MAF proper: cheap inverse,
// sequential forward).
func ConditionOnOutput() MAFOption { return func(m *MAF) { m.onOutput = true } }

// WithScaleClamp sets the soft clamp c of the log-scale, s = c·tanh(r/c); c = 0 or +Inf
// disables it (s = r, unbounded). Default 5.
func WithScaleClamp(c float64) MAFOption { return func(m *MAF) { m.clamp = c } }

// NewMAF returns the affine autoregressive flow with conditioner cond (K must be 2).
func NewMAF(cond *nn.MADE, opts ...MAFOption) *MAF {
	if cond.K() != 2 {
		panic(fmt.Sprintf("flow: NewMAF: conditioner has %d outputs per dimension, want 2", cond.K()))
	}
	m := &MAF{made: cond, d: cond.Dim(), clamp: 5}
	for _, o := range opts {
		o(m)
	}
	if m.clamp < 0 || math.IsNaN(m.clamp) {
		panic(fmt.Sprintf("flow: NewMAF: scale clamp %g, want ≥ 0", m.clamp))
	}
	return m
}

// Conditioner returns the MADE.
func (m *MAF) Conditioner() *nn.MADE { return m.made }

// ConditionsOnOutput reports whether the conditioner reads z (MAF proper) rather than u (IAF).
func (m *MAF) ConditionsOnOutput() bool { return m.onOutput }

// ScaleClamp returns the soft clamp c of the log-scale (0 means none).
func (m *MAF) ScaleClamp() float64 { return m.clamp }

// Spec returns the MAF's spec (type maf).
func (m *MAF) Spec() Spec {
	return Spec{Type: SpecMAF, Dim: m.d, MADE: madeSpec(m.made), ConditionOnOutput: m.onOutput, ScaleClamp: clampSpec(m.clamp)}
}

// Dim returns d.
func (m *MAF) Dim() int { return m.d }

// NumParams returns the MADE's parameter count.
func (m *MAF) NumParams() int { return m.made.NumParams() }

// Init initialises the MADE (Glorot weights from rnd, or a fixed stream when nil), draws the
// hidden biases from U(−1, 1) and zeroes the output layer, so the flow starts at the identity
// exactly (see initConditioner for why the biases are random).
func (m *MAF) Init(params []float64, rnd *rand.Rand) {
	checkLen("MAF.Init", "params", len(params), m.NumParams())
	rnd = defaultRand(rnd)
	m.made.Init(params, rnd)
	initConditioner(params, m.made.Layers(), m.made.Layer, rnd)
}

// step records one conditioner pass at x applied to y: y⊙exp(s(x)) + m(x) (forward) or
// (y − m(x))⊙exp(−s(x)) (inverse), and Σ s(x).
func (m *MAF) step(t *ad.Tape, params, x, y ad.Var, inverse bool) (ad.Var, ad.Var) {
	d := m.d
	o := m.made.Forward(t, params, x)
	shift := t.Slice(o, 0, d)
	s := softClamp(t, t.Slice(o, d, 2*d), m.clamp)
	if inverse {
		y = t.Mul(t.Sub(y, shift), t.Exp(t.Neg(s)))
	} else {
		y = t.Add(t.Mul(y, t.Exp(s)), shift)
	}
	return y, t.Sum(s)
}

// run records the map in direction inverse applied to y: one pass when the conditioner reads
// the given vector, d fixed-point passes when it reads the unknown one.
func (m *MAF) run(t *ad.Tape, params, y ad.Var, inverse bool) (ad.Var, ad.Var) {
	if m.onOutput == inverse { // IAF forward or MAF inverse: the conditioner reads y itself
		return m.step(t, params, y, y, inverse)
	}
	x, ld := y, ad.Var{}
	for range m.d {
		x, ld = m.step(t, params, x, y, inverse)
	}
	return x, ld
}

// Forward records z = T(u) and Σ s (one MADE pass; d passes with ConditionOnOutput).
func (m *MAF) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	checkLen("MAF.Forward", "params", t.Size(params), m.NumParams())
	checkLen("MAF.Forward", "u", t.Size(u), m.d)
	return m.run(t, params, u, false)
}

// InverseTape records u = T⁻¹(z) and Σ s (d MADE passes; one with ConditionOnOutput).
func (m *MAF) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	checkLen("MAF.InverseTape", "params", t.Size(params), m.NumParams())
	checkLen("MAF.InverseTape", "z", t.Size(z), m.d)
	return m.run(t, params, z, true)
}

// Inverse writes u = T⁻¹(z) and returns Σ s, on a pooled scratch tape (no allocation in
// steady state). u may alias z.
func (m *MAF) Inverse(params, z, u []float64) (float64, error) {
	checkLen("MAF.Inverse", "params", len(params), m.NumParams())
	checkLen("MAF.Inverse", "z", len(z), m.d)
	checkLen("MAF.Inverse", "u", len(u), m.d)
	return inverseOnTape(m, "MAF.Inverse", params, z, u)
}

// softClamp records s = c·tanh(r/c) as one node (s = r when c is 0 or +Inf).
func softClamp(t *ad.Tape, r ad.Var, c float64) ad.Var {
	if c == 0 || math.IsInf(c, 1) {
		return r
	}
	y, val, der := t.Map(r)
	for i, ri := range t.Value(r) {
		val[i], der[i] = softClampAt(ri, c)
	}
	return y
}

// softClampAt returns s = c·tanh(r/c) and ds/dr = 1 − tanh²(r/c) (s = r, ds/dr = 1 when c is
// 0 or +Inf).
func softClampAt(r, c float64) (s, ds float64) {
	if c == 0 || math.IsInf(c, 1) {
		return r, 1
	}
	th := math.Tanh(r / c)
	return c * th, 1 - th*th
}

var _ Flow = (*MAF)(nil)

// NewMAFStack returns layers MAF layers on ℝ^d composed in order, each with a MADE of the given
// hidden sizes built with the options made (activation, direct connections); the orderings
// alternate between natural and reversed, which is a Reverse permutation between layers
// without the gather nodes (a WithOrder in made applies to the even layers). opts apply to
// every layer.
func NewMAFStack(d, layers int, hidden []int, made []nn.MADEOption, opts ...MAFOption) *Composed {
	if layers < 1 {
		panic(fmt.Sprintf("flow: NewMAFStack: layers=%d, want ≥ 1", layers))
	}
	rev := make([]int, d)
	for i := range rev {
		rev[i] = d - i
	}
	parts := make([]Flow, layers)
	for l := range parts {
		mo := append([]nn.MADEOption(nil), made...)
		if l%2 == 1 {
			mo = append(mo, nn.WithOrder(rev))
		}
		parts[l] = NewMAF(nn.NewMADE(d, hidden, 2, mo...), opts...)
	}
	return Compose(parts...)
}
