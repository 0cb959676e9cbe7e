package stan

import (
	"github.com/vigo-bayes/vigo/ad"
)

// operatorSigs returns the built-in signatures of this group (see Builtins).
//
// Stan's operators are built-ins registered under their Stan Math names (Stan Functions
// Reference, "Integer-valued basic functions", "Real-valued basic functions" and "Matrix
// operations"); the type checker resolves an operator by looking the name up in Builtins:
//
//	a + b    add             a - b   subtract       a * b    multiply
//	a / b    divide          a .* b  elt_multiply   a ./ b   elt_divide
//	a % b    modulus         -a      minus          !a       logical_negation
//	a ^ b    pow             a'      transpose      a %/% b  int_divide
//	a == b   logical_eq      a != b  logical_neq    a < b    logical_lt
//	a <= b   logical_lte     a > b   logical_gt     a >= b   logical_gte
//	a && b   logical_and     a || b  logical_or     (+a is a itself)
//
// int / int is registered under divide with an int result (Stan's integer division, which
// Stan warns about); int_divide is the same operation for %/%. Indexing and ?: are not
// built-ins. && and || are registered for completeness; the compiler short-circuits them.
//
// Overload resolution: the signatures under one name are listed most specific first (int
// before real, exact container types before promoted ones); a checker that takes the first
// signature whose arguments match without promotion, else the first that matches with
// int→real promotion, picks Stan's.
func operatorSigs() []Sig {
	var s []Sig
	conts := []Type{TVector, TRowVector, TMatrix}
	// add, subtract: scalar and elementwise container arithmetic with scalar broadcasting.
	for _, op := range []struct {
		name string
		f    func(t *ad.Tape, a, b ad.Var) ad.Var
		i    func(a, b int) (int, error)
	}{
		{"add", (*ad.Tape).Add, func(a, b int) (int, error) { return a + b, nil }},
		{"subtract", (*ad.Tape).Sub, func(a, b int) (int, error) { return a - b, nil }},
	} {
		fn := arith(op.name, op.f, op.i)
		s = append(s, sig(op.name, TInt, fn, aInt, aInt), sig(op.name, TReal, fn, aReal, aReal))
		for _, ct := range conts {
			s = append(s, sig(op.name, ct, fn, ex(ct), ex(ct)),
				sig(op.name, ct, fn, aReal, ex(ct)), sig(op.name, ct, fn, ex(ct), aReal))
		}
	}
	// multiply: scalar products, scaling, and the linear-algebra products.
	mulS := arith("multiply", (*ad.Tape).Mul, func(a, b int) (int, error) { return a * b, nil })
	s = append(s, sig("multiply", TInt, mulS, aInt, aInt), sig("multiply", TReal, mulS, aReal, aReal))
	for _, ct := range conts {
		s = append(s, sig("multiply", ct, mulS, aReal, ex(ct)), sig("multiply", ct, mulS, ex(ct), aReal))
	}
	s = append(s,
		sig("multiply", TVector, mulMatVec, aMatrix, aVector),
		sig("multiply", TRowVector, mulRowVecMat, aRowVec, aMatrix),
		sig("multiply", TReal, mulRowVecVec, aRowVec, aVector),
		sig("multiply", TMatrix, mulVecRowVec, aVector, aRowVec),
		sig("multiply", TMatrix, mulMatMat, aMatrix, aMatrix),
	)
	// divide: int/int (integer division), scalar division and containers divided by a scalar.
	divS := arith("divide", (*ad.Tape).Div, intDivide("divide"))
	s = append(s, sig("divide", TInt, divS, aInt, aInt), sig("divide", TReal, divS, aReal, aReal))
	for _, ct := range conts {
		s = append(s, sig("divide", ct, divS, ex(ct), aReal))
	}
	s = append(s, sig("int_divide", TInt, arith("int_divide", nil, intDivide("int_divide")), aInt, aInt))
	s = append(s, sig("modulus", TInt, arith("modulus", nil, intModulus), aInt, aInt))
	// elementwise products and quotients.
	em := arith("elt_multiply", (*ad.Tape).Mul, nil)
	ed := arith("elt_divide", (*ad.Tape).Div, nil)
	for _, ct := range conts {
		s = append(s, sig("elt_multiply", ct, em, ex(ct), ex(ct)), sig("elt_divide", ct, ed, ex(ct), ex(ct)),
			sig("elt_divide", ct, ed, aReal, ex(ct)), sig("elt_divide", ct, ed, ex(ct), aReal),
			sig("elt_multiply", ct, em, aReal, ex(ct)), sig("elt_multiply", ct, em, ex(ct), aReal))
	}
	s = append(s, sig("elt_multiply", TReal, em, aReal, aReal), sig("elt_divide", TReal, ed, aReal, aReal))
	// unary minus.
	s = append(s, sig("minus", TInt, opMinus, aInt), sig("minus", TReal, opMinus, aReal))
	for _, ct := range conts {
		s = append(s, sig("minus", ct, opMinus, ex(ct)))
	}
	for _, at := range []Type{tArrReal, tArrVector, tArrRowVec, tArrMatrix} {
		s = append(s, sig("minus", at, opMinus, ex(at)))
	}
	// transpose.
	s = append(s, sig("transpose", TRowVector, opTranspose, aVector),
		sig("transpose", TVector, opTranspose, aRowVec),
		sig("transpose", TMatrix, opTranspose, aMatrix))
	// comparisons and logic: int results.
	for _, op := range []struct {
		name string
		f    func(a, b float64) bool
	}{
		{"logical_eq", func(a, b float64) bool { return a == b }},
		{"logical_neq", func(a, b float64) bool { return a != b }},
		{"logical_lt", func(a, b float64) bool { return a < b }},
		{"logical_lte", func(a, b float64) bool { return a <= b }},
		{"logical_gt", func(a, b float64) bool { return a > b }},
		{"logical_gte", func(a, b float64) bool { return a >= b }},
		{"logical_and", func(a, b float64) bool { return a != 0 && b != 0 }},
		{"logical_or", func(a, b float64) bool { return a != 0 || b != 0 }},
	} {
		fn := compare(op.f)
		s = append(s, sig(op.name, TInt, fn, aInt, aInt), sig(op.name, TInt, fn, aReal, aReal))
	}
	s = append(s, sig("logical_negation", TInt, opNot, aInt), sig("logical_negation", TInt, opNot, aReal))
	return s
}

