// Package ad is vigo's reverse-mode automatic differentiation engine.
//
// A Tape records operations on vector (and matrix) valued nodes and replays them backwards to
// accumulate adjoints. Nodes are whole vectors, not scalars: a log density over N observations
// is one fused node with analytic partials (see FusedBuilder), which is what makes the tape fast
// (Carpenter et al. 2015, "The Stan Math Library: Reverse-Mode Automatic Differentiation in C++",
// arXiv:1509.07164, §4 and §9; DESIGN.md §3).
//
// Rules:
//   - A Tape is a value owned by one goroutine; there is no global tape.
//   - Reset keeps every buffer, so a steady-state gradient evaluation allocates nothing.
//   - Values returned by Value/Grad alias tape memory and are valid until Reset or Rewind.
//   - Binary elementwise ops broadcast a length-1 operand against a length-n one; any other
//     length mismatch is a programmer error and panics.
//   - Constants (Const, ConstRef) carry no adjoint; data stay out of the gradient.
//
// Matrices are row-major; a node created by a matrix op (or AsMatrix) knows its shape.
package ad

import "fmt"

// Var is a handle to a node on a Tape. It is only meaningful together with the Tape that
// created it and only until that tape is Reset or rewound past it.
type Var struct{ id int32 }

// ID returns the node index of v on its tape (for debugging and tests).
func (v Var) ID() int { return int(v.id) }

type op uint8

const (
	opInput op = iota
	opConst
	opView // shares val/adj with its source; nothing to do backwards
	opAdd
	opSub
	opMul
	opDiv
	opPow
	opAddC
	opMulC
	opPowC
	opNeg
	opExp
	opLog
	opLog1p
	opExpm1
	opSqrt
	opSquare
	opAbs
	opSoftplus
	opSigmoid
	opLogSigmoid
	opTanh
	opRelu
	opLgamma
	opSum
	opMean
	opDot
	opLogSumExp
	opMatVec
	opMatVecC
	opMatTVecC
	opMatMul
	opTranspose
	opConcat
	opCholesky
	opTriSolve
	opLogDet
	opFused
	opMap
	opGather
	opDense
	opCumSum
	opCustom
)

type node struct {
	val  []float64 // value (aliased for views and ConstRef)
	adj  []float64 // adjoint, nil for constants
	aux  []float64 // op-specific cache (e.g. inverse for LogDet)
	c    float64   // scalar constant operand
	a, b int32     // operand node ids (-1 if unused)
	lo   int32     // op-specific: argument list offset, row count of a constant matrix
	hi   int32     // op-specific: argument list end, column count of a constant matrix
	rows int32     // shape; vectors have rows=len, cols=1
	cols int32
	op   op
}

// fpart is one argument of a fused node and its caller-computed partials.
type fpart struct {
	id int32
	d  []float64
}

// Tape records a computation for reverse-mode differentiation. The zero value is ready to use.
type Tape struct {
	nodes  []node
	mem    arena
	args   []int32      // argument lists of n-ary nodes (Concat)
	parts  []fpart      // partials of fused nodes
	consts []constMat   // constant matrices referenced by MatVecC
	fns    []Backwarder // backward rules of Custom nodes
	memos  []memo       // values cached by Memo
	dirty  bool         // a backward pass has written adjoints since the last Reset
}

// constMat is a constant matrix operand held by reference.
type constMat struct{ m Mat }

// Mat is a constant dense row-major matrix (data, not a node): Rows×Cols with element (i,j) at
// Data[i*Cols+j]. It is read, never written, by the tape.
type Mat struct {
	Rows, Cols int
	Data       []float64
}

// Reset empties the tape and keeps all capacity.
func (t *Tape) Reset() {
	clear(t.nodes) // drop references to user data held by ConstRef nodes
	t.nodes = t.nodes[:0]
	t.mem.reset()
	t.dirty = false
	t.args = t.args[:0]
	clear(t.parts)
	t.parts = t.parts[:0]
	clear(t.consts)
	t.consts = t.consts[:0]
	clear(t.fns)
	t.fns = t.fns[:0]
	t.dropMemos(0)
}

