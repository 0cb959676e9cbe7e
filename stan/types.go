package stan

import (
	"strings"

	"github.com/vigo-bayes/vigo/ad"
)

// Base is the element type of a Stan type before any array dimensions.
type Base uint8

// The Stan base types posteriordb's programs use (complex types are not supported).
const (
	Void Base = iota // the return type of a function that returns nothing
	Int
	Real
	Vector
	RowVector
	Matrix
	// Func is the type of a function passed by name to a higher-order built-in (the ODE
	// solvers' right-hand side, map_rect, reduce_sum); its Value carries only Name.
	Func
)

var baseNames = [...]string{Void: "void", Int: "int", Real: "real", Vector: "vector", RowVector: "row_vector", Matrix: "matrix", Func: "function"}

// String returns the Stan spelling of b.
func (b Base) String() string {
	if int(b) < len(baseNames) {
		return baseNames[b]
	}
	return "?"
}

// Type is a Stan type without sizes: a base type and a number of array dimensions, e.g.
// array[,] vector is {Vector, 2}. Sizes are run-time properties of values (Value.Dims).
type Type struct {
	Base  Base
	Array int
}

// Common types.
var (
	TInt       = Type{Base: Int}
	TReal      = Type{Base: Real}
	TVector    = Type{Base: Vector}
	TRowVector = Type{Base: RowVector}
	TMatrix    = Type{Base: Matrix}
	TVoid      = Type{Base: Void}
)

// String returns the Stan spelling, e.g. "array[,] vector".
func (t Type) String() string {
	if t.Array == 0 {
		return t.Base.String()
	}
	return "array[" + strings.Repeat(",", t.Array-1) + "] " + t.Base.String()
}

// Elem is the type of one element of an array type (t.Array > 0).
func (t Type) Elem() Type { return Type{Base: t.Base, Array: t.Array - 1} }

// IsScalar reports int or real.
func (t Type) IsScalar() bool { return t.Array == 0 && (t.Base == Int || t.Base == Real) }

// Value is a Stan value at run time. Dims lists the array dimensions followed by the
// container's own sizes (vector: [n]; row_vector: [n]; matrix: [rows, cols]); a scalar has no
// Dims. Integer values (Type.Base == Int) live in Ints, row-major over Dims; every real value
// lives in Var, one tape node of Size = product of Dims, row-major (a matrix row-major, as the
// tape's matrix ops expect, with AsMatrix shape set). Data are constant nodes (Tape.ConstRef);
// whether a value depends on the parameters is Tape.IsConst(Var).
type Value struct {
	Type Type
	Dims []int
	Ints []int
	Var  ad.Var
	// Name is the user-defined function a Func value refers to.
	Name string
}

// Len is the number of scalar elements of v (1 for a scalar).
func (v Value) Len() int {
	n := 1
	for _, d := range v.Dims {
		n *= d
	}
	return n
}
