package stan

import (
	"math"
	"sort"

	"github.com/vigo-bayes/vigo/ad"
)

// matrixSigs returns the built-in signatures of this group (see Builtins): sizes, construction,
// slicing, reshaping and linear algebra (Stan Functions Reference, "Matrix operations",
// "Array operations").
func matrixSigs() []Sig {
	var s []Sig
	add := func(name string, ret Type, fn Impl, args ...Arg) { s = append(s, sig(name, ret, fn, args...)) }
	// Sizes.
	add("size", TInt, sizeFn, aAny)
	add("num_elements", TInt, numElements, aAny)
	add("dims", tArrInt, dimsFn, aAny)
	for _, t := range []Type{TVector, TRowVector, TMatrix} {
		add("rows", TInt, rowsFn, ex(t))
		add("cols", TInt, colsFn, ex(t))
	}
	// Construction.
	add("rep_vector", TVector, repVector(Vector), aReal, aInt)
	add("rep_row_vector", TRowVector, repVector(RowVector), aReal, aInt)
	add("rep_matrix", TMatrix, repMatrix, aReal, aInt, aInt)
	add("rep_matrix", TMatrix, repMatrixVec, aVector, aInt)
	add("rep_matrix", TMatrix, repMatrixVec, aRowVec, aInt)
	s = append(s,
		Sig{Name: "rep_array", Args: []Arg{aAny, aInt}, RetOf: repArrayRet(1), Fn: repArray},
		Sig{Name: "rep_array", Args: []Arg{aAny, aInt, aInt}, RetOf: repArrayRet(2), Fn: repArray},
		Sig{Name: "rep_array", Args: []Arg{aAny, aInt, aInt, aInt}, RetOf: repArrayRet(3), Fn: repArray},
	)
	add("identity_matrix", TMatrix, identityMatrix, aInt)
	add("diag_matrix", TMatrix, diagMatrix, aVector)
	add("linspaced_vector", TVector, linspaced(Vector), aInt, aReal, aReal)
	add("linspaced_row_vector", TRowVector, linspaced(RowVector), aInt, aReal, aReal)
	add("linspaced_array", tArrReal, linspaced(Real), aInt, aReal, aReal)
	add("one_hot_vector", TVector, oneHot, aInt, aInt)
	add("zeros_vector", TVector, zeros(Vector), aInt)
	add("zeros_row_vector", TRowVector, zeros(RowVector), aInt)
	add("ones_vector", TVector, ones(Vector), aInt)
	add("ones_row_vector", TRowVector, ones(RowVector), aInt)
	// Concatenation.
	for _, p := range [][3]Type{
		{TVector, TVector, TVector}, {TVector, TReal, TVector}, {TVector, TVector, TReal},
		{TMatrix, TMatrix, TMatrix}, {TMatrix, TMatrix, TRowVector}, {TMatrix, TRowVector, TMatrix},
		{TMatrix, TRowVector, TRowVector},
	} {
		add("append_row", p[0], appendRow, ex(p[1]), ex(p[2]))
	}
	for _, p := range [][3]Type{
		{TRowVector, TRowVector, TRowVector}, {TRowVector, TReal, TRowVector}, {TRowVector, TRowVector, TReal},
		{TMatrix, TMatrix, TMatrix}, {TMatrix, TMatrix, TVector}, {TMatrix, TVector, TMatrix},
		{TMatrix, TVector, TVector},
	} {
		add("append_col", p[0], appendCol, ex(p[1]), ex(p[2]))
	}
	s = append(s, Sig{Name: "append_array", Args: []Arg{aAny, aAny}, RetOf: func(a []Type) Type { return promoted(a[0]) }, Fn: appendArray})
	// Slicing.
	for _, t := range []Type{TVector, TRowVector, tArrReal, tArrInt, tArrVector, tArrRowVec, tArrMatrix} {
		add("segment", t, sliceFn("segment"), ex(t), aInt, aInt)
		add("head", t, sliceFn("head"), ex(t), aInt)
		add("tail", t, sliceFn("tail"), ex(t), aInt)
	}
	add("block", TMatrix, block, aMatrix, aInt, aInt, aInt, aInt)
	add("sub_col", TVector, subCol, aMatrix, aInt, aInt, aInt)
	add("sub_row", TRowVector, subRow, aMatrix, aInt, aInt, aInt)
	add("col", TVector, colFn, aMatrix, aInt)
	add("row", TRowVector, rowFn, aMatrix, aInt)
	add("diagonal", TVector, diagonal, aMatrix)
	// Reshaping (Stan's to_vector/to_matrix of a matrix are column-major).
	add("to_vector", TVector, toVector(Vector), aVector)
	add("to_vector", TVector, toVector(Vector), aRowVec)
	add("to_vector", TVector, toVector(Vector), aMatrix)
	add("to_vector", TVector, toVector(Vector), ex(tArrInt))
	add("to_vector", TVector, toVector(Vector), ex(tArrReal))
	add("to_row_vector", TRowVector, toVector(RowVector), aVector)
	add("to_row_vector", TRowVector, toVector(RowVector), aRowVec)
	add("to_row_vector", TRowVector, toVector(RowVector), aMatrix)
	add("to_row_vector", TRowVector, toVector(RowVector), ex(tArrInt))
	add("to_row_vector", TRowVector, toVector(RowVector), ex(tArrReal))
	add("to_array_1d", tArrInt, toArray1D, ex(tArrInt))
	add("to_array_1d", tArrInt, toArray1D, ex(tArrInt2))
	add("to_array_1d", tArrInt, toArray1D, ex(Type{Base: Int, Array: 3}))
	for _, t := range []Type{TVector, TRowVector, TMatrix, tArrReal, tArrReal2, {Base: Real, Array: 3}} {
		add("to_array_1d", tArrReal, toArray1D, ex(t))
	}
	add("to_array_2d", tArrReal2, toArray2D, aMatrix)
	add("to_matrix", TMatrix, toMatrix, aMatrix)
	add("to_matrix", TMatrix, toMatrix, aVector)
	add("to_matrix", TMatrix, toMatrix, aRowVec)
	add("to_matrix", TMatrix, toMatrix, ex(tArrReal2))
	add("to_matrix", TMatrix, toMatrix, ex(tArrInt2))
	add("to_matrix", TMatrix, toMatrix, ex(tArrRowVec))
	for _, t := range []Type{TMatrix, TVector, TRowVector, tArrReal, tArrInt} {
		add("to_matrix", TMatrix, toMatrixMN, ex(t), aInt, aInt)
	}
	// Products.
	for _, t := range []Type{TVector, TRowVector, tArrReal} {
		for _, u := range []Type{TVector, TRowVector, tArrReal} {
			add("dot_product", TReal, dotProduct, ex(t), ex(u))
		}
		add("dot_self", TReal, dotSelf, ex(t))
	}
	columnsDot, rowsDot := dotsOf("columns_dot_product", false, false), dotsOf("rows_dot_product", true, false)
	add("columns_dot_product", TRowVector, columnsDot, aMatrix, aMatrix)
	add("columns_dot_product", TRowVector, columnsDot, aVector, aVector)
	add("columns_dot_product", TRowVector, columnsDot, aRowVec, aRowVec)
	add("rows_dot_product", TVector, rowsDot, aMatrix, aMatrix)
	add("rows_dot_product", TVector, rowsDot, aVector, aVector)
	add("rows_dot_product", TVector, rowsDot, aRowVec, aRowVec)
	add("columns_dot_self", TRowVector, dotsOf("columns_dot_self", false, true), aMatrix)
	add("rows_dot_self", TVector, dotsOf("rows_dot_self", true, true), aMatrix)
	add("crossprod", TMatrix, crossprod, aMatrix)
	add("tcrossprod", TMatrix, tcrossprod, aMatrix)
	add("multiply_lower_tri_self_transpose", TMatrix, mltst, aMatrix)
	add("quad_form", TMatrix, quadForm, aMatrix, aMatrix)
	add("quad_form", TReal, quadForm, aMatrix, aVector)
	add("quad_form_sym", TMatrix, quadForm, aMatrix, aMatrix)
	add("quad_form_sym", TReal, quadForm, aMatrix, aVector)
	add("quad_form_diag", TMatrix, quadFormDiag, aMatrix, aVector)
	add("quad_form_diag", TMatrix, quadFormDiag, aMatrix, aRowVec)
	add("diag_pre_multiply", TMatrix, diagPre, aVector, aMatrix)
	add("diag_pre_multiply", TMatrix, diagPre, aRowVec, aMatrix)
	add("diag_post_multiply", TMatrix, diagPost, aMatrix, aVector)
	add("diag_post_multiply", TMatrix, diagPost, aMatrix, aRowVec)
	add("add_diag", TMatrix, addDiag, aMatrix, aReal)
	add("add_diag", TMatrix, addDiag, aMatrix, aVector)
	add("add_diag", TMatrix, addDiag, aMatrix, aRowVec)
	add("trace", TReal, traceFn, aMatrix)
	// Decompositions and solves.
	add("cholesky_decompose", TMatrix, choleskyDecompose, aMatrix)
	add("inverse", TMatrix, inverse, aMatrix)
	add("inverse_spd", TMatrix, inverse, aMatrix)
	add("mdivide_left_tri_low", TMatrix, mdivideLeftTriLow, aMatrix, aMatrix)
	add("mdivide_left_tri_low", TVector, mdivideLeftTriLow, aMatrix, aVector)
	add("mdivide_right_tri_low", TMatrix, mdivideRightTriLow, aMatrix, aMatrix)
	add("mdivide_right_tri_low", TRowVector, mdivideRightTriLow, aRowVec, aMatrix)
	add("mdivide_left", TMatrix, mdivideLeft, aMatrix, aMatrix)
	add("mdivide_left", TVector, mdivideLeft, aMatrix, aVector)
	add("mdivide_left_spd", TMatrix, mdivideLeft, aMatrix, aMatrix)
	add("mdivide_left_spd", TVector, mdivideLeft, aMatrix, aVector)
	add("log_determinant", TReal, logDeterminant, aMatrix)
	add("determinant", TReal, determinant, aMatrix)
	add("eigenvalues_sym", TVector, eigenvaluesSym, aMatrix)
	add("eigenvectors_sym", TMatrix, eigenvectorsSym, aMatrix)
	// Softmax and sorting.
	add("softmax", TVector, softmax(false), aVector)
	add("log_softmax", TVector, softmax(true), aVector)
	for _, t := range []Type{TVector, TRowVector, tArrReal, tArrInt} {
		add("sort_asc", t, sortFn(false), ex(t))
		add("sort_desc", t, sortFn(true), ex(t))
		add("sort_indices_asc", tArrInt, sortIndices(false), ex(t))
		add("sort_indices_desc", tArrInt, sortIndices(true), ex(t))
		add("rank", TInt, rankFn, ex(t), aInt)
		add("reverse", t, reverseFn, ex(t))
	}
	add("cumulative_sum", tArrInt, cumSum, ex(tArrInt))
	for _, t := range []Type{tArrReal, TVector, TRowVector} {
		add("cumulative_sum", t, cumSum, ex(t))
	}
	// Gaussian-process covariance functions.
	for _, x := range []Type{tArrReal, tArrVector} {
		add("gp_exp_quad_cov", TMatrix, gpExpQuad, ex(x), aReal, aReal)
		add("cov_exp_quad", TMatrix, gpExpQuad, ex(x), aReal, aReal)
		add("gp_exp_quad_cov", TMatrix, gpExpQuad2, ex(x), ex(x), aReal, aReal)
		add("cov_exp_quad", TMatrix, gpExpQuad2, ex(x), ex(x), aReal, aReal)
	}
	return s
}

