package stan

import (
	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// Class is an argument pattern of a built-in signature: one exact Type, or one of Stan's
// vectorised argument classes (Reference Manual, "Vectorization of real-valued functions" and
// the Functions Reference's "reals", "ints", "vectors" argument types).
type Class uint8

// Argument classes. Exact means Sig.Args[i].Type is required (an int is promoted to real,
// and an array of int to an array of real, where a real is expected, as Stan does).
const (
	Exact   Class = iota
	Reals         // real, vector, row_vector, array[] real (and int / array[] int, promoted)
	Ints          // int, array[] int
	Vectors       // vector, row_vector, array[] vector, array[] row_vector
	Any           // any type (the implementation checks); used sparingly, e.g. size, dims, print
)

// Arg is one parameter of a built-in signature.
type Arg struct {
	Class Class
	Type  Type // for Exact
	// DataOnly marks an argument Stan requires to be data (no parameter dependence), e.g.
	// the ODE tolerances.
	DataOnly bool
}

// Ctx is what a built-in receives at run time: the tape, the random stream for _rng functions
// (nil outside generated quantities and transformed data) and the position of the call, for
// error messages.
type Ctx struct {
	T   *ad.Tape
	RNG *rng.Stream
	Pos Pos
	// Call evaluates the user-defined function name on args, recording on tape t (which may be
	// a different tape from T: an ODE solver evaluates the right-hand side on its own tape to
	// get the Jacobians its sensitivity equations need). Set by the compiler.
	Call func(t *ad.Tape, name string, args []Value) (Value, error)

	ints []int // the unused rest of the current chunk of Int's backing array
}

// Int returns the int scalar k, its Ints carved from chunks shared by the evaluation (one
// allocation per 1024 ints instead of one per value; values never write into Ints they did
// not copy).
func (c *Ctx) Int(k int) Value {
	if len(c.ints) == 0 {
		c.ints = make([]int, 1024)
	}
	s := c.ints[0:1:1]
	c.ints = c.ints[1:]
	s[0] = k
	return Value{Type: TInt, Ints: s}
}

// Pos is a position in a Stan source file (1-based line and column).
type Pos struct {
	File      string
	Line, Col int
}

// Impl evaluates a built-in on arguments that passed the signature. A domain error (a
// negative scale, an index out of range) is returned as an error; the compiler reports it with
// the statement's position and the fit's NaN policy rejects the point, as Stan rejects it.
type Impl func(c *Ctx, args []Value) (Value, error)

// RetFunc gives the return type of a vectorised signature from its argument types (nil: Sig.Ret).
type RetFunc func(args []Type) Type

// Sig is one signature of a built-in function, distribution or operator.
//
// Distributions are registered under their full names (normal_lpdf, normal_lupdf,
// normal_lcdf, normal_lccdf, normal_cdf, normal_rng, poisson_lpmf, …); the compiler turns
// `y ~ normal(mu, sigma)` into normal_lupdf(y | mu, sigma). An _lupdf/_lupmf may drop terms
// that are constant in every argument that is not data, as Stan does; an _lpdf/_lpmf keeps all
// terms.
type Sig struct {
	Name string
	Args []Arg
	Ret  Type
	// RetOf, when set, computes the return type from the argument types (e.g. exp(vector) is
	// a vector, exp(array[] real) an array[] real).
	RetOf RetFunc
	Fn    Impl
}

// Table is the set of built-in signatures by name, built by Builtins. It is read-only after
// Builtins returns and safe for concurrent use.
type Table struct {
	byName map[string][]Sig
}

// Lookup returns the signatures registered under name.
func (tb *Table) Lookup(name string) []Sig { return tb.byName[name] }

// Names returns every registered name (unsorted).
func (tb *Table) Names() []string {
	out := make([]string, 0, len(tb.byName))
	for n := range tb.byName {
		out = append(out, n)
	}
	return out
}

// Builtins returns the table of every built-in function, distribution and operator the
// compiler knows. It builds a fresh table on each call (no package-level state); a Program
// builds it once.
func Builtins() *Table {
	tb := &Table{byName: map[string][]Sig{}}
	for _, group := range [][]Sig{
		operatorSigs(),
		mathSigs(),
		matrixSigs(),
		distSigs(),
		rngSigs(),
		odeSigs(),
	} {
		for _, s := range group {
			tb.byName[s.Name] = append(tb.byName[s.Name], s)
		}
	}
	return tb
}
