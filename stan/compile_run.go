package stan

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// The run-time machinery of compiled programs: frames of variable cells, the evaluation state
// of one log-density (or derived-quantities) evaluation, and run-time errors with positions.

// cell holds one variable during an evaluation. A real container written element by element
// keeps its elements as scalar nodes (elems, row-major) so that each write costs nothing on
// the tape; reading it whole materialises one Concat node (cached until the next write).
type cell struct {
	v     Value
	elems []ad.Var
	stale bool // v.Var is out of date with elems
	fresh bool // v is the NaN fill of a declaration without initial value
	// spare is a backing array for elems kept from an earlier declaration of the variable in a
	// pooled frame, so that writing a container element by element allocates nothing in steady
	// state (elems is only ever read while the cell holds it; Concat copies the node ids).
	spare []ad.Var
}

// state is one evaluation: the tape, the accumulated log density, the random stream.
type state struct {
	t      *ad.Tape
	target []ad.Var
	rng    *rng.Stream
	c      *compiler
	depth  int
	cx     *Ctx   // the built-ins' context, made once per evaluation (Pos set per call)
	nan    ad.Var // a constant NaN scalar, the value of an unassigned real element
	hasNaN bool
	// opArgs holds an operator's operands during its call, so that a binary or unary operator
	// allocates no argument slice. Safe because operators never call back into the program
	// (only higher-order built-ins do, through Ctx.Call, and they are calls, not operators),
	// and their operands are evaluated before the slots are filled.
	opArgs [2]Value
	// args is a stack of sampling statements' arguments (y and the distribution's parameters):
	// a statement pushes its values, calls the density on its slice and pops back, so nested
	// evaluations (a user _lpdf with its own ~ statements) push above it and no statement
	// allocates an argument slice once the pooled frame's stack has grown.
	args []Value
}

// frame is the variables of one program evaluation or of one user-function call.
type frame struct {
	st    *state
	cells []cell
	ret   Value
}

// ctl is how a statement ends.
type ctl uint8

const (
	ctlNext ctl = iota
	ctlBreak
	ctlContinue
	ctlReturn
)

type (
	evalFn func(f *frame) (Value, error)
	execFn func(f *frame) (ctl, error)
)

// RuntimeError is a domain error or reject() met while evaluating a program, with the
// position of the statement (or expression) where it happened.
type RuntimeError struct {
	Pos Pos
	Err error
}

func (e *RuntimeError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Err)
}

func (e *RuntimeError) Unwrap() error { return e.Err }

// at wraps err with pos unless it already has a position.
func withPos(pos Pos, err error) error {
	if err == nil {
		return nil
	}
	var re *RuntimeError
	if errors.As(err, &re) {
		return err
	}
	return &RuntimeError{Pos: pos, Err: err}
}

func (st *state) nanVar() ad.Var {
	if !st.hasNaN {
		st.nan = st.t.Const(math.NaN())
		st.hasNaN = true
	}
	return st.nan
}

// read returns the whole value of cell i.
func (f *frame) read(i int) Value {
	c := &f.cells[i]
	if c.elems != nil && c.stale {
		t := f.st.t
		var x ad.Var
		if len(c.elems) == 1 {
			x = c.elems[0]
		} else {
			x = t.Concat(c.elems...)
		}
		c.v.Var = shapeVar(t, c.v.Type, c.v.Dims, x)
		c.stale = false
	}
	return c.v
}

// set assigns a whole value (already of the cell's type) to cell i.
func (f *frame) set(i int, v Value) {
	c := &f.cells[i]
	if v.Type.Base == Int && v.Ints != nil {
		v.Ints = append([]int(nil), v.Ints...)
	}
	if c.elems != nil {
		c.spare = c.elems
	}
	c.v, c.elems, c.stale, c.fresh = v, nil, false, false
}

// shapeVar gives a matrix value its matrix shape on the tape.
func shapeVar(t *ad.Tape, ty Type, dims []int, x ad.Var) ad.Var {
	if ty.Array == 0 && ty.Base == Matrix && len(dims) == 2 {
		if r, c := t.Shape(x); r != dims[0] || c != dims[1] {
			return t.AsMatrix(x, dims[0], dims[1])
		}
	}
	return x
}

// mkValue builds a real value of type ty and dims holding x.
func mkValue(t *ad.Tape, ty Type, dims []int, x ad.Var) Value {
	return Value{Type: ty, Dims: dims, Var: shapeVar(t, ty, dims, x)}
}