// --- sizes ---------------------------------------------------------------------------------

func sizeFn(c *Ctx, args []Value) (Value, error) {
	a := args[0]
	if len(a.Dims) == 0 {
		if a.Type.Base == Int || a.Type.Base == Real {
			return intV(1), nil
		}
		return Value{}, errf("size", "argument of type %s has no size", a.Type)
	}
	if a.Type.Array == 0 && a.Type.Base == Matrix {
		return intV(a.Dims[0] * a.Dims[1]), nil
	}
	return intV(a.Dims[0]), nil
}

func numElements(c *Ctx, args []Value) (Value, error) { return intV(args[0].Len()), nil }

func dimsFn(c *Ctx, args []Value) (Value, error) {
	d := append([]int(nil), args[0].Dims...)
	if d == nil {
		d = []int{}
	}
	return intsV(d, len(d)), nil
}

func rowsFn(c *Ctx, args []Value) (Value, error) {
	a := args[0]
	if a.Type.Base == RowVector {
		return intV(1), nil
	}
	return intV(a.Dims[0]), nil
}

func colsFn(c *Ctx, args []Value) (Value, error) {
	a := args[0]
	switch a.Type.Base {
	case Vector:
		return intV(1), nil
	case RowVector:
		return intV(a.Dims[0]), nil
	}
	return intV(a.Dims[1]), nil
}

// --- construction --------------------------------------------------------------------------

// checkSize returns an error for a negative size.
func checkSize(name string, n int) error {
	if n < 0 {
		return errf(name, "size is %d, but must be nonnegative!", n)
	}
	return nil
}

// repeat returns x (size m) tiled times times (each = false: y[k·m+j] = x[j]) or with every
// element repeated times times (each = true: y[j·times+k] = x[j]), as one node.
func repeat(t *ad.Tape, x ad.Var, times int, each bool) ad.Var {
	xv := t.Value(x)
	m := len(xv)
	if t.IsConst(x) {
		buf := t.Scratch(m * times)
		fillRepeat(buf, xv, times, each)
		return t.ConstRef(buf)
	}
	if m == 1 {
		return t.Add(x, t.ConstRef(t.Scratch(times)))
	}
	var node ad.Custom
	if each {
		node = t.Custom(eachBack{}, m*times, 0, x)
	} else {
		node = t.Custom(tileBack{}, m*times, 0, x)
	}
	fillRepeat(node.Value(), xv, times, each)
	return node.Var()
}

func fillRepeat(buf, xv []float64, times int, each bool) {
	m := len(xv)
	for k := range times {
		for j, v := range xv {
			if each {
				buf[j*times+k] = v
			} else {
				buf[k*m+j] = v
			}
		}
	}
}

type tileBack struct{}

func (tileBack) Backward(c ad.Custom) {
	ga := c.Tape().Grad(c.Arg(0))
	g := c.Grad()
	m := len(ga)
	for i, gi := range g {
		ga[i%m] += gi
	}
}

type eachBack struct{}

func (eachBack) Backward(c ad.Custom) {
	ga := c.Tape().Grad(c.Arg(0))
	g := c.Grad()
	times := len(g) / len(ga)
	for j := range ga {
		s := 0.0
		for _, gi := range g[j*times : (j+1)*times] {
			s += gi
		}
		ga[j] += s
	}
}

func repVector(b Base) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		n := intOf(args[1])
		if err := checkSize("rep_vector", n); err != nil {
			return Value{}, err
		}
		return Value{Type: Type{Base: b}, Dims: []int{n}, Var: repeat(c.T, realVar(c, args[0]), n, false)}, nil
	}
}