// Len returns the number of nodes on the tape.
func (t *Tape) Len() int { return len(t.nodes) }

// Mark is a position on the tape; see Tape.Mark.
type Mark struct {
	nodes, args, parts, consts, fns int
	mem                             arenaPos
}

// Mark returns the current end of the tape. Rewind(m) later discards everything recorded after
// it, so an inner computation (one Monte-Carlo sample, one inner gradient) can reuse memory.
// Marks nest: rewinding to an outer mark also discards inner ones.
func (t *Tape) Mark() Mark {
	return Mark{len(t.nodes), len(t.args), len(t.parts), len(t.consts), len(t.fns), t.mem.pos()}
}

// Rewind discards all nodes recorded after m. Vars created after m become invalid.
func (t *Tape) Rewind(m Mark) {
	clear(t.nodes[m.nodes:])
	t.nodes = t.nodes[:m.nodes]
	t.args = t.args[:m.args]
	clear(t.parts[m.parts:])
	t.parts = t.parts[:m.parts]
	clear(t.consts[m.consts:])
	t.consts = t.consts[:m.consts]
	clear(t.fns[m.fns:])
	t.fns = t.fns[:m.fns]
	if len(t.memos) > 0 {
		t.dropMemos(m.nodes)
	}
	t.mem.rewind(m.mem)
}

func (t *Tape) push(n node) Var {
	t.nodes = append(t.nodes, n)
	return Var{int32(len(t.nodes) - 1)}
}

// newNode allocates value and adjoint storage of length rows*cols and records the node. The
// record is written in place (a node is ~110 bytes: building it and then appending it doubled
// the copying, which showed at ≈ 20% of a small model's gradient).
func (t *Tape) newNode(o op, a, b int32, rows, cols int) (Var, *node) {
	n := rows * cols
	s := t.mem.alloc(2 * n)
	clear(s[n:]) // adjoints start at zero; every op writes its whole value
	i := len(t.nodes)
	if i == cap(t.nodes) {
		t.nodes = append(t.nodes, node{})
	} else {
		t.nodes = t.nodes[:i+1]
	}
	nd := &t.nodes[i]
	nd.val, nd.adj, nd.aux = s[:n:n], s[n:2*n:2*n], nil
	nd.c, nd.a, nd.b, nd.lo, nd.hi = 0, a, b, 0, 0
	nd.rows, nd.cols, nd.op = int32(rows), int32(cols), o
	return Var{int32(i)}, nd
}

func (t *Tape) nd(v Var) *node {
	if v.id < 0 || int(v.id) >= len(t.nodes) {
		panic(fmt.Sprintf("ad: Var %d is not on this tape (len=%d)", v.id, len(t.nodes)))
	}
	return &t.nodes[v.id]
}

// Input records an independent variable with a copy of x as its value.
func (t *Tape) Input(x []float64) Var {
	v, n := t.newNode(opInput, -1, -1, len(x), 1)
	copy(n.val, x)
	return v
}

// Scalar records an independent scalar variable.
func (t *Tape) Scalar(x float64) Var {
	v, n := t.newNode(opInput, -1, -1, 1, 1)
	n.val[0] = x
	return v
}

// Const records a constant vector (a copy of x). Constants receive no adjoint.
func (t *Tape) Const(x ...float64) Var {
	s := t.mem.alloc(len(x))
	copy(s, x)
	return t.push(node{op: opConst, a: -1, b: -1, val: s, rows: int32(len(x)), cols: 1})
}

// ConstRef records a constant vector that aliases x without copying it; x must not change
// while the tape uses it. This is how data enter a density at no cost.
func (t *Tape) ConstRef(x []float64) Var {
	return t.push(node{op: opConst, a: -1, b: -1, val: x, rows: int32(len(x)), cols: 1})
}

// IsConst reports whether v carries no adjoint (a constant, or a view of one).
func (t *Tape) IsConst(v Var) bool { return t.nd(v).adj == nil }

// Size returns the number of elements of v.
func (t *Tape) Size(v Var) int { return len(t.nd(v).val) }

// Shape returns the matrix shape of v (vectors are n×1).
func (t *Tape) Shape(v Var) (rows, cols int) {
	n := t.nd(v)
	return int(n.rows), int(n.cols)
}

