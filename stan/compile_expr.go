package stan

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
)

// Compiling expressions into closures. Each closure evaluates its sub-closures and records
// the built-in's nodes on the frame's tape; nothing walks the syntax tree at run time.

// slots numbers the variables of one frame (the program's, or one user function's).
type slots struct {
	slot map[*VarDecl]int
	n    int
}

func newSlots() *slots { return &slots{slot: map[*VarDecl]int{}} }

func (s *slots) add(d *VarDecl) int {
	if i, ok := s.slot[d]; ok {
		return i
	}
	s.slot[d] = s.n
	s.n++
	return s.n - 1
}

func (c *compiler) unsupported(n Node, what string) error {
	return &Error{Pos: n.Position(), Msg: "unsupported construct: " + what}
}

// expr compiles e; a fixed expression that does work is folded (compile_fold.go).
func (c *compiler) expr(e Expr) (evalFn, error) {
	if c.fold && !c.inFold && !c.plain && worthFolding(e) && fixedExpr(e) {
		c.inFold = true
		fn, err := c.exprAsWritten(e)
		c.inFold = false
		if err != nil {
			return nil, err
		}
		c.folds++
		return fold(fn), nil
	}
	return c.exprAsWritten(e)
}

// exprAsWritten compiles e without folding it.
func (c *compiler) exprAsWritten(e Expr) (evalFn, error) {
	switch e := e.(type) {
	case *Paren:
		return c.expr(e.X)
	case *IntLit:
		// The literal's Ints are shared between evaluations: no caller writes into the Ints
		// of a value it did not copy (frame.set copies).
		v := Value{Type: TInt, Ints: []int{e.Value}}
		return func(f *frame) (Value, error) { return v, nil }, nil
	case *RealLit:
		x := e.Value
		return func(f *frame) (Value, error) { return Value{Type: TReal, Var: f.st.t.Const(x)}, nil }, nil
	case *StringLit:
		return func(f *frame) (Value, error) { return Value{}, nil }, nil
	case *Ident:
		if e.Fun != nil {
			name := e.Fun.Name
			return func(f *frame) (Value, error) { return Value{Type: Type{Base: Func}, Name: name}, nil }, nil
		}
		if e.Decl == nil {
			return nil, c.unsupported(e, "identifier "+e.Name+" without declaration")
		}
		i, ok := c.cur.slot[e.Decl]
		if !ok {
			return nil, c.unsupported(e, "variable "+e.Name+" not in slots of the compiler")
		}
		return func(f *frame) (Value, error) { return f.read(i), nil }, nil
	case *TargetExpr:
		return func(f *frame) (Value, error) { return Value{Type: TReal, Var: f.st.sumTarget()}, nil }, nil
	case *Call:
		return c.call(e)
	case *Binary:
		l, err := c.expr(e.L)
		if err != nil {
			return nil, err
		}
		r, err := c.expr(e.R)
		if err != nil {
			return nil, err
		}
		pos := e.Pos
		if e.Name == "logical_and" || e.Name == "logical_or" {
			and := e.Name == "logical_and"
			return func(f *frame) (Value, error) {
				a, err := l(f)
				if err != nil {
					return Value{}, err
				}
				if truth(f.st.t, a) != and {
					return Value{Type: TInt, Ints: []int{boolInt(!and)}}, nil
				}
				b, err := r(f)
				if err != nil {
					return Value{}, err
				}
				return Value{Type: TInt, Ints: []int{boolInt(truth(f.st.t, b))}}, nil
			}, nil
		}
		if e.Sig == nil || e.Sig.Fn == nil {
			return nil, c.unsupported(e, "operator "+e.Op+" ("+e.Name+") without implementation")
		}
		fn := e.Sig.Fn
		op := realArith(e, c.plain)
		if op != nil {
			// Real scalar arithmetic or a container and a scalar: the tape op directly (the
			// built-in's own computation, without its argument handling); a variable operand
			// is read from its cell directly.
			l, r = c.cellOperand(e.L, l), c.cellOperand(e.R, r)
		}
		return func(f *frame) (Value, error) {
			a, err := l(f)
			if err != nil {
				return Value{}, err
			}
			b, err := r(f)
			if err != nil {
				return Value{}, err
			}
			if op != nil && a.Type.Base != Int && b.Type.Base != Int {
				res := a
				if len(a.Dims) == 0 {
					res = b
				}
				return likeV(res, op(f.st.t, a.Var, b.Var)), nil
			}
			args := f.st.opArgs[:2]
			args[0], args[1] = a, b
			v, err := fn(f.ctx(pos), args)
			args[0], args[1] = Value{}, Value{}
			return v, withPos(pos, err)
		}, nil
	case *Unary:
		x, err := c.expr(e.X)
		if err != nil {
			return nil, err
		}
		if e.Name == "plus" || e.Op == "+" {
			return x, nil
		}
		if e.Sig == nil || e.Sig.Fn == nil {
			return nil, c.unsupported(e, "operator "+e.Op+" ("+e.Name+") without implementation")
		}
		fn, pos := e.Sig.Fn, e.Pos
		return func(f *frame) (Value, error) {
			a, err := x(f)
			if err != nil {
				return Value{}, err
			}
			args := f.st.opArgs[:1]
			args[0] = a
			v, err := fn(f.ctx(pos), args)
			args[0] = Value{}
			return v, withPos(pos, err)
		}, nil
	case *Ternary:
		cond, err := c.expr(e.Cond)
		if err != nil {
			return nil, err
		}
		th, err := c.expr(e.Then)
		if err != nil {
			return nil, err
		}
		el, err := c.expr(e.Else)
		if err != nil {
			return nil, err
		}
		ty := e.Type
		return func(f *frame) (Value, error) {
			cv, err := cond(f)
			if err != nil {
				return Value{}, err
			}
			var v Value
			if truth(f.st.t, cv) {
				v, err = th(f)
			} else {
				v, err = el(f)
			}
			if err != nil {
				return Value{}, err
			}
			return toReal(f.st.t, v, ty), nil
		}, nil
	case *IndexExpr:
		return c.index(e)
	case *ArrayExpr:
		return c.arrayExpr(e)
	case *RowVectorExpr:
		return c.rowVectorExpr(e)
	}
	return nil, c.unsupported(e, fmt.Sprintf("expression %T", e))
}