func repMatrix(c *Ctx, args []Value) (Value, error) {
	r, k := intOf(args[1]), intOf(args[2])
	if r < 0 || k < 0 {
		return Value{}, errf("rep_matrix", "sizes are %d and %d, but must be nonnegative!", r, k)
	}
	return matV(c, repeat(c.T, realVar(c, args[0]), r*k, false), r, k), nil
}

// repMatrixVec is rep_matrix(v, n): n columns equal to a vector v, or n rows equal to a row
// vector v.
func repMatrixVec(c *Ctx, args []Value) (Value, error) {
	v, n := args[0], intOf(args[1])
	if err := checkSize("rep_matrix", n); err != nil {
		return Value{}, err
	}
	m := v.Dims[0]
	if v.Type.Base == Vector {
		return matV(c, repeat(c.T, v.Var, n, true), m, n), nil
	}
	return matV(c, repeat(c.T, v.Var, n, false), n, m), nil
}

func repArrayRet(k int) RetFunc {
	return func(a []Type) Type { return Type{Base: a[0].Base, Array: a[0].Array + k} }
}

func repArray(c *Ctx, args []Value) (Value, error) {
	x := args[0]
	dims := make([]int, 0, len(args)-1+len(x.Dims))
	times := 1
	for _, a := range args[1:] {
		n := intOf(a)
		if err := checkSize("rep_array", n); err != nil {
			return Value{}, err
		}
		dims = append(dims, n)
		times *= n
	}
	dims = append(dims, x.Dims...)
	typ := Type{Base: x.Type.Base, Array: x.Type.Array + len(args) - 1}
	if x.Type.Base == Int {
		ks := make([]int, 0, times*len(x.Ints))
		for range times {
			ks = append(ks, x.Ints...)
		}
		return Value{Type: typ, Dims: dims, Ints: ks}, nil
	}
	return Value{Type: typ, Dims: dims, Var: repeat(c.T, x.Var, times, false)}, nil
}

func identityMatrix(c *Ctx, args []Value) (Value, error) {
	n := intOf(args[0])
	if err := checkSize("identity_matrix", n); err != nil {
		return Value{}, err
	}
	buf := c.T.Scratch(n * n)
	for i := range n {
		buf[i*n+i] = 1
	}
	return matV(c, c.T.ConstRef(buf), n, n), nil
}

// diagMatrix places v on the diagonal of an n×n zero matrix.
func diagMatrix(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	n := v.Dims[0]
	idx, zero := diagScatter(c, n)
	// y = Gather(concat(v, 0), idx): off-diagonal entries read the appended zero.
	x := c.T.Gather(c.T.Concat(v.Var, zero), idx)
	return matV(c, x, n, n), nil
}

// diagScatter returns gather indices for an n×n matrix whose diagonal reads element i and
// whose other entries read element n (a zero constant), and that zero constant.
func diagScatter(c *Ctx, n int) ([]int, ad.Var) {
	idx := make([]int, n*n)
	for i := range idx {
		idx[i] = n
	}
	for i := range n {
		idx[i*n+i] = i
	}
	return idx, c.T.Const(0)
}

func linspaced(b Base) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		n := intOf(args[0])
		if err := checkSize("linspaced_vector", n); err != nil {
			return Value{}, err
		}
		lo, hi := scalarOf(c, args[1]), scalarOf(c, args[2])
		buf := c.T.Scratch(n)
		for i := range n {
			if n == 1 {
				buf[i] = hi
				continue
			}
			buf[i] = lo + (hi-lo)*float64(i)/float64(n-1)
		}
		if b == Real {
			return Value{Type: tArrReal, Dims: []int{n}, Var: c.T.ConstRef(buf)}, nil
		}
		return Value{Type: Type{Base: b}, Dims: []int{n}, Var: c.T.ConstRef(buf)}, nil
	}
}

func oneHot(c *Ctx, args []Value) (Value, error) {
	n, k := intOf(args[0]), intOf(args[1])
	if n < 1 || k < 1 || k > n {
		return Value{}, errf("one_hot_vector", "k is %d, but must be in [1, %d]", k, n)
	}
	buf := c.T.Scratch(n)
	buf[k-1] = 1
	return vecV(c, Vector, c.T.ConstRef(buf)), nil
}

func zeros(b Base) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		n := intOf(args[0])
		if err := checkSize("zeros_vector", n); err != nil {
			return Value{}, err
		}
		return vecV(c, b, c.T.ConstRef(c.T.Scratch(n))), nil
	}
}

func ones(b Base) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		n := intOf(args[0])
		if err := checkSize("ones_vector", n); err != nil {
			return Value{}, err
		}
		buf := c.T.Scratch(n)
		for i := range buf {
			buf[i] = 1
		}
		return vecV(c, b, c.T.ConstRef(buf)), nil
	}
}

// --- concatenation -------------------------------------------------------------------------

// shape2 is the (rows, cols) of a scalar, vector, row vector or matrix value.
func shape2(v Value) (int, int) {
	switch {
	case v.Type.Base == Vector:
		return v.Dims[0], 1
	case v.Type.Base == RowVector:
		return 1, v.Dims[0]
	case v.Type.Base == Matrix:
		return v.Dims[0], v.Dims[1]
	}
	return 1, 1
}

func appendRow(c *Ctx, args []Value) (Value, error) {
	a, b := args[0], args[1]
	ra, ca := shape2(a)
	rb, cb := shape2(b)
	x := c.T.Concat(realVar(c, a), realVar(c, b))
	if a.Type.Base == Real || a.Type.Base == Int || a.Type.Base == Vector {
		if b.Type.Base == Real || b.Type.Base == Int || b.Type.Base == Vector {
			return vecV(c, Vector, x), nil
		}
	}
	if ca != cb {
		return Value{}, errf("append_row", "columns of first argument (%d) and second argument (%d) must match", ca, cb)
	}
	return matV(c, x, ra+rb, ca), nil
}

func appendCol(c *Ctx, args []Value) (Value, error) {
	a, b := args[0], args[1]
	ra, ca := shape2(a)
	rb, cb := shape2(b)
	rowLike := func(v Value) bool { return v.Type.Base == Real || v.Type.Base == Int || v.Type.Base == RowVector }
	if rowLike(a) && rowLike(b) {
		return vecV(c, RowVector, c.T.Concat(realVar(c, a), realVar(c, b))), nil
	}
	if ra != rb {
		return Value{}, errf("append_col", "rows of first argument (%d) and second argument (%d) must match", ra, rb)
	}
	// Row-major: output row i is row i of a then row i of b; a gather over concat(a, b).
	n := ra * (ca + cb)
	idx := make([]int, n)
	for i := range ra {
		for j := range ca {
			idx[i*(ca+cb)+j] = i*ca + j
		}
		for j := range cb {
			idx[i*(ca+cb)+ca+j] = ra*ca + i*cb + j
		}
	}
	x := c.T.Gather(c.T.Concat(realVar(c, a), realVar(c, b)), idx)
	return matV(c, x, ra, ca+cb), nil
}

func appendArray(c *Ctx, args []Value) (Value, error) {
	a, b := args[0], args[1]
	if a.Type.Array == 0 || a.Type.Array != b.Type.Array || !dimsEqual(a.Dims[1:], b.Dims[1:]) {
		return Value{}, errf("append_array", "arguments must be arrays of the same type and element sizes (%s %s and %s %s)", a.Type, dimStr(a.Dims), b.Type, dimStr(b.Dims))
	}
	dims := arrDims(a.Dims[0]+b.Dims[0], a.Dims[1:])
	if a.Type.Base == Int && b.Type.Base == Int {
		return Value{Type: a.Type, Dims: dims, Ints: append(append([]int(nil), a.Ints...), b.Ints...)}, nil
	}
	return Value{Type: promoted(a.Type), Dims: dims, Var: c.T.Concat(realVar(c, a), realVar(c, b))}, nil
}