// arith implements a binary elementwise operator: f on reals (nil: ints only), i on two int
// scalars (nil: always real). Two containers must have equal dims; a scalar broadcasts.
func arith(name string, f func(t *ad.Tape, a, b ad.Var) ad.Var, i func(a, b int) (int, error)) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		a, b := args[0], args[1]
		if i != nil && a.Type == TInt && b.Type == TInt {
			r, err := i(a.Ints[0], b.Ints[0])
			if err != nil {
				return Value{}, err
			}
			return c.Int(r), nil
		}
		if f == nil {
			return Value{}, errf(name, "arguments must be int")
		}
		if isContainer(a) && isContainer(b) && !dimsEqual(a.Dims, b.Dims) {
			return Value{}, errf(name, "size of first argument (%s) and second argument (%s) must match", dimStr(a.Dims), dimStr(b.Dims))
		}
		x := f(c.T, realVar(c, a), realVar(c, b))
		res := a
		if !isContainer(a) {
			res = b
		}
		return likeV(res, x), nil
	}
}

// dimsEqual reports equal dims.
func dimsEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dimStr spells dims as 3 or 2x3.
func dimStr(d []int) string {
	if len(d) == 0 {
		return "1"
	}
	s := ""
	for i, k := range d {
		if i > 0 {
			s += "x"
		}
		s += itoa(k)
	}
	return s
}