// realArith returns the tape op of a binary operator on real operands of which at least one
// is a scalar (so that no size check applies): what the operator's built-in (arith) records.
// nil for anything else, and when not optimising.
func realArith(e *Binary, plain bool) func(t *ad.Tape, a, b ad.Var) ad.Var {
	lt, rt := e.L.Info().Type, e.R.Info().Type
	if plain || lt.Base == Int || rt.Base == Int || lt.Array != 0 || rt.Array != 0 || !lt.IsScalar() && !rt.IsScalar() {
		return nil
	}
	switch e.Name {
	case "add":
		return (*ad.Tape).Add
	case "subtract":
		return (*ad.Tape).Sub
	case "multiply", "elt_multiply":
		return (*ad.Tape).Mul
	case "divide", "elt_divide":
		return (*ad.Tape).Div
	}
	return nil
}

// cellOperand is fn, or, when e is a real variable, a read of its cell without fn's general
// path (realVarSlot, frame.realVar).
func (c *compiler) cellOperand(e Expr, fn evalFn) evalFn {
	slot := c.realVarSlot(e)
	if slot < 0 {
		return fn
	}
	return func(f *frame) (Value, error) {
		x, dims := f.realVar(slot)
		return Value{Type: f.cells[slot].v.Type, Dims: dims, Var: x}, nil
	}
}