// --- slicing -------------------------------------------------------------------------------

// sliceFn implements segment(v, i, n), head(v, n), tail(v, n) on vectors and arrays.
func sliceFn(name string) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		v := args[0]
		size := sizeOf(v)
		var lo, n int
		switch name {
		case "segment":
			lo, n = intOf(args[1])-1, intOf(args[2])
		case "head":
			lo, n = 0, intOf(args[1])
		default:
			n = intOf(args[1])
			lo = size - n
		}
		if n < 0 || lo < 0 || lo+n > size {
			return Value{}, errf(name, "slice [%d, %d] out of range for size %d", lo+1, lo+n, size)
		}
		el := elemLen(v)
		dims := arrDims(n, v.Dims[1:])
		if v.Type.Base == Int {
			return Value{Type: v.Type, Dims: dims, Ints: append([]int(nil), v.Ints[lo*el:(lo+n)*el]...)}, nil
		}
		return Value{Type: v.Type, Dims: dims, Var: c.T.Slice(v.Var, lo*el, (lo+n)*el)}, nil
	}
}

// gatherBlock returns the rows i0..i0+nr−1, cols j0..j0+nc−1 (0-based) of a row-major r×k
// matrix node: a view when the block is contiguous, else one Custom node (no index slice).
func gatherBlock(c *Ctx, m ad.Var, k, i0, j0, nr, nc int) ad.Var {
	if nc == k {
		return c.T.Slice(m, i0*k, (i0+nr)*k)
	}
	if nr == 1 {
		return c.T.Slice(m, i0*k+j0, i0*k+j0+nc)
	}
	node := c.T.Custom(blockBack{}, nr*nc, 4, m)
	aux := node.Aux()
	aux[0], aux[1], aux[2], aux[3] = float64(k), float64(i0), float64(j0), float64(nc)
	mv, out := c.T.Value(m), node.Value()
	for i := range nr {
		copy(out[i*nc:(i+1)*nc], mv[(i0+i)*k+j0:(i0+i)*k+j0+nc])
	}
	return node.Var()
}

// blockBack scatters the adjoint of a block back into its matrix; aux = (k, i0, j0, nc).
type blockBack struct{}

func (blockBack) Backward(c ad.Custom) {
	ga := c.Tape().Grad(c.Arg(0))
	if ga == nil {
		return
	}
	aux, g := c.Aux(), c.Grad()
	k, i0, j0, nc := int(aux[0]), int(aux[1]), int(aux[2]), int(aux[3])
	for i := range len(g) / nc {
		row := ga[(i0+i)*k+j0 : (i0+i)*k+j0+nc]
		for j, gj := range g[i*nc : (i+1)*nc] {
			row[j] += gj
		}
	}
}

func checkBlock(name string, r, k, i0, j0, nr, nc int) error {
	if i0 < 0 || j0 < 0 || nr < 0 || nc < 0 || i0+nr > r || j0+nc > k {
		return errf(name, "block of %d×%d at (%d, %d) out of range for a %d×%d matrix", nr, nc, i0+1, j0+1, r, k)
	}
	return nil
}

func block(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	i0, j0, nr, nc := intOf(args[1])-1, intOf(args[2])-1, intOf(args[3]), intOf(args[4])
	if err := checkBlock("block", r, k, i0, j0, nr, nc); err != nil {
		return Value{}, err
	}
	return matV(c, gatherBlock(c, m, k, i0, j0, nr, nc), nr, nc), nil
}

func subCol(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	i0, j0, nr := intOf(args[1])-1, intOf(args[2])-1, intOf(args[3])
	if err := checkBlock("sub_col", r, k, i0, j0, nr, 1); err != nil {
		return Value{}, err
	}
	return vecV(c, Vector, gatherBlock(c, m, k, i0, j0, nr, 1)), nil
}

func subRow(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	i0, j0, nc := intOf(args[1])-1, intOf(args[2])-1, intOf(args[3])
	if err := checkBlock("sub_row", r, k, i0, j0, 1, nc); err != nil {
		return Value{}, err
	}
	return vecV(c, RowVector, gatherBlock(c, m, k, i0, j0, 1, nc)), nil
}

func colFn(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	j := intOf(args[1]) - 1
	if err := checkBlock("col", r, k, 0, j, r, 1); err != nil {
		return Value{}, err
	}
	return vecV(c, Vector, gatherBlock(c, m, k, 0, j, r, 1)), nil
}

func rowFn(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	i := intOf(args[1]) - 1
	if err := checkBlock("row", r, k, i, 0, 1, k); err != nil {
		return Value{}, err
	}
	return vecV(c, RowVector, gatherBlock(c, m, k, i, 0, 1, k)), nil
}

func diagonal(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	n := min(r, k)
	if r == k {
		return vecV(c, Vector, c.T.Diag(m)), nil
	}
	idx := make([]int, n)
	for i := range n {
		idx[i] = i*k + i
	}
	return vecV(c, Vector, c.T.Gather(m, idx)), nil
}

// --- reshaping -----------------------------------------------------------------------------

// colMajor returns the elements of a row-major r×k matrix node in column-major order.
func colMajor(c *Ctx, m ad.Var, r, k int) ad.Var {
	if r == 1 || k == 1 {
		return m
	}
	return c.T.Transpose(c.T.AsMatrix(m, r, k))
}

func toVector(b Base) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		v := args[0]
		x := realVar(c, v)
		if v.Type.Base == Matrix {
			x = colMajor(c, x, v.Dims[0], v.Dims[1])
		}
		if r, k := c.T.Shape(x); k != 1 {
			x = c.T.AsMatrix(x, r*k, 1)
		}
		return Value{Type: Type{Base: b}, Dims: []int{v.Len()}, Var: x}, nil
	}
}

// toArray1D flattens arrays in row-major order and matrices in column-major order.
func toArray1D(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	n := v.Len()
	if v.Type.Base == Int {
		return intsV(append([]int(nil), v.Ints...), n), nil
	}
	x := v.Var
	if v.Type.Base == Matrix && v.Type.Array == 0 {
		x = colMajor(c, x, v.Dims[0], v.Dims[1])
	}
	return Value{Type: tArrReal, Dims: []int{n}, Var: x}, nil
}

func toArray2D(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	return Value{Type: tArrReal2, Dims: v.Dims, Var: v.Var}, nil
}

// toMatrix converts a vector (n×1), row vector (1×n), 2-d array or array of row vectors (row
// by row) to a matrix.
func toMatrix(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	x := realVar(c, v)
	switch {
	case v.Type.Base == Matrix:
		return v, nil
	case v.Type == TVector:
		return matV(c, x, v.Dims[0], 1), nil
	case v.Type == TRowVector:
		return matV(c, x, 1, v.Dims[0]), nil
	}
	return matV(c, x, v.Dims[0], v.Dims[1]), nil
}

// toMatrixMN is to_matrix(x, m, n): the elements of x in column-major order.
func toMatrixMN(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	m, n := intOf(args[1]), intOf(args[2])
	if m < 0 || n < 0 || m*n != v.Len() {
		return Value{}, errf("to_matrix", "%d×%d matrix from %d elements", m, n, v.Len())
	}
	x := realVar(c, v)
	if v.Type.Base == Matrix {
		x = colMajor(c, x, v.Dims[0], v.Dims[1])
	}
	// Column-major fill: element (i, j) is x[i + j·m], i.e. x read as n×m row-major, transposed.
	return matV(c, colMajor(c, x, n, m), m, n), nil
}