func itoa(k int) string {
	if k < 0 {
		return "-" + itoa(-k)
	}
	if k < 10 {
		return string(rune('0' + k))
	}
	return itoa(k/10) + string(rune('0'+k%10))
}

// intDivide is Stan's int / int: truncation toward zero; division by zero is an error.
func intDivide(name string) func(a, b int) (int, error) {
	return func(a, b int) (int, error) {
		if b == 0 {
			return 0, errf(name, "integer division by zero")
		}
		return a / b, nil
	}
}

// intModulus is Stan's a % b (C++ semantics: the sign of a).
func intModulus(a, b int) (int, error) {
	if b == 0 {
		return 0, errf("modulus", "modulus by zero")
	}
	return a % b, nil
}

func opMinus(c *Ctx, args []Value) (Value, error) {
	a := args[0]
	if a.Type == TInt {
		return c.Int(-a.Ints[0]), nil
	}
	if a.Type.Base == Int {
		return Value{}, errf("minus", "int arrays are not supported")
	}
	return likeV(a, c.T.Neg(a.Var)), nil
}

func opNot(c *Ctx, args []Value) (Value, error) {
	if scalarOf(c, args[0]) == 0 {
		return c.Int(1), nil
	}
	return c.Int(0), nil
}

func compare(f func(a, b float64) bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		if f(scalarOf(c, args[0]), scalarOf(c, args[1])) {
			return c.Int(1), nil
		}
		return c.Int(0), nil
	}
}

func opTranspose(c *Ctx, args []Value) (Value, error) {
	a := args[0]
	switch a.Type.Base {
	case Vector:
		return Value{Type: TRowVector, Dims: a.Dims, Var: a.Var}, nil
	case RowVector:
		return Value{Type: TVector, Dims: a.Dims, Var: a.Var}, nil
	}
	m, r, cols := matOf(c, a)
	return matV(c, c.T.Transpose(m), cols, r), nil
}

func mulMatVec(c *Ctx, args []Value) (Value, error) {
	m, r, cols := matOf(c, args[0])
	if n := args[1].Dims[0]; n != cols {
		return Value{}, errf("multiply", "columns of matrix (%d) and size of vector (%d) must match", cols, n)
	}
	x := c.T.MatVec(m, args[1].Var)
	if r == cols {
		return Value{Type: TVector, Dims: args[1].Dims, Var: x}, nil
	}
	return vecV(c, Vector, x), nil
}

func mulRowVecMat(c *Ctx, args []Value) (Value, error) {
	m, r, cols := matOf(c, args[1])
	if n := args[0].Dims[0]; n != r {
		return Value{}, errf("multiply", "size of row vector (%d) and rows of matrix (%d) must match", n, r)
	}
	x := c.T.MatMul(c.T.AsMatrix(args[0].Var, 1, r), m)
	x = c.T.AsMatrix(x, cols, 1)
	return vecV(c, RowVector, x), nil
}

func mulRowVecVec(c *Ctx, args []Value) (Value, error) {
	if a, b := args[0].Dims[0], args[1].Dims[0]; a != b {
		return Value{}, errf("multiply", "size of row vector (%d) and vector (%d) must match", a, b)
	}
	return realV(c.T.Dot(args[0].Var, args[1].Var)), nil
}

func mulVecRowVec(c *Ctx, args []Value) (Value, error) {
	n, m := args[0].Dims[0], args[1].Dims[0]
	x := c.T.MatMul(c.T.AsMatrix(args[0].Var, n, 1), c.T.AsMatrix(args[1].Var, 1, m))
	return matV(c, x, n, m), nil
}

func mulMatMat(c *Ctx, args []Value) (Value, error) {
	a, r, k := matOf(c, args[0])
	b, k2, cols := matOf(c, args[1])
	if k != k2 {
		return Value{}, errf("multiply", "columns of first matrix (%d) and rows of second matrix (%d) must match", k, k2)
	}
	return matV(c, c.T.MatMul(a, b), r, cols), nil
}