// toReal converts v to a real value of type ty (an int value becomes a constant node).
func toReal(t *ad.Tape, v Value, ty Type) Value {
	if v.Type.Base != Int || ty.Base == Int {
		if v.Type.Base != Int {
			// A vector where a row vector is expected etc. keeps its data; adopt ty.
			if v.Type != ty && ty.Base != Int && ty.Base != Void && ty.Base != Func {
				return mkValue(t, ty, v.Dims, v.Var)
			}
		}
		return v
	}
	xs := make([]float64, len(v.Ints))
	for i, k := range v.Ints {
		xs[i] = float64(k)
	}
	if ty.Base == Void || ty.Base == Int {
		ty = Type{Base: Real, Array: v.Type.Array}
	}
	return mkValue(t, ty, v.Dims, t.Const(xs...))
}

// scalarElems returns the k scalar elements of v as nodes (a scalar repeats to k).
func scalarElems(t *ad.Tape, v Value, k int) []ad.Var {
	out := make([]ad.Var, k)
	if v.Type.Base == Int {
		for i := range out {
			j := i
			if len(v.Ints) == 1 {
				j = 0
			}
			out[i] = t.Const(float64(v.Ints[j]))
		}
		return out
	}
	n := t.Size(v.Var)
	if n == 1 {
		for i := range out {
			out[i] = v.Var
		}
		return out
	}
	for i := range out {
		out[i] = t.Index(v.Var, i)
	}
	return out
}

// writeElems assigns rhs's elements to the row-major elements flat of cell i.
func (f *frame) writeElems(i int, flat []int, rhs Value) error {
	c := &f.cells[i]
	n := rhs.Len()
	if len(rhs.Dims) == 0 {
		n = 1
	}
	if n != len(flat) {
		return fmt.Errorf("assignment: size mismatch: %d elements assigned to %d", n, len(flat))
	}
	if c.v.Type.Base == Int {
		for k, j := range flat {
			c.v.Ints[j] = rhs.Ints[k]
		}
		return nil
	}
	t := f.st.t
	wasFresh := c.fresh
	c.fresh = false
	if c.elems == nil {
		total := c.v.Len()
		if cap(c.spare) >= total {
			c.elems, c.spare = c.spare[:total], nil
		} else {
			c.elems = make([]ad.Var, total)
		}
		if wasFresh {
			for j := range c.elems {
				c.elems[j] = f.st.nanVar()
			}
		} else if total == 1 {
			c.elems[0] = c.v.Var
		} else {
			for j := range c.elems {
				c.elems[j] = t.Index(c.v.Var, j)
			}
		}
	}
	if len(flat) == 1 {
		if rhs.Type.Base == Int {
			c.elems[flat[0]] = t.Const(float64(rhs.Ints[0]))
		} else if t.Size(rhs.Var) == 1 {
			c.elems[flat[0]] = rhs.Var
		} else {
			c.elems[flat[0]] = t.Index(rhs.Var, 0)
		}
	} else {
		es := scalarElems(t, rhs, len(flat))
		for k, j := range flat {
			c.elems[j] = es[k]
		}
	}
	c.stale = true
	return nil
}

// elemRead returns the single element j of cell i as a scalar value, without materialising
// an element-wise written container.
func (f *frame) elemRead(i int, j int, ty Type) Value {
	c := &f.cells[i]
	if c.v.Type.Base == Int {
		return Value{Type: TInt, Ints: []int{c.v.Ints[j]}}
	}
	if c.elems != nil {
		return Value{Type: ty, Var: c.elems[j]}
	}
	t := f.st.t
	if t.Size(c.v.Var) == 1 {
		return Value{Type: ty, Var: c.v.Var}
	}
	return Value{Type: ty, Var: t.Index(c.v.Var, j)}
}

// fill returns a fresh value of type ty and dims with every element NaN (reals) or the
// smallest int (ints), as Stan initialises declared variables.
func (st *state) fill(ty Type, dims []int) Value {
	n := 1
	for _, d := range dims {
		n *= d
	}
	if ty.Base == Int {
		ks := make([]int, n)
		for i := range ks {
			ks[i] = math.MinInt32
		}
		return Value{Type: ty, Dims: dims, Ints: ks}
	}
	xs := st.t.Scratch(n)
	for i := range xs {
		xs[i] = math.NaN()
	}
	return mkValue(st.t, ty, dims, st.t.ConstRef(xs))
}

// sumTarget is the accumulated log density as one scalar node.
func (st *state) sumTarget() ad.Var {
	switch len(st.target) {
	case 0:
		return st.t.Const(0)
	case 1:
		return st.target[0]
	}
	return st.t.Sum(st.t.Concat(st.target...))
}

// addTarget adds v (summed if a container) to the log density.
func (st *state) addTarget(v Value) {
	t := st.t
	var x ad.Var
	if v.Type.Base == Int {
		s := 0
		for _, k := range v.Ints {
			s += k
		}
		x = t.Const(float64(s))
	} else if t.Size(v.Var) == 1 {
		x = v.Var
	} else {
		x = t.Sum(v.Var)
	}
	st.target = append(st.target, x)
}