// --- products ------------------------------------------------------------------------------

func dotProduct(c *Ctx, args []Value) (Value, error) {
	a, b := args[0], args[1]
	if a.Len() != b.Len() {
		return Value{}, errf("dot_product", "size of first argument (%d) and second argument (%d) must match", a.Len(), b.Len())
	}
	return realV(c.T.Dot(realVar(c, a), realVar(c, b))), nil
}

func dotSelf(c *Ctx, args []Value) (Value, error) {
	x := realVar(c, args[0])
	return realV(c.T.Dot(x, x)), nil
}

// colsDot returns, for r×k matrices a and b, the k column dot products (rows = false) or the
// r row dot products (rows = true), as one fused vector node.
func colsDot(c *Ctx, name string, a, b Value, rows bool) (ad.Var, error) {
	ra, ka := shape2(a)
	rb, kb := shape2(b)
	if ra != rb || ka != kb {
		return ad.Var{}, errf(name, "dimensions of first argument (%d×%d) and second argument (%d×%d) must match", ra, ka, rb, kb)
	}
	x, y := realVar(c, a), realVar(c, b)
	n := ka
	if rows {
		n = ra
	}
	node := c.T.Custom(dotsBack{}, n, 2, x, y)
	aux := node.Aux()
	aux[0], aux[1] = float64(ra), float64(ka)
	if rows {
		aux[1] = -float64(ka)
	}
	xv, yv, out := c.T.Value(x), c.T.Value(y), node.Value()
	for i := range ra {
		for j := range ka {
			p := xv[i*ka+j] * yv[i*ka+j]
			if rows {
				out[i] += p
			} else {
				out[j] += p
			}
		}
	}
	return node.Var(), nil
}

// dotsBack is the backward rule of colsDot: aux = (rows, ±cols), negative for row sums.
type dotsBack struct{}

func (dotsBack) Backward(c ad.Custom) {
	t := c.Tape()
	aux := c.Aux()
	r, k := int(aux[0]), int(aux[1])
	rows := k < 0
	if rows {
		k = -k
	}
	g := c.Grad()
	x, y := c.Arg(0), c.Arg(1)
	xv, yv := t.Value(x), t.Value(y)
	gx, gy := t.Grad(x), t.Grad(y)
	same := x == y
	for i := range r {
		for j := range k {
			gi := g[j]
			if rows {
				gi = g[i]
			}
			if gx != nil {
				gx[i*k+j] += gi * yv[i*k+j]
			}
			if gy != nil && !same {
				gy[i*k+j] += gi * xv[i*k+j]
			} else if same && gx != nil {
				gx[i*k+j] += gi * xv[i*k+j]
			}
		}
	}
}

// dotsOf is columns_dot_product (rows = false) or rows_dot_product (rows = true), and with
// self the _dot_self forms (the one argument twice): a row vector of column dot products or a
// vector of row dot products.
func dotsOf(name string, rows, self bool) Impl {
	ret := RowVector
	if rows {
		ret = Vector
	}
	return func(c *Ctx, args []Value) (Value, error) {
		b := args[0]
		if !self {
			b = args[1]
		}
		x, err := colsDot(c, name, args[0], b, rows)
		if err != nil {
			return Value{}, err
		}
		return vecV(c, ret, x), nil
	}
}

func crossprod(c *Ctx, args []Value) (Value, error) {
	m, _, k := matOf(c, args[0])
	return matV(c, c.T.MatMul(c.T.Transpose(m), m), k, k), nil
}

func tcrossprod(c *Ctx, args []Value) (Value, error) {
	m, r, _ := matOf(c, args[0])
	return matV(c, c.T.MatMul(m, c.T.Transpose(m)), r, r), nil
}

// lowerTri returns the lower triangle of a square matrix node (upper entries zero).
func lowerTri(c *Ctx, m ad.Var, r, k int) ad.Var {
	idx := make([]int, r*k)
	zero := r * k
	for i := range r {
		for j := range k {
			if j <= i {
				idx[i*k+j] = i*k + j
			} else {
				idx[i*k+j] = zero
			}
		}
	}
	x := c.T.Gather(c.T.Concat(m, c.T.Const(0)), idx)
	return c.T.AsMatrix(x, r, k)
}

// mltst is multiply_lower_tri_self_transpose(L) = tril(L)·tril(L)ᵀ.
func mltst(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	l := lowerTri(c, m, r, k)
	return matV(c, c.T.MatMul(l, c.T.Transpose(l)), r, r), nil
}

// quadForm is Bᵀ A B (a matrix) or bᵀ A b (a scalar).
func quadForm(c *Ctx, args []Value) (Value, error) {
	a, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("quad_form", "expecting a square matrix; rows of A (%d) and columns of A (%d) must match in size", r, k)
	}
	b := args[1]
	if b.Type.Base == Vector {
		if b.Dims[0] != r {
			return Value{}, errf("quad_form", "rows of A (%d) and size of b (%d) must match", r, b.Dims[0])
		}
		return realV(c.T.Dot(b.Var, c.T.MatVec(a, b.Var))), nil
	}
	bm, rb, kb := matOf(c, b)
	if rb != r {
		return Value{}, errf("quad_form", "columns of A (%d) and rows of B (%d) must match", r, rb)
	}
	return matV(c, c.T.MatMul(c.T.Transpose(bm), c.T.MatMul(a, bm)), kb, kb), nil
}

// quadFormDiag is diag(v)·A·diag(v): element (i,j) is v_i A_ij v_j.
func quadFormDiag(c *Ctx, args []Value) (Value, error) {
	a, r, k := matOf(c, args[0])
	v := args[1]
	if r != k || v.Dims[0] != r {
		return Value{}, errf("quad_form_diag", "matrix is %d×%d and vector has size %d, but must be square of the vector's size", r, k, v.Dims[0])
	}
	vc := c.T.AsMatrix(v.Var, r, 1)
	outer := c.T.MatMul(vc, c.T.AsMatrix(v.Var, 1, r))
	return matV(c, c.T.Mul(a, outer), r, r), nil
}

// diagPre is diag(v)·A: row i scaled by v_i.
func diagPre(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	a, r, k := matOf(c, args[1])
	if v.Dims[0] != r {
		return Value{}, errf("diag_pre_multiply", "size of vector (%d) and rows of matrix (%d) must match", v.Dims[0], r)
	}
	return matV(c, c.T.Mul(a, repeat(c.T, v.Var, k, true)), r, k), nil
}

// diagPost is A·diag(v): column j scaled by v_j.
func diagPost(c *Ctx, args []Value) (Value, error) {
	a, r, k := matOf(c, args[0])
	v := args[1]
	if v.Dims[0] != k {
		return Value{}, errf("diag_post_multiply", "size of vector (%d) and columns of matrix (%d) must match", v.Dims[0], k)
	}
	return matV(c, c.T.Mul(a, repeat(c.T, v.Var, r, false)), r, k), nil
}

func addDiag(c *Ctx, args []Value) (Value, error) {
	a, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("add_diag", "matrix is %d×%d, but must be square", r, k)
	}
	d := args[1]
	if isContainer(d) && d.Dims[0] != r {
		return Value{}, errf("add_diag", "size of diagonal (%d) and rows of matrix (%d) must match", d.Dims[0], r)
	}
	dv := realVar(c, d)
	if !isContainer(d) {
		dv = repeat(c.T, dv, r, false)
	}
	idx, zero := diagScatter(c, r)
	return matV(c, c.T.Add(a, c.T.Gather(c.T.Concat(dv, zero), idx)), r, r), nil
}

func traceFn(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("trace", "matrix is %d×%d, but must be square", r, k)
	}
	return realV(c.T.Sum(c.T.Diag(m))), nil
}

