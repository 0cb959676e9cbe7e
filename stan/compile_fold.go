package stan

import (
	"strings"
	"sync"
)

// Data-only work done once: expressions whose value is fixed for the whole run (they read only
// literals and data or transformed data variables) are evaluated at their first evaluation and
// then enter every evaluation as a constant node over the cached values; and an evaluation's
// frame holds constant nodes only for the data variables the parameter-dependent blocks read.

// fixedExpr reports whether e's value is the same in every evaluation of the transformed
// parameters, model and generated quantities blocks: literals, data and transformed data
// variables, and built-in operators and functions of them (no _rng, no user function, no
// target(), no local or loop variable, no function argument).
func fixedExpr(e Expr) bool {
	switch e := e.(type) {
	case *IntLit, *RealLit:
		return true
	case *Paren:
		return fixedExpr(e.X)
	case *Ident:
		d := e.Decl
		return e.Fun == nil && d != nil && d.Kind == GlobalVar && (d.Block == DataBlock || d.Block == TransformedDataBlock)
	case *Unary:
		return (e.Name == "plus" || e.Op == "+" || e.Sig != nil && e.Sig.Fn != nil) && fixedExpr(e.X)
	case *Binary:
		return e.Sig != nil && e.Sig.Fn != nil && fixedExpr(e.L) && fixedExpr(e.R)
	case *Ternary:
		return fixedExpr(e.Cond) && fixedExpr(e.Then) && fixedExpr(e.Else)
	case *IndexExpr:
		if !fixedExpr(e.X) {
			return false
		}
		for _, ix := range e.Indices {
			if ix.Lo != nil && !fixedExpr(ix.Lo) || ix.Hi != nil && !fixedExpr(ix.Hi) {
				return false
			}
		}
		return true
	case *Call:
		if e.Fun != nil || e.Sig == nil || e.Sig.Fn == nil || strings.HasSuffix(e.Name, "_rng") || strings.HasSuffix(e.Name, "_lp") {
			return false
		}
		for _, a := range e.Args {
			if !fixedExpr(a) {
				return false
			}
		}
		return true
	case *ArrayExpr:
		return allFixed(e.Elems)
	case *RowVectorExpr:
		return allFixed(e.Elems)
	}
	return false
}

func allFixed(es []Expr) bool {
	for _, e := range es {
		if !fixedExpr(e) {
			return false
		}
	}
	return true
}

// worthFolding reports a fixed expression that does work per evaluation (a call, an operator,
// an index); a literal or a variable read costs no more than the cached constant.
func worthFolding(e Expr) bool {
	switch e := e.(type) {
	case *Paren:
		return worthFolding(e.X)
	case *IntLit, *RealLit, *Ident:
		return false
	case *Unary:
		// -1, -x: one node either way.
		_, lit := e.X.(*IntLit)
		_, rlit := e.X.(*RealLit)
		return !lit && !rlit
	}
	return true
}

// foldCache holds a fixed expression's value after its first successful evaluation.
type foldCache struct {
	mu   sync.Mutex
	done bool
	v    Value     // Type and Dims (and Ints for an int value)
	x    []float64 // the real values, row-major
}

// fold wraps fn, the compiled fixed expression e: the first evaluation that succeeds stores
// the value, and later evaluations return a constant node over it (no copy) or the stored ints
// (shared: no caller writes into Ints it did not copy). An evaluation that fails is not
// stored, so each evaluation reports the error, as the expression as written would. The
// constant has the value the expression computes, so results are unchanged.
func fold(fn evalFn) evalFn {
	fc := &foldCache{}
	return func(f *frame) (Value, error) {
		fc.mu.Lock()
		done, v, x := fc.done, fc.v, fc.x
		fc.mu.Unlock()
		t := f.st.t
		if done {
			if v.Type.Base == Int || v.Type.Base == Void || v.Type.Base == Func {
				return v, nil
			}
			return mkValue(t, v.Type, v.Dims, t.ConstRef(x)), nil
		}
		r, err := fn(f)
		if err != nil {
			return r, err
		}
		c := Value{Type: r.Type, Dims: append([]int(nil), r.Dims...), Name: r.Name}
		var xs []float64
		switch r.Type.Base {
		case Int:
			c.Ints = append([]int(nil), r.Ints...)
		case Void, Func:
		default:
			xs = append([]float64(nil), t.Value(r.Var)...)
		}
		fc.mu.Lock()
		fc.done, fc.v, fc.x = true, c, xs
		fc.mu.Unlock()
		return r, nil
	}
}