// Value returns the value of v. The slice aliases tape memory: read it, do not modify it.
func (t *Tape) Value(v Var) []float64 { return t.nd(v).val }

// Float returns the first element of v's value (the value of a scalar).
func (t *Tape) Float(v Var) float64 { return t.nd(v).val[0] }

// Grad returns the adjoint of v after Backward: ∂out/∂v. It is nil for constants.
func (t *Tape) Grad(v Var) []float64 { return t.nd(v).adj }

// AsMatrix returns a view of v with shape rows×cols (row-major). It panics if rows*cols differs
// from v's size.
func (t *Tape) AsMatrix(v Var, rows, cols int) Var {
	n := t.nd(v)
	if rows*cols != len(n.val) {
		panic(fmt.Sprintf("ad: AsMatrix: %d×%d does not match size %d", rows, cols, len(n.val)))
	}
	return t.push(node{op: opView, a: v.id, b: -1, val: n.val, adj: n.adj, rows: int32(rows), cols: int32(cols)})
}

// Slice returns elements [lo, hi) of v as a view: no copy, gradients flow to v directly.
func (t *Tape) Slice(v Var, lo, hi int) Var {
	n := t.nd(v)
	if lo < 0 || hi > len(n.val) || lo > hi {
		panic(fmt.Sprintf("ad: Slice: [%d,%d) out of range for size %d", lo, hi, len(n.val)))
	}
	var adj []float64
	if n.adj != nil {
		adj = n.adj[lo:hi:hi]
	}
	return t.push(node{op: opView, a: v.id, b: -1, val: n.val[lo:hi:hi], adj: adj, rows: int32(hi - lo), cols: 1})
}

// Index returns element i of v as a scalar view.
func (t *Tape) Index(v Var, i int) Var { return t.Slice(v, i, i+1) }

// Backward sets the adjoint of the scalar out to 1 and propagates adjoints to every node
// recorded before it. Adjoints from an earlier Backward are cleared first.
// Cost: one pass over the tape, about the cost of the forward pass.
func (t *Tape) Backward(out Var) {
	t.backward(out, 0)
}

// BackwardSince is Backward restricted to nodes recorded at or after m: their adjoints are
// cleared and propagated; nodes before m only receive contributions (their adjoints are not
// cleared, so clear them with ZeroGrad when needed). Used for inner gradients inside a larger
// computation.
func (t *Tape) BackwardSince(m Mark, out Var) {
	t.backward(out, m.nodes)
}

// ZeroGrad clears the adjoint of v.
func (t *Tape) ZeroGrad(v Var) { clear(t.nd(v).adj) }

func (t *Tape) backward(out Var, from int) {
	o := t.nd(out)
	if len(o.val) != 1 {
		panic(fmt.Sprintf("ad: Backward: output has size %d, want a scalar", len(o.val)))
	}
	if t.dirty || from > 0 {
		// Adjoints of fresh nodes are zero; only a second pass over the same nodes must clear.
		for i := from; i <= int(out.id); i++ {
			// A view shares its source's adjoint: clearing it would wipe adjoints of a source
			// recorded before the mark. The source clears its own when it is in range.
			if t.nodes[i].op != opView {
				clear(t.nodes[i].adj)
			}
		}
	}
	t.dirty = true
	o.adj[0] = 1
	for i := int(out.id); i >= from; i-- {
		t.chain(i)
	}
}

// Func is a scalar function of one vector input recorded on a tape.
type Func func(t *Tape, x Var) Var

// Gradient evaluates f at x on t (which it resets), writes ∇f(x) into grad (len(x)) and
// returns f(x). Reusing t across calls keeps evaluation allocation-free.
func Gradient(t *Tape, f Func, x, grad []float64) float64 {
	if len(grad) != len(x) {
		panic(fmt.Sprintf("ad: Gradient: len(grad)=%d, len(x)=%d", len(grad), len(x)))
	}
	t.Reset()
	in := t.Input(x)
	out := f(t, in)
	t.Backward(out)
	copy(grad, t.Grad(in))
	return t.Float(out)
}
