package stan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/model"
)

// Reading the data block's variables from a model.Data, and checking declared constraints on
// values (data, transformed data, transformed parameters, generated quantities).
//
// CmdStan's JSON holds arrays as nested lists, outermost index first, and a matrix as a list
// of rows: that is row-major, the layout of Value, so data are read without reordering.

// dataErr is an error about data variable name (with an optional index).
func dataErr(name string, format string, a ...any) error {
	return fmt.Errorf("data: variable %q: %s", name, fmt.Sprintf(format, a...))
}

// readData reads variable name of base type b with the full dims (array sizes then container
// sizes) from d: ints for an int variable, reals otherwise, row-major. A variable with zero
// elements may be missing from the file.
func readData(d *model.Data, name string, b Base, dims []int) ([]int, []float64, error) {
	n := 1
	for _, k := range dims {
		n *= k
	}
	if d == nil || !d.Has(name) {
		if n == 0 {
			if b == Int {
				return []int{}, nil, nil
			}
			return nil, []float64{}, nil
		}
		file := "no data file"
		if d != nil {
			file = d.Name
		}
		return nil, nil, fmt.Errorf("data: variable %q not found in %s", name, file)
	}
	if n == 0 {
		// A zero-size variable: accept any empty list.
		if b == Int {
			return []int{}, nil, nil
		}
		return nil, []float64{}, nil
	}
	if b == Int {
		var ks []int
		var err error
		if len(dims) == 0 {
			var k int
			k, err = d.Int(name)
			ks = []int{k}
		} else {
			ks, _, err = d.IntArray(name, dims...)
		}
		if err != nil {
			return nil, nil, dataErr(name, "%s (declared %s)", trimModel(err), declShape(dims))
		}
		return ks, nil, nil
	}
	var xs []float64
	var err error
	if len(dims) == 0 {
		var x float64
		x, err = d.Real(name)
		xs = []float64{x}
	} else {
		xs, _, err = d.Array(name, dims...)
	}
	if err != nil {
		return nil, nil, dataErr(name, "%s (declared %s)", trimModel(err), declShape(dims))
	}
	return nil, xs, nil
}

func trimModel(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "model: ")
	return s
}

func declShape(dims []int) string {
	if len(dims) == 0 {
		return "a scalar"
	}
	parts := make([]string, len(dims))
	for i, k := range dims {
		parts[i] = strconv.Itoa(k)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// elemName is Stan's name of the row-major element i of a variable with dims: "x", "x[3]",
// "X[2,5]" (1-based).
func elemName(name string, dims []int, i int) string {
	if len(dims) == 0 {
		return name
	}
	idx := make([]string, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		if dims[k] > 0 {
			idx[k] = strconv.Itoa(i%dims[k] + 1)
			i /= dims[k]
		}
	}
	return name + "[" + strings.Join(idx, ",") + "]"
}

// checked is a value's elements for a constraint check.
type checked struct {
	name string
	dims []int
	x    []float64 // row-major
}

func (c checked) bad(i int, format string, a ...any) error {
	return fmt.Errorf("variable %q: %s", elemName(c.name, c.dims, i), fmt.Sprintf(format, a...))
}

// checkBounds checks lo <= x <= hi element by element; lo and hi hold one value or one per
// element (nil when absent).
func checkBounds(c checked, lo, hi []float64) error {
	at := func(v []float64, i int) float64 {
		if len(v) == 1 {
			return v[0]
		}
		return v[i]
	}
	for i, x := range c.x {
		if lo != nil && !(x >= at(lo, i)) {
			return c.bad(i, "%s, want >= %s", fmtNum(x), fmtNum(at(lo, i)))
		}
		if hi != nil && !(x <= at(hi, i)) {
			return c.bad(i, "%s, want <= %s", fmtNum(x), fmtNum(at(hi, i)))
		}
	}
	return nil
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkStructured checks a structured constraint on each element (of size es = rows×cols) of
// c: simplex, ordered, positive_ordered, unit_vector, cholesky_factor_corr/cov, corr_matrix,
// cov_matrix, with Stan's tolerance 1e-8 where Stan has one.
func checkStructured(c checked, k ConsKind, rows, cols int) error {
	es := rows * cols
	if es == 0 {
		return nil
	}
	const tol = 1e-8
	for a := 0; a+es <= len(c.x); a += es {
		x := c.x[a : a+es]
		switch k {
		case ConsSimplex:
			s := 0.0
			for i, v := range x {
				if !(v >= 0) {
					return c.bad(a+i, "%s, want >= 0 (simplex)", fmtNum(v))
				}
				s += v
			}
			if !(math.Abs(s-1) <= tol) {
				return c.bad(a, "simplex sums to %s, want 1", fmtNum(s))
			}
		case ConsOrdered, ConsPositiveOrdered:
			for i, v := range x {
				if math.IsNaN(v) {
					return c.bad(a+i, "NaN")
				}
				if k == ConsPositiveOrdered && !(v > 0) {
					return c.bad(a+i, "%s, want > 0 (positive_ordered)", fmtNum(v))
				}
				if i > 0 && !(v > x[i-1]) {
					return c.bad(a+i, "%s, want > %s (ordered)", fmtNum(v), fmtNum(x[i-1]))
				}
			}
		case ConsUnitVector:
			s := 0.0
			for _, v := range x {
				s += v * v
			}
			if !(math.Abs(s-1) <= tol) {
				return c.bad(a, "unit_vector has squared norm %s, want 1", fmtNum(s))
			}
		case ConsCholeskyCov, ConsCholeskyCorr:
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					v := x[i*cols+j]
					if j > i && v != 0 {
						return c.bad(a+i*cols+j, "%s, want 0 above the diagonal (%s)", fmtNum(v), k)
					}
					if j == i && !(v > 0) {
						return c.bad(a+i*cols+j, "%s, want > 0 on the diagonal (%s)", fmtNum(v), k)
					}
				}
				if k == ConsCholeskyCorr {
					s := 0.0
					for j := 0; j < cols; j++ {
						s += x[i*cols+j] * x[i*cols+j]
					}
					if !(math.Abs(s-1) <= tol) {
						return c.bad(a+i*cols, "row %d has squared norm %s, want 1 (cholesky_factor_corr)", i+1, fmtNum(s))
					}
				}
			}
		case ConsCorr, ConsCov:
			for i := 0; i < rows; i++ {
				for j := 0; j < i; j++ {
					u, v := x[i*cols+j], x[j*cols+i]
					if !(math.Abs(u-v) <= tol*math.Max(1, math.Abs(u))) {
						return c.bad(a+i*cols+j, "%s, want symmetric (%s)", fmtNum(u), k)
					}
				}
				d := x[i*cols+i]
				if k == ConsCorr && !(math.Abs(d-1) <= tol) {
					return c.bad(a+i*cols+i, "%s, want 1 on the diagonal (corr_matrix)", fmtNum(d))
				}
			}
			if !posDef(x, rows) {
				return c.bad(a, "not positive definite (%s)", k)
			}
		}
	}
	return nil
}

// posDef reports whether the symmetric n×n row-major matrix a has a Cholesky factor.
func posDef(a []float64, n int) bool {
	l := make([]float64, n*n)
	for j := 0; j < n; j++ {
		s := a[j*n+j]
		for k := 0; k < j; k++ {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) {
			return false
		}
		l[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / l[j*n+j]
		}
	}
	return true
}
