package model

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vigo-bayes/vigo/bijector"
)

// TransformAffineInterval is the ParamSpec transform of a parameter with dependent Bounds (an
// interval whose ends are affine in earlier parameters); the other transforms are the
// bijector.Kind names ("identity", "lower", "interval", "simplex", …).
const TransformAffineInterval = "affine_interval"

// ParamSpec is one parameter of a Layout as data that survives JSON, so that a saved fit can map
// its unconstrained draws to the parameters without the model or its data: the name, the shape
// and the constraint transform with its constants. It is the "layout" entry of fit.json,
// unchanged since version 1 of that file.
//
// Transform is a bijector.Kind or "affine_interval". Lower and Upper are the bounds of lower,
// upper and interval; LowerAffine and UpperAffine the Bounds of affine_interval (one entry
// shared by every element, or one per element in row-major order). Count > 1 (ordered,
// positive_ordered, simplex) is that many independent vectors of the last dimension's size,
// Stan's array of vectors (bijector.Repeat); ColMajor (identity of a matrix) says the
// unconstrained coordinates are column-major, Stan's order (bijector.IdentityColMajor). Both
// were added in session 4 and are omitted when zero, so older files read as before.
type ParamSpec struct {
	Name        string   `json:"name"`
	Dims        []int    `json:"dims,omitempty"`
	Transform   string   `json:"transform"`
	Lower       *float64 `json:"lower,omitempty"`
	Upper       *float64 `json:"upper,omitempty"`
	LowerAffine []Affine `json:"lower_affine,omitempty"`
	UpperAffine []Affine `json:"upper_affine,omitempty"`
	Count       int      `json:"count,omitempty"`
	ColMajor    bool     `json:"col_major,omitempty"`
}

// Spec describes the layout's parameters as data; LayoutFromSpec rebuilds a layout that
// computes bit for bit what l computes. It fails, naming the parameter, when a Constraint is
// not a bijector.Describer (a transform defined outside package bijector); that error wraps
// ErrUndescribed. Cost O(NumParams).
func (l *Layout) Spec() ([]ParamSpec, error) {
	specs := make([]ParamSpec, len(l.params))
	for i, p := range l.params {
		s := ParamSpec{Name: p.Name, Dims: slices.Clone(p.Dims), Transform: string(bijector.KindIdentity)}
		switch {
		case p.Bounds != nil:
			s.Transform = TransformAffineInterval
			s.LowerAffine, s.UpperAffine = cloneAffine(p.Bounds.Lower), cloneAffine(p.Bounds.Upper)
		case p.Constraint != nil:
			d, ok := p.Constraint.(bijector.Describer)
			if !ok {
				return nil, fmt.Errorf("model: Layout.Spec: parameter %s: constraint %v does not describe itself (bijector.Describer), so it cannot be saved: %w", p.Name, p.Constraint, ErrUndescribed)
			}
			bs := d.Spec()
			s.Transform = string(bs.Kind)
			if bs.Count > 1 {
				s.Count = bs.Count
			}
			s.ColMajor = bs.ColMajor
			switch bs.Kind {
			case bijector.KindLower:
				s.Lower = &bs.Lower
			case bijector.KindUpper:
				s.Upper = &bs.Upper
			case bijector.KindInterval:
				s.Lower, s.Upper = &bs.Lower, &bs.Upper
			}
		}
		specs[i] = s
	}
	return specs, nil
}

// LayoutFromSpec rebuilds the layout that Layout.Spec described. Errors name the parameter and
// the JSON field: `model: LayoutFromSpec: parameter sigma: field "lower": missing`, an unknown
// "transform", "dims" that do not fit the transform, bounds that are NaN or on the wrong side,
// "lower_affine"/"upper_affine" terms that are not values of earlier parameters. It does not
// bound the total size below 2³¹ values per parameter: a reader of untrusted files checks the
// dims against what it expects first (fit.Read does, against the family's dimension).
func LayoutFromSpec(specs []ParamSpec) (*Layout, error) {
	params := make([]Param, len(specs))
	known := map[string]bool{} // Stan names of the values of earlier parameters
	for i, s := range specs {
		p, err := s.param(known)
		if err != nil {
			return nil, fmt.Errorf("model: LayoutFromSpec: parameter %s: %w", s.Name, err)
		}
		params[i] = p
		for _, nm := range appendNames(nil, s.Name, s.Dims) {
			known[nm] = true
		}
	}
	lay, err := NewLayout(params...)
	if err != nil {
		return nil, fmt.Errorf("model: LayoutFromSpec: %w", err)
	}
	return lay, nil
}