// truth is Stan's truth of a scalar condition (nonzero).
func truth(t *ad.Tape, v Value) bool {
	if v.Type.Base == Int {
		return v.Ints[0] != 0
	}
	return t.Float(v.Var) != 0
}

// ctx is the built-in context for a call at pos.
func (f *frame) ctx(pos Pos) *Ctx {
	st := f.st
	if st.cx == nil {
		st.cx = &Ctx{T: st.t, RNG: st.rng, Call: st.c.callByName(st)}
	}
	st.cx.Pos = pos
	return st.cx
}

// exprs compiles a list.
func (c *compiler) exprs(es []Expr) ([]evalFn, error) {
	out := make([]evalFn, len(es))
	for i, e := range es {
		fn, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = fn
	}
	return out, nil
}

func evalAll(f *frame, fns []evalFn) ([]Value, error) {
	vs := make([]Value, len(fns))
	for i, fn := range fns {
		v, err := fn(f)
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

// call compiles a built-in or user-function call.
func (c *compiler) call(e *Call) (evalFn, error) {
	args, err := c.exprs(e.Args)
	if err != nil {
		return nil, err
	}
	pos := e.Pos
	if e.Fun != nil {
		uf := c.userFunc(e.Fun)
		return func(f *frame) (Value, error) {
			vs, err := evalAll(f, args)
			if err != nil {
				return Value{}, err
			}
			v, err := uf.invoke(f.st, vs)
			return v, withPos(pos, err)
		}, nil
	}
	if e.Sig == nil || e.Sig.Fn == nil {
		return nil, c.unsupported(e, "function "+e.Name)
	}
	fn := e.Sig.Fn
	return func(f *frame) (Value, error) {
		// The arguments go on the evaluation's argument stack (as a sampling statement's do),
		// not in a fresh slice per call.
		st := f.st
		base := len(st.args)
		defer func() { st.args = st.args[:base] }()
		for _, a := range args {
			v, err := a(f)
			if err != nil {
				return Value{}, err
			}
			st.args = append(st.args, v)
		}
		// Capacity capped so that a callee appending to vs cannot write over a later push.
		vs := st.args[base:len(st.args):len(st.args)]
		v, err := fn(f.ctx(pos), vs)
		return v, withPos(pos, err)
	}, nil
}

// arrayExpr compiles { a, b, … }.
func (c *compiler) arrayExpr(e *ArrayExpr) (evalFn, error) {
	els, err := c.exprs(e.Elems)
	if err != nil {
		return nil, err
	}
	ty := e.Type
	return func(f *frame) (Value, error) {
		vs, err := evalAll(f, els)
		if err != nil {
			return Value{}, err
		}
		return stack(f.st.t, ty, vs)
	}, nil
}

// stack builds an array of type ty from its elements.
func stack(t *ad.Tape, ty Type, vs []Value) (Value, error) {
	inner := []int(nil)
	if len(vs) > 0 {
		inner = vs[0].Dims
	}
	dims := append([]int{len(vs)}, inner...)
	for _, v := range vs[1:] {
		if !dimsEqual(v.Dims, inner) {
			return Value{}, fmt.Errorf("array expression: elements of different sizes %v and %v", inner, v.Dims)
		}
	}
	if ty.Base == Int {
		var ks []int
		for _, v := range vs {
			ks = append(ks, v.Ints...)
		}
		if ks == nil {
			ks = []int{}
		}
		return Value{Type: ty, Dims: dims, Ints: ks}, nil
	}
	xs := make([]ad.Var, len(vs))
	for i, v := range vs {
		xs[i] = toReal(t, v, ty.Elem()).Var
	}
	if len(xs) == 0 {
		return Value{Type: ty, Dims: dims, Var: t.Const()}, nil
	}
	return Value{Type: ty, Dims: dims, Var: t.Concat(xs...)}, nil
}

// rowVectorExpr compiles [a, b, …]: a row vector of scalars or a matrix of row vectors.
func (c *compiler) rowVectorExpr(e *RowVectorExpr) (evalFn, error) {
	els, err := c.exprs(e.Elems)
	if err != nil {
		return nil, err
	}
	ty := e.Type
	return func(f *frame) (Value, error) {
		vs, err := evalAll(f, els)
		if err != nil {
			return Value{}, err
		}
		t := f.st.t
		xs := make([]ad.Var, len(vs))
		for i, v := range vs {
			xs[i] = toReal(t, v, Type{Base: Real}).Var
		}
		var x ad.Var
		if len(xs) == 0 {
			x = t.Const()
		} else {
			x = t.Concat(xs...)
		}
		if ty.Base == Matrix {
			cols := 0
			if len(vs) > 0 {
				cols = vs[0].Len()
			}
			return mkValue(t, ty, []int{len(vs), cols}, x), nil
		}
		return Value{Type: ty, Dims: []int{len(vs)}, Var: x}, nil
	}, nil
}

// ---------------------------------------------------------------------------------------------
// Indexing

// idxFn evaluates one index to its 0-based positions along a dimension of size n; single
// reports a single index (the dimension is dropped).
type idxFn func(f *frame, n int) (pos []int, single bool, err error)

func (c *compiler) indexFn(ix *Index) (idxFn, error) {
	var lo, hi evalFn
	var err error
	if ix.Lo != nil {
		if lo, err = c.expr(ix.Lo); err != nil {
			return nil, err
		}
	}
	if ix.Hi != nil {
		if hi, err = c.expr(ix.Hi); err != nil {
			return nil, err
		}
	}
	switch ix.Kind {
	case IndexSingle:
		return func(f *frame, n int) ([]int, bool, error) {
			v, err := lo(f)
			if err != nil {
				return nil, false, err
			}
			k := v.Ints[0]
			if k < 1 || k > n {
				return nil, false, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k, n)
			}
			return []int{k - 1}, true, nil
		}, nil
	case IndexMulti:
		return func(f *frame, n int) ([]int, bool, error) {
			v, err := lo(f)
			if err != nil {
				return nil, false, err
			}
			out := make([]int, len(v.Ints))
			for i, k := range v.Ints {
				if k < 1 || k > n {
					return nil, false, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k, n)
				}
				out[i] = k - 1
			}
			return out, false, nil
		}, nil
	}
	return func(f *frame, n int) ([]int, bool, error) {
		a, b := 1, n
		if lo != nil {
			v, err := lo(f)
			if err != nil {
				return nil, false, err
			}
			a = v.Ints[0]
		}
		if hi != nil {
			v, err := hi(f)
			if err != nil {
				return nil, false, err
			}
			b = v.Ints[0]
		}
		if b < a {
			return []int{}, false, nil
		}
		if a < 1 || b > n {
			return nil, false, fmt.Errorf("index range %d:%d out of range; expecting indices between 1 and %d", a, b, n)
		}
		out := make([]int, b-a+1)
		for i := range out {
			out[i] = a - 1 + i
		}
		return out, false, nil
	}, nil
}

