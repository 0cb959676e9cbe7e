package flow

import (
	"fmt"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

// Spec types: the value of Spec.Type for each flow type of this package.
const (
	SpecCompose     = "compose"      // Composed
	SpecMAF         = "maf"          // MAF
	SpecCoupling    = "coupling"     // Coupling
	SpecBernstein   = "bernstein"    // Bernstein
	SpecBernsteinAR = "bernstein_ar" // BernsteinAR
	SpecPermute     = "permute"      // Permutation
	SpecAffine      = "affine"       // Affine
)

// Spec describes the structure of a flow, never its parameter values (those are the caller's
// parameter vector): enough for FromSpec to rebuild a flow with the same map and the same
// parameter layout. It is a tree: a compose node lists its parts in application order. The
// fields each type uses:
//
//	compose       parts
//	maf           made (K = 2), condition_on_output, scale_clamp
//	coupling      keep, hidden, activation, scale_clamp (the conditioner MLP; none when keep is empty)
//	bernstein     degree, tails
//	bernstein_ar  made (K = degree + 1), degree, tails, frozen_affine
//	permute       perm (zero-based: z_i = u_perm[i])
//	affine        —
//
// scale_clamp 0 means no clamp. The JSON names are those of the flow part of fit.json
// (version 2): keep them, or old files stop loading.
type Spec struct {
	Type              string    `json:"type"`
	Dim               int       `json:"dim"`
	Parts             []Spec    `json:"parts,omitempty"`
	MADE              *MADESpec `json:"made,omitempty"`
	ConditionOnOutput bool      `json:"condition_on_output,omitempty"`
	ScaleClamp        float64   `json:"scale_clamp,omitempty"`
	Keep              []int     `json:"keep,omitempty"`
	Hidden            []int     `json:"hidden,omitempty"`
	Activation        string    `json:"activation,omitempty"`
	Degree            int       `json:"degree,omitempty"`
	Tails             string    `json:"tails,omitempty"`
	FrozenAffine      bool      `json:"frozen_affine,omitempty"`
	Perm              []int     `json:"perm,omitempty"`
}

// MADESpec describes an nn.MADE: dimension, hidden sizes, outputs per dimension, hidden
// activation, input ordering (degrees 1..d, one-based as nn.WithOrder takes them) and direct
// connections.
type MADESpec struct {
	Dim        int    `json:"dim"`
	Hidden     []int  `json:"hidden"`
	K          int    `json:"k"`
	Activation string `json:"activation"`
	Order      []int  `json:"order"`
	Direct     bool   `json:"direct,omitempty"`
}

// SpecError is the error of Spec.NumParams and FromSpec: Field is the path of the bad field
// from the root of the spec ("type", "parts[1].made.order") and Msg what is wrong with it.
type SpecError struct {
	Field, Msg string
}

func (e *SpecError) Error() string { return fmt.Sprintf("flow: spec field %q: %s", e.Field, e.Msg) }

// Limits on what a Spec may describe, so that a corrupt or hostile file cannot make FromSpec
// build an enormous structure (the parameter count is known before anything is allocated).
const (
	MaxHiddenLayers = 8       // hidden layers of a conditioner network
	MaxHiddenUnits  = 1 << 14 // units of one hidden layer
	MaxDegree       = 1000    // degree of a Bernstein flow

	maxSpecDepth  = 4
	maxSpecParts  = 256
	maxSpecParams = 1 << 30
)

// NumParams checks every field of s (the structural rules under which the constructors
// would panic, and the size limits) and returns the parameter count of the flow it describes,
// without building it. Cost: O(size of the spec).
func (s Spec) NumParams() (int, error) {
	_, n, err := s.walk(s.Dim, 0, "", false)
	return n, err
}

// FromSpec builds the flow s describes, or returns a *SpecError naming the first bad field.
// FromSpec(f.Spec()) has the same map as f for the same parameter vector. Callers that read s
// from a file and know how many parameters it must have should compare Spec.NumParams first:
// FromSpec allocates the conditioners' masks.
func FromSpec(s Spec) (Flow, error) {
	f, _, err := s.walk(s.Dim, 0, "", true)
	return f, err
}

// walk checks s (a node at depth depth of a flow on ℝ^d, at path) and counts its parameters;
// with build it also builds the flow (only after the whole node is checked).
func (s *Spec) walk(d, depth int, path string, build bool) (Flow, int, error) {
	bad := func(field, format string, a ...any) error {
		return &SpecError{Field: path + field, Msg: fmt.Sprintf(format, a...)}
	}
	if depth == 0 && d < 1 {
		return nil, 0, bad("dim", "%d, want ≥ 1", d)
	}
	if s.Dim != d {
		return nil, 0, bad("dim", "%d, want %d", s.Dim, d)
	}
	if s.FrozenAffine && s.Type != SpecBernsteinAR {
		return nil, 0, bad("frozen_affine", "is for %s only (type %q)", SpecBernsteinAR, s.Type)
	}
	switch s.Type {
	case SpecCompose:
		if depth >= maxSpecDepth {
			return nil, 0, bad("parts", "nested deeper than %d", maxSpecDepth)
		}
		if len(s.Parts) == 0 || len(s.Parts) > maxSpecParts {
			return nil, 0, bad("parts", "%d parts, want 1 to %d", len(s.Parts), maxSpecParts)
		}
		n := 0
		for i := range s.Parts {
			_, k, err := s.Parts[i].walk(d, depth+1, fmt.Sprintf("%sparts[%d].", path, i), false)
			if err != nil {
				return nil, 0, err
			}
			if n += k; n > maxSpecParams {
				return nil, 0, bad("parts", "more than %d parameters", maxSpecParams)
			}
		}
		if !build {
			return nil, n, nil
		}
		parts := make([]Flow, len(s.Parts))
		for i := range s.Parts {
			parts[i], _, _ = s.Parts[i].walk(d, depth+1, "", true) // checked above
		}
		return Compose(parts...), n, nil
	case SpecMAF:
		if s.MADE == nil {
			return nil, 0, bad("made", "missing")
		}
		if s.MADE.K != 2 {
			return nil, 0, bad("made.k", "%d, a MAF needs 2", s.MADE.K)
		}
		if err := checkClamp(s.ScaleClamp); err != nil {
			return nil, 0, bad("scale_clamp", "%v", err)
		}
		n, err := s.MADE.numParams(d, path+"made.")
		if err != nil || !build {
			return nil, n, err
		}
		opts := []MAFOption{WithScaleClamp(s.ScaleClamp)}
		if s.ConditionOnOutput {
			opts = append(opts, ConditionOnOutput())
		}
		return NewMAF(s.MADE.build(), opts...), n, nil
	case SpecCoupling:
		if err := checkClamp(s.ScaleClamp); err != nil {
			return nil, 0, bad("scale_clamp", "%v", err)
		}
		seen := make(map[int]bool, len(s.Keep))
		for _, i := range s.Keep {
			if i < 0 || i >= d || seen[i] {
				return nil, 0, bad("keep", "%v: want distinct indices in 0..%d", s.Keep, d-1)
			}
			seen[i] = true
		}
		if len(s.Keep) == d {
			return nil, 0, bad("keep", "holds every coordinate: nothing to transform")
		}
		nb := d - len(s.Keep)
		n := 2 * nb
		act := ad.Tanh
		if len(s.Keep) > 0 {
			var err error
			if act, err = ParseActivation(s.Activation); err != nil {
				return nil, 0, bad("activation", "%v", err)
			}
			if n, err = mlpParams(append(append([]int{len(s.Keep)}, s.Hidden...), 2*nb)); err != nil {
				return nil, 0, bad("hidden", "%v", err)
			}
		}
		if !build {
			return nil, n, nil
		}
		return NewCoupling(d, s.Keep, s.Hidden, act, s.ScaleClamp), n, nil
	case SpecBernstein, SpecBernsteinAR:
		if s.Degree < 1 || s.Degree > MaxDegree {
			return nil, 0, bad("degree", "%d, want 1 to %d", s.Degree, MaxDegree)
		}
		tails, err := parseTails(s.Tails)
		if err != nil {
			return nil, 0, bad("tails", "%v", err)
		}
		opts := []BernsteinOption{BernsteinTails(tails)}
		if s.Type == SpecBernstein {
			if !build {
				return nil, d * (s.Degree + 3), nil
			}
			return NewBernstein(d, s.Degree, opts...), d * (s.Degree + 3), nil
		}
		if s.MADE == nil {
			return nil, 0, bad("made", "missing")
		}
		if s.MADE.K != s.Degree+1 {
			return nil, 0, bad("made.k", "%d, degree %d needs %d", s.MADE.K, s.Degree, s.Degree+1)
		}
		n, err := s.MADE.numParams(d, path+"made.")
		if err != nil {
			return nil, 0, err
		}
		if !s.FrozenAffine {
			n += 2 * d
		}
		if !build {
			return nil, n, nil
		}
		if s.FrozenAffine {
			opts = append(opts, BernsteinFrozenAffine())
		}
		return NewBernsteinAR(s.MADE.build(), opts...), n, nil
	case SpecPermute:
		if err := checkPerm(s.Perm, d, 0); err != nil {
			return nil, 0, bad("perm", "%v", err)
		}
		if !build {
			return nil, 0, nil
		}
		return Permute(s.Perm), 0, nil
	case SpecAffine:
		if !build {
			return nil, 2 * d, nil
		}
		return NewAffine(d), 2 * d, nil
	}
	return nil, 0, bad("type", "%q, want one of %s", s.Type, strings.Join([]string{SpecCompose, SpecMAF,
		SpecCoupling, SpecBernstein, SpecBernsteinAR, SpecPermute, SpecAffine}, ", "))
}

// numParams checks a MADE spec for a flow on ℝ^d and returns its parameter count.
func (m *MADESpec) numParams(d int, path string) (int, error) {
	bad := func(field, format string, a ...any) error {
		return &SpecError{Field: path + field, Msg: fmt.Sprintf(format, a...)}
	}
	if m.Dim != d {
		return 0, bad("dim", "%d, want %d", m.Dim, d)
	}
	if m.K < 1 || m.K > MaxDegree+1 {
		return 0, bad("k", "%d, want 1 to %d", m.K, MaxDegree+1)
	}
	if _, err := ParseActivation(m.Activation); err != nil {
		return 0, bad("activation", "%v", err)
	}
	if err := checkPerm(m.Order, d, 1); err != nil {
		return 0, bad("order", "%v", err)
	}
	out := m.K * d
	n, err := mlpParams(append(append([]int{d}, m.Hidden...), out))
	if err != nil {
		return 0, bad("hidden", "%v", err)
	}
	if m.Direct && len(m.Hidden) > 0 {
		if n += d * out; n > maxSpecParams {
			return 0, bad("hidden", "more than %d parameters", maxSpecParams)
		}
	}
	return n, nil
}

// build returns the MADE of a spec that numParams accepted.
func (m *MADESpec) build() *nn.MADE {
	act, _ := ParseActivation(m.Activation)
	opts := []nn.MADEOption{nn.WithActivation(act), nn.WithOrder(m.Order)}
	if m.Direct {
		opts = append(opts, nn.WithDirect())
	}
	return nn.NewMADE(m.Dim, m.Hidden, m.K, opts...)
}

// madeSpec describes m.
func madeSpec(m *nn.MADE) *MADESpec {
	h := append([]int{}, m.Hidden()...)
	return &MADESpec{Dim: m.Dim(), Hidden: h, K: m.K(), Activation: m.Activation().String(),
		Order: append([]int(nil), m.Degrees()...), Direct: m.HasDirect()}
}

// clampSpec is the spec value of a scale clamp: 0 for none (+Inf disables it as 0 does).
func clampSpec(c float64) float64 {
	if math.IsInf(c, 1) {
		return 0
	}
	return c
}

func checkClamp(c float64) error {
	if c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return fmt.Errorf("%g, want finite and ≥ 0", c)
	}
	return nil
}