// liveData returns the data and transformed data declarations that the transformed
// parameters, model and generated quantities blocks mention (in any expression, declaration
// size or bound), except through the identifiers in skip (a fused GLM's design columns, which
// it reads from the compiled data, putting them in the frame only before it runs the
// statement as written): the ones an evaluation's frame must hold.
func liveData(p *Program, skip map[*Ident]bool) map[*VarDecl]bool {
	live := map[*VarDecl]bool{}
	mark := func(id *Ident) {
		if id.Decl != nil && !skip[id] {
			live[id.Decl] = true
		}
	}
	expr := func(e Expr) { walkIdents(e, mark) }
	var stmt func(s Stmt)
	exprs := func(es []Expr) {
		for _, e := range es {
			expr(e)
		}
	}
	decl := func(d *VarDecl) {
		exprs(d.Dims)
		exprs(d.Sizes)
		exprs([]Expr{d.Cons.Lower, d.Cons.Upper, d.Cons.Offset, d.Cons.Multiplier, d.Init})
	}
	stmt = func(s Stmt) {
		switch s := s.(type) {
		case *VarDecl:
			decl(s)
		case *Assign:
			expr(s.LHS)
			expr(s.RHS)
		case *Tilde:
			expr(s.LHS)
			exprs(s.Args)
			if s.Trunc != nil {
				expr(s.Trunc.Lo)
				expr(s.Trunc.Hi)
			}
		case *TargetPlus:
			expr(s.Expr)
		case *For:
			expr(s.Lo)
			expr(s.Hi)
			stmt(s.Body)
		case *ForEach:
			expr(s.Over)
			stmt(s.Body)
		case *While:
			expr(s.Cond)
			stmt(s.Body)
		case *If:
			expr(s.Cond)
			stmt(s.Then)
			if s.Else != nil {
				stmt(s.Else)
			}
		case *Return:
			expr(s.Value)
		case *BlockStmt:
			for _, x := range s.Stmts {
				stmt(x)
			}
		case *Print:
			exprs(s.Args)
		case *ExprStmt:
			expr(s.Call)
		}
	}
	for _, b := range []*Block{p.Parameters, p.TransformedParameters, p.Model, p.GeneratedQuantities} {
		if b == nil {
			continue
		}
		for _, s := range b.Stmts {
			stmt(s)
		}
	}
	return live
}

// walkIdents calls fn on every identifier in e.
func walkIdents(e Expr, fn func(*Ident)) {
	switch e := e.(type) {
	case nil:
	case *Ident:
		fn(e)
	case *Paren:
		walkIdents(e.X, fn)
	case *Unary:
		walkIdents(e.X, fn)
	case *Binary:
		walkIdents(e.L, fn)
		walkIdents(e.R, fn)
	case *Ternary:
		walkIdents(e.Cond, fn)
		walkIdents(e.Then, fn)
		walkIdents(e.Else, fn)
	case *IndexExpr:
		walkIdents(e.X, fn)
		for _, ix := range e.Indices {
			walkIdents(ix.Lo, fn)
			walkIdents(ix.Hi, fn)
		}
	case *Call:
		for _, a := range e.Args {
			walkIdents(a, fn)
		}
	case *ArrayExpr:
		for _, a := range e.Elems {
			walkIdents(a, fn)
		}
	case *RowVectorExpr:
		for _, a := range e.Elems {
			walkIdents(a, fn)
		}
	}
}

// mentions reports whether e reads the variable d.
func mentions(e Expr, d *VarDecl) bool {
	found := false
	walkIdents(e, func(id *Ident) { found = found || id.Decl == d })
	return found
}