// selection applies index groups (x[i, j][k]: groups [[i, j], [k]]) to dims: it returns the
// row-major flat positions selected and the dims of the result.
func selection(f *frame, dims []int, groups [][]idxFn) (flat []int, res []int, err error) {
	sel := make([][]int, len(dims))
	kept := make([]int, len(dims))
	for i := range kept {
		kept[i] = i
	}
	for _, g := range groups {
		if len(g) > len(kept) {
			return nil, nil, fmt.Errorf("too many indexes (%d) for a value with %d dimensions", len(g), len(kept))
		}
		var next []int
		for k, ix := range g {
			d := kept[k]
			n := dims[d]
			if sel[d] != nil {
				n = len(sel[d])
			}
			pos, single, err := ix(f, n)
			if err != nil {
				return nil, nil, err
			}
			if sel[d] != nil {
				for i, p := range pos {
					pos[i] = sel[d][p]
				}
			}
			sel[d] = pos
			if !single {
				next = append(next, d)
			}
		}
		kept = append(next, kept[len(g):]...)
	}
	// Result dims follow the kept dimensions in their original order.
	for _, d := range kept {
		if sel[d] != nil {
			res = append(res, len(sel[d]))
		} else {
			res = append(res, dims[d])
		}
	}
	// Cartesian product, row-major over dims.
	flat = []int{0}
	for d := range dims {
		var ps []int
		if sel[d] != nil {
			ps = sel[d]
		} else {
			ps = make([]int, dims[d])
			for i := range ps {
				ps[i] = i
			}
		}
		nf := make([]int, 0, len(flat)*len(ps))
		for _, b := range flat {
			for _, p := range ps {
				nf = append(nf, b*dims[d]+p)
			}
		}
		flat = nf
	}
	return flat, res, nil
}