// param turns s into a Param; known holds the value names of the earlier parameters.
func (s *ParamSpec) param(known map[string]bool) (Param, error) {
	p := Param{Name: s.Name, Dims: slices.Clone(s.Dims)}
	n := 1
	for _, d := range s.Dims {
		if d < 0 {
			return p, fmt.Errorf("field \"dims\": %v, negative dimension", s.Dims)
		}
		if d > 0 && n > math.MaxInt32/d {
			return p, fmt.Errorf("field \"dims\": %v, more than 2³¹ values", s.Dims)
		}
		n *= d
	}
	need := func(v *float64, field string) (float64, error) {
		if v == nil {
			return 0, fmt.Errorf("field %q: missing (transform %s)", field, s.Transform)
		}
		return *v, nil
	}
	bs := bijector.Spec{Kind: bijector.Kind(s.Transform), Shape: []int{n}}
	if s.Count < 0 {
		return p, fmt.Errorf("field \"count\": %d, want ≥ 0", s.Count)
	}
	if s.Count > 1 {
		switch bs.Kind {
		case bijector.KindOrdered, bijector.KindPositiveOrdered, bijector.KindSimplex:
		default:
			return p, fmt.Errorf("field \"count\": %d copies of transform %s, want ordered, positive_ordered or simplex", s.Count, s.Transform)
		}
		if len(s.Dims) < 2 || s.Dims[len(s.Dims)-1]*s.Count != n {
			return p, fmt.Errorf("field \"count\": %d copies of dims %v, want the product of all but the last dimension", s.Count, s.Dims)
		}
		bs.Shape, bs.Count = []int{n / s.Count}, s.Count
	}
	if s.ColMajor {
		if bs.Kind != bijector.KindIdentity || len(s.Dims) != 2 {
			return p, fmt.Errorf("field \"col_major\": with transform %s and dims %v, want identity of a matrix", s.Transform, s.Dims)
		}
		bs.Shape, bs.ColMajor = slices.Clone(s.Dims), true
	}
	switch bs.Kind {
	case TransformAffineInterval:
		for _, f := range []struct {
			field string
			as    []Affine
		}{{"lower_affine", s.LowerAffine}, {"upper_affine", s.UpperAffine}} {
			if len(f.as) != 1 && len(f.as) != n {
				return p, fmt.Errorf("field %q: %d bounds, want 1 or %d", f.field, len(f.as), n)
			}
			for _, a := range f.as {
				if math.IsNaN(a.Const) || math.IsInf(a.Const, 0) {
					return p, fmt.Errorf("field %q: const %g, want finite", f.field, a.Const)
				}
				for _, tm := range a.Terms {
					if !known[tm.Name] {
						return p, fmt.Errorf("field %q: %q is not a value of an earlier parameter", f.field, tm.Name)
					}
					if math.IsNaN(tm.Coef) || math.IsInf(tm.Coef, 0) {
						return p, fmt.Errorf("field %q: coef of %s %g, want finite", f.field, tm.Name, tm.Coef)
					}
				}
			}
		}
		p.Bounds = &Bounds{Lower: cloneAffine(s.LowerAffine), Upper: cloneAffine(s.UpperAffine)}
		return p, nil
	case bijector.KindIdentity:
		if !bs.ColMajor {
			return p, nil
		}
	case bijector.KindLower, bijector.KindInterval:
		lo, err := need(s.Lower, "lower")
		if err != nil {
			return p, err
		}
		if math.IsNaN(lo) || math.IsInf(lo, 1) {
			return p, fmt.Errorf("field \"lower\": %g, want finite", lo)
		}
		bs.Lower = lo
		if bs.Kind == bijector.KindLower {
			break
		}
		if bs.Upper, err = need(s.Upper, "upper"); err != nil {
			return p, err
		}
		if !(bs.Lower < bs.Upper) {
			return p, fmt.Errorf("fields \"lower\", \"upper\": %g, %g, want lower < upper", bs.Lower, bs.Upper)
		}
	case bijector.KindUpper:
		hi, err := need(s.Upper, "upper")
		if err != nil {
			return p, err
		}
		if math.IsNaN(hi) || math.IsInf(hi, -1) {
			return p, fmt.Errorf("field \"upper\": %g, want finite", hi)
		}
		bs.Upper = hi
	case bijector.KindOrdered, bijector.KindPositiveOrdered, bijector.KindSimplex:
		if bs.Kind == bijector.KindSimplex && bs.Shape[0] < 1 {
			return p, fmt.Errorf("field \"dims\": %v, a simplex needs at least one value", s.Dims)
		}
	case bijector.KindCholeskyCorr:
		if len(s.Dims) != 2 || s.Dims[0] != s.Dims[1] || s.Dims[0] < 1 {
			return p, fmt.Errorf("field \"dims\": %v, want K×K with K ≥ 1 for %s", s.Dims, s.Transform)
		}
		bs.Shape = slices.Clone(s.Dims)
	case bijector.KindCholeskyCov:
		if len(s.Dims) != 2 || s.Dims[0] < s.Dims[1] {
			return p, fmt.Errorf("field \"dims\": %v, want M×N with M ≥ N for %s", s.Dims, s.Transform)
		}
		bs.Shape = slices.Clone(s.Dims)
	default:
		return p, fmt.Errorf("field \"transform\": unknown transform %q", s.Transform)
	}
	b, err := bijector.New(bs)
	if err != nil {
		return p, fmt.Errorf("field \"transform\": %w", err)
	}
	p.Constraint = b
	return p, nil
}

// ErrUndescribed is wrapped by Layout.Spec's error when a parameter's constraint is a transform
// defined outside package bijector (not a bijector.Describer, e.g. a compiled Stan program's
// array of simplexes): such a layout works for fitting and sampling but cannot be saved.
var ErrUndescribed = errors.New("the transform is not one package bijector can rebuild")
