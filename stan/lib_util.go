package stan

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
)

// Helpers shared by the built-in groups (lib_*.go).
//
// Conventions of every Impl:
//   - A result may share its Dims slice with an argument (sizes never change in place); Ints
//     of a result are always a fresh slice, so a caller may assign into them.
//   - Int arguments where reals are expected are turned into constant nodes on c.T (tape
//     memory, no heap allocation).
//   - A size mismatch the signature cannot express is an error naming the function and the
//     sizes; domain errors use Stan's wording ("normal_lpdf: Scale parameter is -1, but must
//     be positive!").

// Types used in signatures.
var (
	tArrInt     = Type{Base: Int, Array: 1}
	tArrInt2    = Type{Base: Int, Array: 2}
	tArrReal    = Type{Base: Real, Array: 1}
	tArrReal2   = Type{Base: Real, Array: 2}
	tArrVector  = Type{Base: Vector, Array: 1}
	tArrRowVec  = Type{Base: RowVector, Array: 1}
	tArrMatrix  = Type{Base: Matrix, Array: 1}
	tArrVector2 = Type{Base: Vector, Array: 2}
)

// ex is an exact argument of type t.
func ex(t Type) Arg { return Arg{Class: Exact, Type: t} }

// exData is an exact argument that must be data.
func exData(t Type) Arg { return Arg{Class: Exact, Type: t, DataOnly: true} }

var (
	aReals  = Arg{Class: Reals}
	aInts   = Arg{Class: Ints}
	aAny    = Arg{Class: Any}
	aInt    = ex(TInt)
	aReal   = ex(TReal)
	aVector = ex(TVector)
	aRowVec = ex(TRowVector)
	aMatrix = ex(TMatrix)
)

// sig builds a signature.
func sig(name string, ret Type, fn Impl, args ...Arg) Sig {
	return Sig{Name: name, Args: args, Ret: ret, Fn: fn}
}

// promoted is t with an int base replaced by real.
func promoted(t Type) Type {
	if t.Base == Int {
		t.Base = Real
	}
	return t
}

// errf is an error of built-in name.
func errf(name, format string, a ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{name}, a...)...)
}

// realVar returns the node holding v's elements; an int value becomes a constant node in tape
// memory.
func realVar(c *Ctx, v Value) ad.Var {
	if v.Type.Base != Int {
		return v.Var
	}
	buf := c.T.Scratch(len(v.Ints))
	for i, k := range v.Ints {
		buf[i] = float64(k)
	}
	return c.T.ConstRef(buf)
}

// vals returns the values of v's elements (int values converted in tape memory).
func vals(c *Ctx, v Value) []float64 {
	if v.Type.Base == Int {
		buf := c.T.Scratch(len(v.Ints))
		for i, k := range v.Ints {
			buf[i] = float64(k)
		}
		return buf
	}
	return c.T.Value(v.Var)
}

// scalarOf returns the value of a scalar argument.
func scalarOf(c *Ctx, v Value) float64 {
	if v.Type.Base == Int {
		return float64(v.Ints[0])
	}
	return c.T.Float(v.Var)
}

// intOf returns the int of a scalar int argument.
func intOf(v Value) int { return v.Ints[0] }

// realV is a real scalar Value.
func realV(x ad.Var) Value { return Value{Type: TReal, Var: x} }

// intV is an int scalar Value.
func intV(k int) Value { return Value{Type: TInt, Ints: []int{k}} }

// intsV is an array of ints with the given dims.
func intsV(ks []int, dims ...int) Value {
	return Value{Type: Type{Base: Int, Array: len(dims)}, Ints: ks, Dims: dims}
}

// likeV is a real value with v's type (int promoted) and dims holding x.
func likeV(v Value, x ad.Var) Value {
	return Value{Type: promoted(v.Type), Dims: v.Dims, Var: x}
}

// vecV is a vector (or row vector) Value of x.
func vecV(c *Ctx, b Base, x ad.Var) Value {
	return Value{Type: Type{Base: b}, Dims: []int{c.T.Size(x)}, Var: x}
}

// matV is a matrix Value of x (r×c), with x shaped.
func matV(c *Ctx, x ad.Var, r, cols int) Value {
	if rr, cc := c.T.Shape(x); rr != r || cc != cols {
		x = c.T.AsMatrix(x, r, cols)
	}
	return Value{Type: TMatrix, Dims: []int{r, cols}, Var: x}
}

// matOf returns the node of a matrix value, shaped r×c.
func matOf(c *Ctx, v Value) (ad.Var, int, int) {
	r, cols := v.Dims[len(v.Dims)-2], v.Dims[len(v.Dims)-1]
	x := realVar(c, v)
	if rr, cc := c.T.Shape(x); rr != r || cc != cols {
		x = c.T.AsMatrix(x, r, cols)
	}
	return x, r, cols
}

// isContainer reports whether v has elements beyond a scalar (vector, array, matrix).
func isContainer(v Value) bool { return len(v.Dims) > 0 }

// constant reports whether v does not depend on parameters.
func constant(c *Ctx, v Value) bool { return v.Type.Base == Int || c.T.IsConst(v.Var) }

// arrDims is the dims of an array of n elements each with dims inner.
func arrDims(n int, inner []int) []int {
	d := make([]int, 0, 1+len(inner))
	d = append(d, n)
	return append(d, inner...)
}

// typeOfSize is the type with base b and array dims of an array-of-b value.
func sizeOf(v Value) int {
	if len(v.Dims) == 0 {
		return 1
	}
	return v.Dims[0]
}

// elemLen is the number of scalars in one element of the outermost array of v.
func elemLen(v Value) int {
	n := 1
	for _, d := range v.Dims[1:] {
		n *= d
	}
	return n
}