// indexChain unwinds x[a][b] into the base expression and its index groups.
func (c *compiler) indexChain(e *IndexExpr) (Expr, [][]idxFn, error) {
	var groups [][]idxFn
	var x Expr = e
	for {
		ie, ok := x.(*IndexExpr)
		if !ok {
			break
		}
		g := make([]idxFn, len(ie.Indices))
		for i, ix := range ie.Indices {
			fn, err := c.indexFn(ix)
			if err != nil {
				return nil, nil, err
			}
			g[i] = fn
		}
		groups = append([][]idxFn{g}, groups...)
		x = ie.X
	}
	return x, groups, nil
}

// index compiles an indexing expression.
func (c *compiler) index(e *IndexExpr) (evalFn, error) {
	base, groups, err := c.indexChain(e)
	if err != nil {
		return nil, err
	}
	ty, pos := e.Type, e.Pos
	if fast, ok, err := c.singleIndex(e, base, ty, pos); ok || err != nil {
		return fast, err
	}
	// A variable read element by element avoids materialising it.
	if id, ok := base.(*Ident); ok && id.Decl != nil && id.Fun == nil {
		if slot, ok := c.cur.slot[id.Decl]; ok {
			return func(f *frame) (Value, error) {
				cl := &f.cells[slot]
				flat, res, err := selection(f, cl.v.Dims, groups)
				if err != nil {
					return Value{}, withPos(pos, err)
				}
				if len(res) == 0 && len(flat) == 1 {
					return f.elemRead(slot, flat[0], ty), nil
				}
				if cl.elems != nil && cl.stale && len(flat) < len(cl.elems) && ty.Base != Int {
					// Part of a container being written element by element: join just the
					// selected elements rather than materialise the whole.
					t := f.st.t
					xs := make([]ad.Var, len(flat))
					for i, j := range flat {
						xs[i] = cl.elems[j]
					}
					var x ad.Var
					if len(xs) == 0 {
						x = t.Const()
					} else {
						x = t.Concat(xs...)
					}
					return mkValue(t, ty, res, x), nil
				}
				return gather(f.st.t, f.read(slot), flat, res, ty), nil
			}, nil
		}
	}
	bx, err := c.expr(base)
	if err != nil {
		return nil, err
	}
	return func(f *frame) (Value, error) {
		v, err := bx(f)
		if err != nil {
			return Value{}, err
		}
		flat, res, err := selection(f, v.Dims, groups)
		if err != nil {
			return Value{}, withPos(pos, err)
		}
		return gather(f.st.t, v, flat, res, ty), nil
	}, nil
}

