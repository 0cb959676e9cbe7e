package bijector

import (
	"fmt"
	"math"
)

// Kind names a constraint transform, spelled as Stan spells the constraint (and as fit.json
// stores it).
type Kind string

// The kinds of the transforms in this package.
const (
	KindIdentity        Kind = "identity"             // Identity: x = u
	KindLower           Kind = "lower"                // Lower: x = lower + eᵘ
	KindUpper           Kind = "upper"                // Upper: x = upper − eᵘ
	KindInterval        Kind = "interval"             // Interval: x = lower + (upper − lower)·σ(u)
	KindOrdered         Kind = "ordered"              // Ordered
	KindPositiveOrdered Kind = "positive_ordered"     // PositiveOrdered
	KindSimplex         Kind = "simplex"              // Simplex (stick-breaking)
	KindCholeskyCorr    Kind = "cholesky_factor_corr" // CholeskyCorr
	KindCholeskyCov     Kind = "cholesky_factor_cov"  // CholeskyCov
)

// Spec is a transform described as data: its kind, the shape of its constrained value and the
// constants of its formula. New(b.Spec()) builds a transform that computes bit for bit what b
// computes.
//
// Shape is {n} for the elementwise kinds (identity, lower, upper, interval) and the vectors
// (ordered, positive_ordered, simplex), {K, K} for cholesky_factor_corr and {M, N} for
// cholesky_factor_cov. Lower is the bound of lower and interval, Upper that of upper and
// interval; both are 0 for the other kinds.
//
// Count > 1 describes Count independent copies side by side (Repeat; Shape is one copy's) —
// only for the vector kinds ordered, positive_ordered and simplex. ColMajor describes the
// identity on a matrix of Shape {rows, cols} whose free coordinates are column-major
// (IdentityColMajor).
type Spec struct {
	Kind         Kind
	Shape        []int
	Lower, Upper float64
	Count        int
	ColMajor     bool
}

// Describer is implemented by transforms that can describe themselves as a Spec: every
// transform of this package. A layout can be saved (model.Layout.Spec) only when all its
// constraints are Describers.
type Describer interface {
	Spec() Spec
}

func (b identity) Spec() Spec { return Spec{Kind: KindIdentity, Shape: []int{b.n}} }
func (b lower) Spec() Spec    { return Spec{Kind: KindLower, Shape: []int{b.n}, Lower: b.lo} }
func (b upper) Spec() Spec    { return Spec{Kind: KindUpper, Shape: []int{b.n}, Upper: b.hi} }
func (b interval) Spec() Spec {
	return Spec{Kind: KindInterval, Shape: []int{b.n}, Lower: b.lo, Upper: b.hi}
}

func (b *ordered) Spec() Spec {
	if b.positive {
		return Spec{Kind: KindPositiveOrdered, Shape: []int{b.n}}
	}
	return Spec{Kind: KindOrdered, Shape: []int{b.n}}
}

func (b *simplex) Spec() Spec  { return Spec{Kind: KindSimplex, Shape: []int{b.k}} }
func (b *cholCorr) Spec() Spec { return Spec{Kind: KindCholeskyCorr, Shape: []int{b.k, b.k}} }
func (b *cholCov) Spec() Spec  { return Spec{Kind: KindCholeskyCov, Shape: []int{b.m, b.n}} }

// New builds the transform that s describes. Unlike the constructors it returns an error,
// never panics, for a bad spec (s usually comes from a file): an unknown kind, a shape of the
// wrong rank or with a negative or impossible extent, a bound that is NaN or infinite on the
// wrong side, or lower ≥ upper for interval. Errors name the field:
// "bijector: New: kind interval: Lower=2, Upper=1, want Lower < Upper". Infinite bounds reduce
// as in the constructors (lower = −∞ is the identity).
func New(s Spec) (Bijector, error) {
	fail := func(format string, a ...any) (Bijector, error) {
		return nil, fmt.Errorf("bijector: New: kind %s: "+format, append([]any{s.Kind}, a...)...)
	}
	if s.ColMajor {
		if s.Kind != KindIdentity || len(s.Shape) != 2 || s.Shape[0] < 0 || s.Shape[1] < 0 || s.Count > 1 {
			return fail("ColMajor with Shape=%v, Count=%d: want identity of Shape {rows, cols}", s.Shape, s.Count)
		}
		return IdentityColMajor(s.Shape[0], s.Shape[1]), nil
	}
	if s.Count < 0 {
		return fail("Count=%d, want ≥ 0", s.Count)
	}
	if s.Count > 1 {
		switch s.Kind {
		case KindOrdered, KindPositiveOrdered, KindSimplex:
		default:
			return fail("Count=%d: copies only of ordered, positive_ordered and simplex", s.Count)
		}
		one := s
		one.Count = 0
		b, err := New(one)
		if err != nil {
			return nil, err
		}
		return Repeat(b, s.Count), nil
	}
	vector := func() (int, bool) {
		if len(s.Shape) != 1 || s.Shape[0] < 0 {
			return 0, false
		}
		return s.Shape[0], true
	}
	switch s.Kind {
	case KindIdentity, KindLower, KindUpper, KindInterval, KindOrdered, KindPositiveOrdered, KindSimplex:
		n, ok := vector()
		if !ok {
			return fail("Shape=%v, want {n} with n ≥ 0", s.Shape)
		}
		switch s.Kind {
		case KindIdentity:
			return Identity(n), nil
		case KindLower:
			if math.IsNaN(s.Lower) || math.IsInf(s.Lower, 1) {
				return fail("Lower=%g, want finite", s.Lower)
			}
			return Lower(n, s.Lower), nil
		case KindUpper:
			if math.IsNaN(s.Upper) || math.IsInf(s.Upper, -1) {
				return fail("Upper=%g, want finite", s.Upper)
			}
			return Upper(n, s.Upper), nil
		case KindInterval:
			if !(s.Lower < s.Upper) {
				return fail("Lower=%g, Upper=%g, want Lower < Upper", s.Lower, s.Upper)
			}
			return Interval(n, s.Lower, s.Upper), nil
		case KindOrdered:
			return Ordered(n), nil
		case KindPositiveOrdered:
			return PositiveOrdered(n), nil
		default: // KindSimplex
			if n < 1 {
				return fail("Shape=%v, want {K} with K ≥ 1", s.Shape)
			}
			return Simplex(n), nil
		}
	case KindCholeskyCorr:
		if len(s.Shape) != 2 || s.Shape[0] != s.Shape[1] || s.Shape[0] < 1 {
			return fail("Shape=%v, want {K, K} with K ≥ 1", s.Shape)
		}
		return CholeskyCorr(s.Shape[0]), nil
	case KindCholeskyCov:
		if len(s.Shape) != 2 || s.Shape[1] < 0 || s.Shape[0] < s.Shape[1] {
			return fail("Shape=%v, want {M, N} with M ≥ N ≥ 0", s.Shape)
		}
		return CholeskyCov(s.Shape[0], s.Shape[1]), nil
	}
	return nil, fmt.Errorf("bijector: New: Kind=%q: unknown kind", s.Kind)
}
