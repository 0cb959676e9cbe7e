package flow

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// Affine is the elementwise affine flow z = μ + exp(ω) ⊙ u.
//
// Parameters (2d): φ = [μ (d) | ω (d)], ω = log scale (the exp map makes steps scale-free; see
// the family package comment).
//
//	log|det ∂z/∂u| = Σ_i ω_i
//
// Cost O(d) in both directions.
type Affine struct{ d int }

// NewAffine returns the elementwise affine flow on ℝ^d.
func NewAffine(d int) *Affine {
	if d < 1 {
		panic(fmt.Sprintf("flow: NewAffine: d=%d, want ≥ 1", d))
	}
	return &Affine{d: d}
}

// Dim returns d.
func (a *Affine) Dim() int { return a.d }

// NumParams returns 2d.
func (a *Affine) NumParams() int { return 2 * a.d }

// Spec returns the spec of type affine.
func (a *Affine) Spec() Spec { return Spec{Type: SpecAffine, Dim: a.d} }

// Init sets μ = 0, ω = 0: the identity.
func (a *Affine) Init(params []float64, _ *rand.Rand) {
	checkLen("Affine.Init", "params", len(params), a.NumParams())
	clear(params)
}

// Set writes μ = loc (0 when nil) and ω_i = log scale[i] (scale nil means 1).
func (a *Affine) Set(params, loc, scale []float64) {
	checkLen("Affine.Set", "params", len(params), a.NumParams())
	d := a.d
	clear(params)
	if loc != nil {
		checkLen("Affine.Set", "loc", len(loc), d)
		copy(params[:d], loc)
	}
	if scale != nil {
		checkLen("Affine.Set", "scale", len(scale), d)
		for i, s := range scale {
			params[d+i] = math.Log(s)
		}
	}
}

// Forward records z = μ + exp(ω)⊙u and Σω (5 nodes).
func (a *Affine) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	d := a.d
	checkLen("Affine.Forward", "params", t.Size(params), 2*d)
	checkLen("Affine.Forward", "u", t.Size(u), d)
	om := t.Slice(params, d, 2*d)
	z = t.Add(t.Slice(params, 0, d), t.Mul(t.Exp(om), u))
	return z, t.Sum(om)
}

// InverseTape records u = (z − μ)⊙exp(−ω) and Σω.
func (a *Affine) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	d := a.d
	checkLen("Affine.InverseTape", "params", t.Size(params), 2*d)
	checkLen("Affine.InverseTape", "z", t.Size(z), d)
	om := t.Slice(params, d, 2*d)
	u = t.Mul(t.Sub(z, t.Slice(params, 0, d)), t.Exp(t.Neg(om)))
	return u, t.Sum(om)
}

// Inverse writes u = (z − μ)⊙exp(−ω) and returns Σω. u may alias z.
func (a *Affine) Inverse(params, z, u []float64) (float64, error) {
	d := a.d
	checkLen("Affine.Inverse", "params", len(params), 2*d)
	checkLen("Affine.Inverse", "z", len(z), d)
	checkLen("Affine.Inverse", "u", len(u), d)
	ld := 0.0
	for i := range d {
		om := params[d+i]
		u[i] = (z[i] - params[i]) * math.Exp(-om)
		ld += om
	}
	if !finite(ld, u) {
		return math.NaN(), fmt.Errorf("flow: Affine.Inverse: non-finite result")
	}
	return ld, nil
}

var _ Flow = (*Affine)(nil)
