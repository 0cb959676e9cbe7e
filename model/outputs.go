package model

import (
	"errors"
	"fmt"
)

// Quantity declares a derived quantity of a Model: a name and a shape (nil for a scalar, {K}
// for a vector, {R, C} for a matrix), flattened to Stan's column-major names as a Param is.
type Quantity struct {
	Name string
	Dims []int
}

// Check reports what is wrong with m's declaration: no Layout or Density, a derived quantity
// with an invalid or repeated name (a parameter's name included) or a negative dimension,
// Derived without Derive (or Derive without Derived), a negative NumObs, or NumObs and LogLik
// not set together. Errors name the field: "model: Model.Check: Derived[1].Name=\"mu\": …".
func (m *Model) Check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("model: Model.Check: "+format, a...)) }
	if m.Layout == nil {
		bad("Layout is nil")
	}
	if m.Density == nil {
		bad("Density is nil")
	}
	seen := map[string]bool{}
	if m.Layout != nil {
		for _, p := range m.Layout.params {
			seen[p.Name] = true
		}
	}
	for k, q := range m.Derived {
		switch {
		case !isIdent(q.Name):
			bad("Derived[%d].Name=%q: not a Stan identifier", k, q.Name)
		case seen[q.Name]:
			bad("Derived[%d].Name=%q: declared twice (parameters included)", k, q.Name)
		}
		seen[q.Name] = true
		for _, d := range q.Dims {
			if d < 0 {
				bad("Derived[%d].Dims=%v: negative dimension", k, q.Dims)
				break
			}
		}
	}
	if (len(m.Derived) > 0) != (m.Derive != nil) {
		bad("Derived has %d quantities and Derive is %s: set both or neither", len(m.Derived), nilness(m.Derive == nil))
	}
	if m.NumObs < 0 {
		bad("NumObs=%d, want ≥ 0", m.NumObs)
	}
	if (m.NumObs > 0) != (m.LogLik != nil) {
		bad("NumObs=%d and LogLik is %s: set both or neither", m.NumObs, nilness(m.LogLik == nil))
	}
	return errors.Join(errs...)
}

func nilness(isNil bool) string {
	if isNil {
		return "nil"
	}
	return "set"
}

// DerivedNames returns the Stan flattened names of the derived quantities (column-major, as
// Layout.Names): what a saved fit stores to say which derived columns it wrote.
func (m *Model) DerivedNames() []string {
	var names []string
	for _, q := range m.Derived {
		names = appendNames(names, q.Name, q.Dims)
	}
	return names
}

// Columns returns the names of the values Row writes: the parameters (Layout.Names) followed by
// the derived quantities (DerivedNames). Every writer of draws — vigo fit, draw and sample —
// uses these columns.
func (m *Model) Columns() []string {
	return append(m.Layout.Names(), m.DerivedNames()...)
}

func (m *Model) derivedLen() int {
	n := 0
	for _, q := range m.Derived {
		n += prod(q.Dims)
	}
	return n
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// Row writes the constrained parameters at the unconstrained vector z (Layout.Names order)
// followed by the derived quantities (DerivedNames order) into dst and returns it: one row of
// Columns, each value computed once. dst is allocated when nil; its signature is that of the
// constrain callbacks of mcmc.Result.Draws and StanCSV. Derived quantities are deterministic
// functions of the draw, so vigo fit, vigo draw and vigo sample give the same row for the same
// z; random generated quantities (posterior predictive draws) would need an RNG stream per row
// that the writers agree on, and are left to a later, separate hook. Row is safe for
// concurrent use; it allocates the derived quantities' buffers (O(len(Columns))) when there are
// any. It panics if a length is wrong or Derive is missing (see Check).
func (m *Model) Row(dst, z []float64) []float64 {
	l := m.Layout
	nd := m.derivedLen()
	if dst == nil {
		dst = make([]float64, l.size+nd)
	}
	if len(z) != l.dim || len(dst) != l.size+nd {
		panic(fmt.Sprintf("model: Model.Row: len(z)=%d, len(dst)=%d, want %d and %d", len(z), len(dst), l.dim, l.size+nd))
	}
	if len(m.Derived) == 0 {
		l.ConstrainValues(z, dst)
		return dst
	}
	if m.Derive == nil {
		panic("model: Model.Row: Derived without Derive")
	}
	s := l.getScratch()
	defer l.putScratch(s)
	l.constrainInto(s, z, dst[:l.size])
	buf := make([]float64, nd)
	out := make([][]float64, len(m.Derived))
	off := 0
	for k, q := range m.Derived {
		n := prod(q.Dims)
		out[k] = buf[off : off+n : off+n]
		off += n
	}
	m.Derive(l.paramValues(s), out)
	off = l.size
	for k, q := range m.Derived {
		d := dst[off : off+len(out[k])]
		if perm := colMajorPerm(q.Dims); perm == nil {
			copy(d, out[k])
		} else {
			for i, r := range perm {
				d[i] = out[k][r]
			}
		}
		off += len(out[k])
	}
	return dst
}

// PointwiseLogLik writes the per-observation log-likelihood at the unconstrained vector z into
// dst (len NumObs; allocated when nil) and returns it. It returns an error when the model has
// no LogLik, and panics if a length is wrong. Safe for concurrent use.
func (m *Model) PointwiseLogLik(dst, z []float64) ([]float64, error) {
	if m.LogLik == nil || m.NumObs <= 0 {
		return nil, errors.New("model: Model.PointwiseLogLik: the model has no LogLik")
	}
	l := m.Layout
	if dst == nil {
		dst = make([]float64, m.NumObs)
	}
	if len(z) != l.dim || len(dst) != m.NumObs {
		panic(fmt.Sprintf("model: Model.PointwiseLogLik: len(z)=%d, len(dst)=%d, want %d and %d", len(z), len(dst), l.dim, m.NumObs))
	}
	s := l.getScratch()
	defer l.putScratch(s)
	l.constrainInto(s, z, s.xn)
	m.LogLik(l.paramValues(s), dst)
	return dst, nil
}