// --- decompositions and solves -------------------------------------------------------------

// checkSymmetric returns Stan's error for a non-square or non-symmetric matrix.
func checkSymmetric(c *Ctx, name string, m ad.Var, r, k int) error {
	if r != k {
		return errf(name, "Expecting a square matrix; rows of m (%d) and columns of m (%d) must match in size", r, k)
	}
	v := c.T.Value(m)
	for i := range r {
		for j := range i {
			a, b := v[i*k+j], v[j*k+i]
			if math.Abs(a-b) > 1e-8*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) {
				return errf(name, "m is not symmetric. m[%d,%d] = %v, but m[%d,%d] = %v", i+1, j+1, a, j+1, i+1, b)
			}
		}
	}
	return nil
}

func choleskyDecompose(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	if err := checkSymmetric(c, "cholesky_decompose", m, r, k); err != nil {
		return Value{}, err
	}
	l := c.T.Cholesky(m)
	for _, x := range c.T.Value(l) {
		if math.IsNaN(x) {
			return Value{}, errf("cholesky_decompose", "Matrix m is not positive definite")
		}
	}
	return matV(c, l, r, r), nil
}

// inverse is A⁻¹ = solve(A, I) via LU with partial pivoting as a Custom node;
// backward Ā = −A⁻ᵀ Ȳ A⁻ᵀ.
func inverse(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("inverse", "Expecting a square matrix; rows of m (%d) and columns of m (%d) must match in size", r, k)
	}
	node := c.T.Custom(inverseBack{}, r*r, 0, m)
	if !invertInto(node.Value(), c.T.Value(m), r, c.T.Scratch(r*r)) {
		return Value{}, errf("inverse", "matrix is singular")
	}
	return matV(c, node.Var(), r, r), nil
}

// invertInto writes A⁻¹ (n×n row-major) into dst by Gauss–Jordan elimination with partial
// pivoting on the work copy w; false if A is singular.
func invertInto(dst, a []float64, n int, w []float64) bool {
	copy(w, a)
	for i := range dst {
		dst[i] = 0
	}
	for i := range n {
		dst[i*n+i] = 1
	}
	for col := range n {
		p := col
		for i := col + 1; i < n; i++ {
			if math.Abs(w[i*n+col]) > math.Abs(w[p*n+col]) {
				p = i
			}
		}
		if w[p*n+col] == 0 {
			return false
		}
		if p != col {
			for j := range n {
				w[p*n+j], w[col*n+j] = w[col*n+j], w[p*n+j]
				dst[p*n+j], dst[col*n+j] = dst[col*n+j], dst[p*n+j]
			}
		}
		d := 1 / w[col*n+col]
		for j := range n {
			w[col*n+j] *= d
			dst[col*n+j] *= d
		}
		for i := range n {
			if i == col {
				continue
			}
			f := w[i*n+col]
			if f == 0 {
				continue
			}
			for j := range n {
				w[i*n+j] -= f * w[col*n+j]
				dst[i*n+j] -= f * dst[col*n+j]
			}
		}
	}
	return true
}

type inverseBack struct{}

func (inverseBack) Backward(c ad.Custom) {
	t := c.Tape()
	ga := t.Grad(c.Arg(0))
	if ga == nil {
		return
	}
	y, g := c.Value(), c.Grad()
	n := int(math.Round(math.Sqrt(float64(len(y)))))
	// Ā = −Yᵀ Ȳ Yᵀ; tmp = Ȳ Yᵀ.
	tmp := t.Scratch(n * n)
	for i := range n {
		for j := range n {
			s := 0.0
			for l := range n {
				s += g[i*n+l] * y[j*n+l]
			}
			tmp[i*n+j] = s
		}
	}
	for i := range n {
		for j := range n {
			s := 0.0
			for l := range n {
				s += y[l*n+i] * tmp[l*n+j]
			}
			ga[i*n+j] -= s
		}
	}
}

func mdivideLeftTriLow(c *Ctx, args []Value) (Value, error) {
	l, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("mdivide_left_tri_low", "Expecting a square matrix; rows of A (%d) and columns of A (%d) must match in size", r, k)
	}
	b := args[1]
	rb, kb := shape2(b)
	if rb != r {
		return Value{}, errf("mdivide_left_tri_low", "columns of A (%d) and rows of b (%d) must match in size", k, rb)
	}
	bv := realVar(c, b)
	if b.Type.Base == Matrix {
		bv, _, _ = matOf(c, b)
	}
	x := c.T.TriSolve(l, bv)
	if b.Type.Base == Vector {
		return vecV(c, Vector, x), nil
	}
	return matV(c, x, rb, kb), nil
}

// mdivideRightTriLow is B·L⁻¹ = (L⁻ᵀ Bᵀ)ᵀ; computed as (L⁻¹ … ) via TriSolve on the
// transpose: X L = B ⇔ Lᵀ Xᵀ = Bᵀ. With U = Lᵀ upper triangular, solved by reversing the
// index order (P U P is lower triangular for the reversal permutation P).
func mdivideRightTriLow(c *Ctx, args []Value) (Value, error) {
	b := args[0]
	l, r, k := matOf(c, args[1])
	rb, kb := shape2(b)
	if r != k || kb != r {
		return Value{}, errf("mdivide_right_tri_low", "columns of b (%d) and rows of A (%d×%d) must match in size", kb, r, k)
	}
	// P Lᵀ P is lower triangular; with Y = P Xᵀ: (P Lᵀ P) Y = P Bᵀ.
	rev := make([]int, r*r)
	for i := range r {
		for j := range r {
			rev[i*r+j] = (r-1-j)*r + (r - 1 - i) // (P Lᵀ P)_ij = L_{r−1−j, r−1−i}
		}
	}
	lp := c.T.AsMatrix(c.T.Gather(l, rev), r, r)
	bt := realVar(c, b) // B is rb×r row-major; Bᵀ is r×rb.
	pb := make([]int, r*rb)
	for i := range r {
		for j := range rb {
			pb[i*rb+j] = j*r + (r - 1 - i) // (P Bᵀ)_ij = B_{j, r−1−i}
		}
	}
	y := c.T.TriSolve(lp, c.T.AsMatrix(c.T.Gather(bt, pb), r, rb))
	// X = (P Y)ᵀ: X_ij = Y_{r−1−j, i}.
	px := make([]int, rb*r)
	for i := range rb {
		for j := range r {
			px[i*r+j] = (r-1-j)*rb + i
		}
	}
	x := c.T.Gather(y, px)
	if b.Type.Base == RowVector {
		return vecV(c, RowVector, x), nil
	}
	return matV(c, x, rb, r), nil
}

// mdivideLeft is A⁻¹B via the inverse (the corpus uses it only on small matrices).
func mdivideLeft(c *Ctx, args []Value) (Value, error) {
	inv, err := inverse(c, args[:1])
	if err != nil {
		return Value{}, errf("mdivide_left", "%v", err)
	}
	b := args[1]
	if rb, _ := shape2(b); rb != inv.Dims[0] {
		return Value{}, errf("mdivide_left", "columns of A (%d) and rows of b (%d) must match in size", inv.Dims[0], rb)
	}
	if b.Type.Base == Vector {
		return vecV(c, Vector, c.T.MatVec(inv.Var, b.Var)), nil
	}
	bm, _, kb := matOf(c, b)
	return matV(c, c.T.MatMul(inv.Var, bm), inv.Dims[0], kb), nil
}

func logDeterminant(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("log_determinant", "Expecting a square matrix; rows of m (%d) and columns of m (%d) must match in size", r, k)
	}
	return realV(c.T.LogDet(m)), nil
}