// checkPerm checks that p is a permutation of off..d−1+off.
func checkPerm(p []int, d, off int) error {
	if len(p) != d {
		return fmt.Errorf("%d entries, want %d", len(p), d)
	}
	seen := make([]bool, d)
	for _, v := range p {
		if v-off < 0 || v-off >= d || seen[v-off] {
			return fmt.Errorf("%v is not a permutation of %d..%d", p, off, d-1+off)
		}
		seen[v-off] = true
	}
	return nil
}

// mlpParams returns Σ (in·out + out) over the layers of an MLP with the given sizes.
func mlpParams(sizes []int) (int, error) {
	if len(sizes)-2 > MaxHiddenLayers {
		return 0, fmt.Errorf("%d hidden layers, want at most %d", len(sizes)-2, MaxHiddenLayers)
	}
	for i, s := range sizes {
		if s < 1 || s > MaxHiddenUnits*MaxDegree {
			return 0, fmt.Errorf("layer size %d, want 1 to %d", s, MaxHiddenUnits*MaxDegree)
		}
		if i > 0 && i < len(sizes)-1 && s > MaxHiddenUnits {
			return 0, fmt.Errorf("hidden size %d, want at most %d", s, MaxHiddenUnits)
		}
	}
	n := 0
	for l := 0; l+1 < len(sizes); l++ {
		if n += sizes[l]*sizes[l+1] + sizes[l+1]; n > maxSpecParams {
			return 0, fmt.Errorf("more than %d parameters", maxSpecParams)
		}
	}
	return n, nil
}

// ParseActivation returns the activation whose String is s (the activation names of a Spec).
func ParseActivation(s string) (ad.Activation, error) {
	for _, a := range []ad.Activation{ad.Linear, ad.ReLU, ad.Tanh, ad.Sigmoid} {
		if a.String() == s {
			return a, nil
		}
	}
	return 0, fmt.Errorf("%q, want linear, relu, tanh or sigmoid", s)
}

func parseTails(s string) (Tails, error) {
	for _, t := range []Tails{BoundedTails, LinearTails} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%q, want %q or %q", s, BoundedTails, LinearTails)
}

// Spec returns the compose node with its parts' specs.
func (c *Composed) Spec() Spec {
	s := Spec{Type: SpecCompose, Dim: c.d, Parts: make([]Spec, len(c.parts))}
	for i, f := range c.parts {
		s.Parts[i] = f.Spec()
	}
	return s
}

// Spec returns the permutation's spec.
func (p *Permutation) Spec() Spec {
	return Spec{Type: SpecPermute, Dim: len(p.perm), Perm: append([]int(nil), p.perm...)}
}