// gather returns the elements flat of v as a value of type ty and dims res.
func gather(t *ad.Tape, v Value, flat, res []int, ty Type) Value {
	if v.Type.Base == Int {
		ks := make([]int, len(flat))
		for i, j := range flat {
			ks[i] = v.Ints[j]
		}
		return Value{Type: ty, Dims: res, Ints: ks}
	}
	if len(flat) == 1 && len(res) == 0 {
		if t.Size(v.Var) == 1 {
			return Value{Type: ty, Var: v.Var}
		}
		return Value{Type: ty, Var: t.Index(v.Var, flat[0])}
	}
	contiguous := true
	for i := 1; i < len(flat); i++ {
		if flat[i] != flat[i-1]+1 {
			contiguous = false
			break
		}
	}
	var x ad.Var
	switch {
	case len(flat) == 0:
		x = t.Const()
	case contiguous && len(flat) == t.Size(v.Var):
		x = v.Var
	case contiguous:
		x = t.Slice(v.Var, flat[0], flat[len(flat)-1]+1)
	default:
		x = t.Gather(v.Var, flat)
	}
	return mkValue(t, ty, res, x)
}

// singleIndex compiles the common case of a chain of single int indexes (x[i], x[i, j],
// x[i][j]) without the general selection's allocations: the result is one contiguous block
// of the row-major value (a scalar, a row, an array element).
func (c *compiler) singleIndex(e *IndexExpr, base Expr, ty Type, pos Pos) (evalFn, bool, error) {
	var idx []evalFn
	var x Expr = e
	for {
		ie, ok := x.(*IndexExpr)
		if !ok {
			break
		}
		g := make([]evalFn, len(ie.Indices))
		for i, ix := range ie.Indices {
			if ix.Kind != IndexSingle {
				return nil, false, nil
			}
			fn, err := c.expr(ix.Lo)
			if err != nil {
				return nil, false, err
			}
			g[i] = fn
		}
		idx = append(g, idx...)
		x = ie.X
	}
	slot := -1
	var bx evalFn
	if id, ok := base.(*Ident); ok && id.Decl != nil && id.Fun == nil {
		if s, ok := c.cur.slot[id.Decl]; ok {
			slot = s
		}
	}
	if slot < 0 {
		var err error
		if bx, err = c.expr(base); err != nil {
			return nil, false, err
		}
	}
	return func(f *frame) (Value, error) {
		var v Value
		var cl *cell
		if slot >= 0 {
			cl = &f.cells[slot]
			v = cl.v
		} else {
			var err error
			if v, err = bx(f); err != nil {
				return Value{}, err
			}
		}
		dims := v.Dims
		if len(idx) > len(dims) {
			return Value{}, withPos(pos, fmt.Errorf("too many indexes (%d) for a value with %d dimensions", len(idx), len(dims)))
		}
		flat := 0
		for d, fn := range idx {
			iv, err := fn(f)
			if err != nil {
				return Value{}, err
			}
			k := iv.Ints[0]
			if k < 1 || k > dims[d] {
				return Value{}, withPos(pos, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k, dims[d]))
			}
			flat = flat*dims[d] + k - 1
		}
		rest := dims[len(idx):]
		blk := prod(rest)
		if len(rest) == 0 {
			if cl != nil {
				return f.elemRead(slot, flat, ty), nil
			}
			return gather(f.st.t, v, []int{flat}, nil, ty), nil
		}
		lo := flat * blk
		if v.Type.Base == Int {
			return Value{Type: ty, Dims: rest, Ints: append([]int(nil), v.Ints[lo:lo+blk]...)}, nil
		}
		t := f.st.t
		if cl != nil && cl.elems != nil && cl.stale {
			xs := cl.elems[lo : lo+blk]
			var x ad.Var
			switch len(xs) {
			case 0:
				x = t.Const()
			case 1:
				x = xs[0]
			default:
				x = t.Concat(xs...)
			}
			return mkValue(t, ty, rest, x), nil
		}
		if blk == t.Size(v.Var) {
			return mkValue(t, ty, rest, v.Var), nil
		}
		return mkValue(t, ty, rest, t.Slice(v.Var, lo, lo+blk)), nil
	}, true, nil
}