// determinant is det A with ∂/∂A = det(A)·A⁻ᵀ.
func determinant(c *Ctx, args []Value) (Value, error) {
	m, r, k := matOf(c, args[0])
	if r != k {
		return Value{}, errf("determinant", "Expecting a square matrix; rows of m (%d) and columns of m (%d) must match in size", r, k)
	}
	av := c.T.Value(m)
	det := luDet(av, r, c.T.Scratch(r*r))
	inv := c.T.Scratch(r * r)
	ok := invertInto(inv, av, r, c.T.Scratch(r*r))
	fb := c.T.Fused()
	if d := fb.Partial(m); d != nil && ok {
		for i := range r {
			for j := range r {
				d[i*r+j] = det * inv[j*r+i]
			}
		}
	}
	return realV(fb.Done(det)), nil
}

// luDet is det A by Gaussian elimination with partial pivoting on the work copy w.
func luDet(a []float64, n int, w []float64) float64 {
	copy(w, a)
	det := 1.0
	for col := range n {
		p := col
		for i := col + 1; i < n; i++ {
			if math.Abs(w[i*n+col]) > math.Abs(w[p*n+col]) {
				p = i
			}
		}
		if w[p*n+col] == 0 {
			return 0
		}
		if p != col {
			det = -det
			for j := range n {
				w[p*n+j], w[col*n+j] = w[col*n+j], w[p*n+j]
			}
		}
		det *= w[col*n+col]
		for i := col + 1; i < n; i++ {
			f := w[i*n+col] / w[col*n+col]
			for j := col; j < n; j++ {
				w[i*n+j] -= f * w[col*n+j]
			}
		}
	}
	return det
}

// --- softmax, sorting ----------------------------------------------------------------------

// softmax is exp(x − log Σ eˣ) (or its log) as one Custom node.
func softmax(logOut bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		v := args[0]
		x := v.Var
		xv := c.T.Value(x)
		n := len(xv)
		if n == 0 {
			name := "softmax"
			if logOut {
				name = "log_softmax"
			}
			return Value{}, errf(name, "argument has size 0, but must have a non-zero size")
		}
		var node ad.Custom
		if logOut {
			node = c.T.Custom(logSoftmaxBack{}, n, n, x)
		} else {
			node = c.T.Custom(softmaxBack{}, n, 0, x)
		}
		m := math.Inf(-1)
		for _, xi := range xv {
			m = math.Max(m, xi)
		}
		s := 0.0
		for _, xi := range xv {
			s += math.Exp(xi - m)
		}
		lse := m + math.Log(s)
		out := node.Value()
		for i, xi := range xv {
			if logOut {
				out[i] = xi - lse
				node.Aux()[i] = math.Exp(xi - lse)
			} else {
				out[i] = math.Exp(xi - lse)
			}
		}
		return Value{Type: TVector, Dims: v.Dims, Var: node.Var()}, nil
	}
}

// softmaxBack: x̄ = y ⊙ (ȳ − ⟨ȳ, y⟩).
type softmaxBack struct{}

func (softmaxBack) Backward(c ad.Custom) {
	gx := c.Tape().Grad(c.Arg(0))
	if gx == nil {
		return
	}
	y, g := c.Value(), c.Grad()
	d := 0.0
	for i := range y {
		d += g[i] * y[i]
	}
	for i := range y {
		gx[i] += y[i] * (g[i] - d)
	}
}

// logSoftmaxBack: x̄ = ȳ − softmax(x)·Σȳ (aux holds softmax(x)).
type logSoftmaxBack struct{}

func (logSoftmaxBack) Backward(c ad.Custom) {
	gx := c.Tape().Grad(c.Arg(0))
	if gx == nil {
		return
	}
	p, g := c.Aux(), c.Grad()
	s := 0.0
	for _, gi := range g {
		s += gi
	}
	for i := range g {
		gx[i] += g[i] - p[i]*s
	}
}

// sortedIdx returns the 0-based permutation that sorts v (stable).
func sortedIdx(c *Ctx, v Value, desc bool) []int {
	n := v.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if v.Type.Base == Int {
		ks := v.Ints
		sort.SliceStable(idx, func(a, b int) bool {
			if desc {
				return ks[idx[a]] > ks[idx[b]]
			}
			return ks[idx[a]] < ks[idx[b]]
		})
		return idx
	}
	xv := c.T.Value(v.Var)
	sort.SliceStable(idx, func(a, b int) bool {
		if desc {
			return xv[idx[a]] > xv[idx[b]]
		}
		return xv[idx[a]] < xv[idx[b]]
	})
	return idx
}

func sortFn(desc bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		v := args[0]
		idx := sortedIdx(c, v, desc)
		if v.Type.Base == Int {
			ks := make([]int, len(idx))
			for i, j := range idx {
				ks[i] = v.Ints[j]
			}
			return Value{Type: v.Type, Dims: v.Dims, Ints: ks}, nil
		}
		return Value{Type: v.Type, Dims: v.Dims, Var: c.T.Gather(v.Var, idx)}, nil
	}
}

func sortIndices(desc bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		idx := sortedIdx(c, args[0], desc)
		for i := range idx {
			idx[i]++
		}
		return intsV(idx, len(idx)), nil
	}
}

// rankFn is the number of elements less than v[s].
func rankFn(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	s := intOf(args[1])
	n := v.Len()
	if s < 1 || s > n {
		return Value{}, errf("rank", "index %d out of range [1, %d]", s, n)
	}
	r := 0
	if v.Type.Base == Int {
		for _, k := range v.Ints {
			if k < v.Ints[s-1] {
				r++
			}
		}
		return intV(r), nil
	}
	xv := c.T.Value(v.Var)
	for _, x := range xv {
		if x < xv[s-1] {
			r++
		}
	}
	return intV(r), nil
}

func reverseFn(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	n := v.Len()
	if v.Type.Base == Int {
		ks := make([]int, n)
		for i, k := range v.Ints {
			ks[n-1-i] = k
		}
		return Value{Type: v.Type, Dims: v.Dims, Ints: ks}, nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = n - 1 - i
	}
	return Value{Type: v.Type, Dims: v.Dims, Var: c.T.Gather(v.Var, idx)}, nil
}

func cumSum(c *Ctx, args []Value) (Value, error) {
	v := args[0]
	if v.Type.Base == Int {
		ks := make([]int, len(v.Ints))
		s := 0
		for i, k := range v.Ints {
			s += k
			ks[i] = s
		}
		return Value{Type: v.Type, Dims: v.Dims, Ints: ks}, nil
	}
	return Value{Type: v.Type, Dims: v.Dims, Var: c.T.CumSum(v.Var)}, nil
}

// --- Gaussian processes --------------------------------------------------------------------

// gpPoints returns the points of an array[] real or array[] vector as (count, dimension,
// row-major coordinates).
func gpPoints(c *Ctx, v Value) (int, int, []float64) {
	n := v.Dims[0]
	d := 1
	if v.Type.Base == Vector {
		d = v.Dims[1]
	}
	return n, d, c.T.Value(v.Var)
}

// gpExpQuad is K_ij = α² exp(−‖x_i − x_j‖² / (2ℓ²)) for data points x, as one Custom node with
// partials in α and ℓ (Stan's gp_exp_quad_cov; the points must be data).
func gpExpQuad(c *Ctx, args []Value) (Value, error) {
	return gpExpQuadXY(c, args[0], args[0], args[1], args[2])
}

func gpExpQuad2(c *Ctx, args []Value) (Value, error) {
	return gpExpQuadXY(c, args[0], args[1], args[2], args[3])
}

func gpExpQuadXY(c *Ctx, xv, yv, alpha, rho Value) (Value, error) {
	const name = "gp_exp_quad_cov"
	if !constant(c, xv) || !constant(c, yv) {
		return Value{}, errf(name, "the points must be data (parameter-dependent points are not supported)")
	}
	n, d, x := gpPoints(c, xv)
	m, d2, y := gpPoints(c, yv)
	if d != d2 {
		return Value{}, errf(name, "dimensions of x1 (%d) and x2 (%d) must match", d, d2)
	}
	a, l := scalarOf(c, alpha), scalarOf(c, rho)
	if !(a > 0) || math.IsInf(a, 0) {
		return Value{}, errf(name, "magnitude is %v, but must be positive finite!", a)
	}
	if !(l > 0) || math.IsInf(l, 0) {
		return Value{}, errf(name, "length scale is %v, but must be positive finite!", l)
	}
	av, lv := realVar(c, alpha), realVar(c, rho)
	node := c.T.Custom(gpBack{}, n*m, n*m, av, lv)
	k, sq := node.Value(), node.Aux()
	a2, inv := a*a, 1/(2*l*l)
	for i := range n {
		for j := range m {
			s := 0.0
			for q := range d {
				e := x[i*d+q] - y[j*d+q]
				s += e * e
			}
			sq[i*m+j] = s
			k[i*m+j] = a2 * math.Exp(-s*inv)
		}
	}
	return matV(c, node.Var(), n, m), nil
}

// gpBack: ∂K/∂α = 2K/α, ∂K/∂ℓ = K·‖Δ‖²/ℓ³ (aux holds ‖Δ‖²).
type gpBack struct{}

func (gpBack) Backward(c ad.Custom) {
	t := c.Tape()
	k, sq, g := c.Value(), c.Aux(), c.Grad()
	a, l := t.Float(c.Arg(0)), t.Float(c.Arg(1))
	if ga := t.Grad(c.Arg(0)); ga != nil {
		s := 0.0
		for i, gi := range g {
			s += gi * k[i]
		}
		ga[0] += 2 * s / a
	}
	if gl := t.Grad(c.Arg(1)); gl != nil {
		s := 0.0
		for i, gi := range g {
			s += gi * k[i] * sq[i]
		}
		gl[0] += s / (l * l * l)
	}
}

// --- symmetric eigendecomposition ----------------------------------------------------------

// jacobiEigen writes the eigenvalues of the symmetric n×n matrix a (ascending) into lam and
// the matching unit eigenvectors as the columns of q (row-major), by the cyclic Jacobi method
// (Golub & Van Loan 2013, §8.5.2) on the work copy w: accurate to working precision for the
// small matrices of the corpus; cost O(n³) per sweep, a handful of sweeps.
func jacobiEigen(a []float64, n int, lam, q, w []float64) {
	copy(w, a)
	for i := range q {
		q[i] = 0
	}
	for i := range n {
		q[i*n+i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		off, tot := 0.0, 0.0
		for i := range n {
			for j := range n {
				if i != j {
					off += w[i*n+j] * w[i*n+j]
				}
				tot += w[i*n+j] * w[i*n+j]
			}
		}
		if off <= 1e-30*tot || off == 0 {
			break
		}
		for p := 0; p < n-1; p++ {
			for r := p + 1; r < n; r++ {
				apr := w[p*n+r]
				if apr == 0 {
					continue
				}
				theta := (w[r*n+r] - w[p*n+p]) / (2 * apr)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n { // columns p, r of W
					wkp, wkr := w[k*n+p], w[k*n+r]
					w[k*n+p], w[k*n+r] = c*wkp-s*wkr, s*wkp+c*wkr
				}
				for k := range n { // rows p, r of W
					wpk, wrk := w[p*n+k], w[r*n+k]
					w[p*n+k], w[r*n+k] = c*wpk-s*wrk, s*wpk+c*wrk
				}
				for k := range n {
					qkp, qkr := q[k*n+p], q[k*n+r]
					q[k*n+p], q[k*n+r] = c*qkp-s*qkr, s*qkp+c*qkr
				}
			}
		}
	}
	for i := range n {
		lam[i] = w[i*n+i]
	}
	// Sort ascending (selection sort, permuting the columns of q).
	for i := range n {
		m := i
		for j := i + 1; j < n; j++ {
			if lam[j] < lam[m] {
				m = j
			}
		}
		if m != i {
			lam[i], lam[m] = lam[m], lam[i]
			for k := range n {
				q[k*n+i], q[k*n+m] = q[k*n+m], q[k*n+i]
			}
		}
	}
}

// eigenSym runs the decomposition of a symmetric matrix argument.
func eigenSym(c *Ctx, name string, v Value, vectors bool) (Value, error) {
	m, r, k := matOf(c, v)
	if err := checkSymmetric(c, name, m, r, k); err != nil {
		return Value{}, err
	}
	n := r
	if vectors {
		node := c.T.Custom(eigvecBack{}, n*n, n, m)
		jacobiEigen(c.T.Value(m), n, node.Aux(), node.Value(), c.T.Scratch(n*n))
		return matV(c, node.Var(), n, n), nil
	}
	node := c.T.Custom(eigvalBack{}, n, n*n, m)
	jacobiEigen(c.T.Value(m), n, node.Value(), node.Aux(), c.T.Scratch(n*n))
	return vecV(c, Vector, node.Var()), nil
}

func eigenvaluesSym(c *Ctx, args []Value) (Value, error) {
	return eigenSym(c, "eigenvalues_sym", args[0], false)
}

func eigenvectorsSym(c *Ctx, args []Value) (Value, error) {
	return eigenSym(c, "eigenvectors_sym", args[0], true)
}

// eigBackward adds sym(Q (diag(λ̄) + F ∘ (Qᵀ Q̄)) Qᵀ) to ā, with F_ij = 1/(λ_j − λ_i) off the
// diagonal (Giles 2008, "An extended collection of matrix derivative results for forward and
// reverse mode AD", §3.1); the symmetric part because A is symmetric. lbar or qbar may be nil.
func eigBackward(t *ad.Tape, ga, lam, q, lbar, qbar []float64) {
	n := len(lam)
	inner := t.Scratch(n * n)
	if qbar != nil {
		for i := range n {
			for j := range n {
				if i == j {
					continue
				}
				s := 0.0
				for k := range n {
					s += q[k*n+i] * qbar[k*n+j]
				}
				if d := lam[j] - lam[i]; d != 0 {
					inner[i*n+j] = s / d
				}
			}
		}
	}
	if lbar != nil {
		for i := range n {
			inner[i*n+i] += lbar[i]
		}
	}
	tmp := t.Scratch(n * n) // Q·inner
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += q[i*n+k] * inner[k*n+j]
			}
			tmp[i*n+j] = s
		}
	}
	for i := range n {
		for j := range n {
			s1, s2 := 0.0, 0.0
			for k := range n {
				s1 += tmp[i*n+k] * q[j*n+k]
				s2 += tmp[j*n+k] * q[i*n+k]
			}
			ga[i*n+j] += 0.5 * (s1 + s2)
		}
	}
}

// eigvalBack: the node's value is λ, aux is Q.
type eigvalBack struct{}

func (eigvalBack) Backward(c ad.Custom) {
	t := c.Tape()
	if ga := t.Grad(c.Arg(0)); ga != nil {
		eigBackward(t, ga, c.Value(), c.Aux(), c.Grad(), nil)
	}
}

// eigvecBack: the node's value is Q, aux is λ.
type eigvecBack struct{}

func (eigvecBack) Backward(c ad.Custom) {
	t := c.Tape()
	if ga := t.Grad(c.Arg(0)); ga != nil {
		eigBackward(t, ga, c.Aux(), c.Value(), nil, c.Grad())
	}
}
