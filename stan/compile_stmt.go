package stan

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
)

// Compiling statements into closures.

var errReject = errors.New("reject")

func (c *compiler) stmts(ss []Stmt) (execFn, error) {
	fns := make([]execFn, 0, len(ss))
	for i := 0; i < len(ss); i++ {
		s := ss[i]
		if i+1 < len(ss) {
			if fn, ok, err := c.declAssign(s, ss[i+1]); err != nil {
				return nil, err
			} else if ok {
				fns = append(fns, fn)
				i++
				continue
			}
		}
		fn, err := c.stmt(s)
		if err != nil {
			return nil, err
		}
		if fn != nil {
			fns = append(fns, fn)
		}
	}
	return func(f *frame) (ctl, error) {
		for _, fn := range fns {
			k, err := fn(f)
			if err != nil || k != ctlNext {
				return k, err
			}
		}
		return ctlNext, nil
	}, nil
}

// declAssign compiles a real declaration without initial value followed by an assignment of
// the whole variable (vector[N] mu; mu = a + b * x;) as one statement that does not fill the
// variable with NaN first; the assignment's size check and error are kept. ok is false when
// the pair is not of that form (or not optimising).
func (c *compiler) declAssign(s1, s2 Stmt) (fn execFn, ok bool, err error) {
	d, isDecl := s1.(*VarDecl)
	a, isAssign := s2.(*Assign)
	if c.plain || !isDecl || !isAssign || d.Init != nil || d.Type.Base == Int || a.Op != "=" {
		return nil, false, nil
	}
	if id, isID := a.LHS.(*Ident); !isID || id.Decl != d || mentions(a.RHS, d) {
		return nil, false, nil
	}
	slot := c.cur.add(d)
	dims, err := c.declDims(d)
	if err != nil {
		return nil, false, err
	}
	rhs, err := c.expr(a.RHS)
	if err != nil {
		return nil, false, err
	}
	ty, lty, dpos, apos := d.Type, a.LHS.Info().Type, d.Pos, a.Pos
	c.declAssigns++
	return func(f *frame) (ctl, error) {
		ds, err := dims(f)
		if err != nil {
			return ctlNext, withPos(dpos, err)
		}
		v, err := rhs(f)
		if err != nil {
			return ctlNext, err
		}
		v = toReal(f.st.t, v, lty)
		if v.Len() != prod(ds) || len(v.Dims) != len(ds) {
			return ctlNext, withPos(apos, fmt.Errorf("assignment to %s: size mismatch (%v := %v)", d.Name, ds, v.Dims))
		}
		v.Dims, v.Type = ds, ty
		f.set(slot, v)
		return ctlNext, nil
	}, true, nil
}

// declDims compiles the sizes of a declaration: array sizes then container sizes.
func (c *compiler) declDims(d *VarDecl) (func(f *frame) ([]int, error), error) {
	var fns []evalFn
	for _, e := range d.Dims {
		fn, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		fns = append(fns, fn)
	}
	var sz []evalFn
	for _, e := range d.Sizes {
		fn, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		sz = append(sz, fn)
	}
	square := d.Type.Base == Matrix && len(d.Sizes) == 1
	all := append(fns, sz...)
	if c.fold && !c.plain && allFixed(d.Dims) && allFixed(d.Sizes) {
		// Sizes of data only: the same every evaluation, computed once (the slice is shared:
		// no value writes into its Dims).
		var once sync.Mutex
		var fixed []int
		sizes := c.sizesFn(d, all, square)
		return func(f *frame) ([]int, error) {
			once.Lock()
			ds := fixed
			once.Unlock()
			if ds != nil {
				return ds, nil
			}
			ds, err := sizes(f)
			if err == nil {
				once.Lock()
				fixed = ds
				once.Unlock()
			}
			return ds, err
		}, nil
	}
	return c.sizesFn(d, all, square), nil
}

// sizesFn evaluates a declaration's sizes (array sizes, then container sizes; a square matrix
// repeats its one size).
func (c *compiler) sizesFn(d *VarDecl, all []evalFn, square bool) func(f *frame) ([]int, error) {
	return func(f *frame) ([]int, error) {
		out := make([]int, 0, len(all)+1)
		for _, fn := range all {
			v, err := fn(f)
			if err != nil {
				return nil, err
			}
			if v.Type.Base != Int || len(v.Ints) != 1 {
				return nil, fmt.Errorf("size of %s is not an int", d.Name)
			}
			if v.Ints[0] < 0 {
				return nil, fmt.Errorf("%s: size %d, want >= 0", d.Name, v.Ints[0])
			}
			out = append(out, v.Ints[0])
		}
		if square {
			out = append(out, out[len(out)-1])
		}
		return out, nil
	}
}

func (c *compiler) stmt(s Stmt) (execFn, error) {
	switch s := s.(type) {
	case *VarDecl:
		return c.localDecl(s)
	case *Assign:
		return c.assign(s)
	case *Tilde:
		fn, err := c.tilde(s)
		if err != nil || s.Trunc != nil || s.Fun != nil {
			return fn, err
		}
		if glm, err := c.fusedGLM(s.Pos, s.Dist, s.LHS, s.Args, fn); err != nil || glm != nil {
			return glm, err
		}
		if fam := contFamilyOf(s.Sig, s.FullName); fam != nil {
			if st, err := c.contStmt(s.Pos, fam, s.LHS, s.Args); err != nil || st != nil {
				return st, err
			}
		}
		return fn, nil
	case *TargetPlus:
		x, err := c.expr(s.Expr)
		if err != nil {
			return nil, err
		}
		fn := func(f *frame) (ctl, error) {
			v, err := x(f)
			if err != nil {
				return ctlNext, err
			}
			f.st.addTarget(v)
			return ctlNext, nil
		}
		e := s.Expr
		for {
			p, ok := e.(*Paren)
			if !ok {
				break
			}
			e = p.X
		}
		if call, ok := e.(*Call); ok && call.Fun == nil && len(call.Args) >= 2 {
			dist := call.Name
			for _, suf := range []string{"_lpdf", "_lupdf", "_lpmf", "_lupmf"} {
				dist = strings.TrimSuffix(dist, suf)
			}
			if dist != call.Name {
				if glm, err := c.fusedGLM(call.Pos, dist, call.Args[0], call.Args[1:], fn); err != nil || glm != nil {
					return glm, err
				}
				if fam := contFamilyOf(call.Sig, call.Name); fam != nil {
					if st, err := c.contStmt(call.Pos, fam, call.Args[0], call.Args[1:]); err != nil || st != nil {
						return st, err
					}
				}
			}
		}
		return fn, nil
	case *BlockStmt:
		return c.stmts(s.Stmts)
	case *For:
		return c.forLoop(s)
	case *ForEach:
		return c.forEach(s)
	case *While:
		cond, err := c.expr(s.Cond)
		if err != nil {
			return nil, err
		}
		body, err := c.stmt(s.Body)
		if err != nil {
			return nil, err
		}
		return func(f *frame) (ctl, error) {
			for {
				cv, err := cond(f)
				if err != nil {
					return ctlNext, err
				}
				if !truth(f.st.t, cv) {
					return ctlNext, nil
				}
				k, err := body(f)
				if err != nil || k == ctlReturn {
					return k, err
				}
				if k == ctlBreak {
					return ctlNext, nil
				}
			}
		}, nil
	case *If:
		cond, err := c.expr(s.Cond)
		if err != nil {
			return nil, err
		}
		th, err := c.stmt(s.Then)
		if err != nil {
			return nil, err
		}
		var el execFn
		if s.Else != nil {
			if el, err = c.stmt(s.Else); err != nil {
				return nil, err
			}
		}
		return func(f *frame) (ctl, error) {
			cv, err := cond(f)
			if err != nil {
				return ctlNext, err
			}
			if truth(f.st.t, cv) {
				return th(f)
			}
			if el != nil {
				return el(f)
			}
			return ctlNext, nil
		}, nil
	case *Break:
		return func(*frame) (ctl, error) { return ctlBreak, nil }, nil
	case *Continue:
		return func(*frame) (ctl, error) { return ctlContinue, nil }, nil
	case *Return:
		if s.Value == nil {
			return func(*frame) (ctl, error) { return ctlReturn, nil }, nil
		}
		x, err := c.expr(s.Value)
		if err != nil {
			return nil, err
		}
		ret := c.retType
		return func(f *frame) (ctl, error) {
			v, err := x(f)
			if err != nil {
				return ctlNext, err
			}
			f.ret = toReal(f.st.t, v, ret)
			return ctlReturn, nil
		}, nil
	case *Print:
		if s.Kind == PrintStmt {
			return nil, nil
		}
		args, err := c.exprs(s.Args)
		if err != nil {
			return nil, err
		}
		lits := make([]string, len(s.Args))
		for i, a := range s.Args {
			if sl, ok := a.(*StringLit); ok {
				lits[i] = sl.Value
			}
		}
		pos := s.Pos
		return func(f *frame) (ctl, error) {
			var b strings.Builder
			for i, a := range args {
				if lits[i] != "" {
					b.WriteString(lits[i])
					continue
				}
				v, err := a(f)
				if err != nil {
					return ctlNext, err
				}
				b.WriteString(formatValue(f.st.t, v))
			}
			return ctlNext, withPos(pos, fmt.Errorf("%w: %s", errReject, b.String()))
		}, nil
	case *ExprStmt:
		x, err := c.call(s.Call)
		if err != nil {
			return nil, err
		}
		return func(f *frame) (ctl, error) {
			_, err := x(f)
			return ctlNext, err
		}, nil
	}
	return nil, c.unsupported(s, fmt.Sprintf("statement %T", s))
}

func formatValue(t *ad.Tape, v Value) string {
	if v.Type.Base == Int {
		if len(v.Ints) == 1 && len(v.Dims) == 0 {
			return fmt.Sprint(v.Ints[0])
		}
		return fmt.Sprint(v.Ints)
	}
	if v.Type.Base == Void || v.Type.Base == Func {
		return ""
	}
	xs := t.Value(v.Var)
	if len(xs) == 1 && len(v.Dims) == 0 {
		return fmt.Sprint(xs[0])
	}
	return fmt.Sprint(xs)
}

// localDecl compiles a declaration inside a block: a fresh NaN-filled value or the initial
// value. Global declarations of transformed parameters and generated quantities come here
// too; their constraints are checked at the end of their block (see checkDecls).
func (c *compiler) localDecl(d *VarDecl) (execFn, error) {
	slot := c.cur.add(d)
	dims, err := c.declDims(d)
	if err != nil {
		return nil, err
	}
	var init evalFn
	if d.Init != nil {
		if init, err = c.expr(d.Init); err != nil {
			return nil, err
		}
	}
	ty, pos := d.Type, d.Pos
	return func(f *frame) (ctl, error) {
		ds, err := dims(f)
		if err != nil {
			return ctlNext, withPos(pos, err)
		}
		if init == nil {
			old := &f.cells[slot]
			spare := old.elems
			if spare == nil {
				spare = old.spare
			}
			f.cells[slot] = cell{v: f.st.fill(ty, ds), fresh: true, spare: spare}
			return ctlNext, nil
		}
		v, err := init(f)
		if err != nil {
			return ctlNext, err
		}
		if v.Len() != prod(ds) {
			return ctlNext, withPos(pos, fmt.Errorf("%s: declared with %d elements, initialised with %d", d.Name, prod(ds), v.Len()))
		}
		v = toReal(f.st.t, v, ty)
		v.Dims = ds
		f.set(slot, v)
		return ctlNext, nil
	}, nil
}

func prod(ds []int) int {
	n := 1
	for _, d := range ds {
		n *= d
	}
	return n
}

// assign compiles x = e, x[i] = e and the compound assignments.
func (c *compiler) assign(s *Assign) (execFn, error) {
	rhs, err := c.expr(s.RHS)
	if err != nil {
		return nil, err
	}
	var base Expr = s.LHS
	var groups [][]idxFn
	var single []evalFn // all indexes single: the fast path
	if ie, ok := s.LHS.(*IndexExpr); ok {
		if base, groups, err = c.indexChain(ie); err != nil {
			return nil, err
		}
		single = []evalFn{}
		for x := Expr(ie); ; {
			e, ok := x.(*IndexExpr)
			if !ok {
				break
			}
			var g []evalFn
			for _, ix := range e.Indices {
				if ix.Kind != IndexSingle {
					single = nil
					break
				}
				fn, err := c.expr(ix.Lo)
				if err != nil {
					return nil, err
				}
				g = append(g, fn)
			}
			if single == nil {
				break
			}
			single = append(g, single...)
			x = e.X
		}
	}
	id, ok := base.(*Ident)
	if !ok || id.Decl == nil {
		return nil, c.unsupported(s, "assignment to an expression that is not a variable")
	}
	slot, ok := c.cur.slot[id.Decl]
	if !ok {
		return nil, c.unsupported(s, "assignment to "+id.Name+" outside the compiler's slots")
	}
	var op Impl
	if s.Op != "=" {
		if s.Sig == nil || s.Sig.Fn == nil {
			return nil, c.unsupported(s, "compound assignment "+s.Op)
		}
		op = s.Sig.Fn
	}
	var cur evalFn
	if op != nil {
		if cur, err = c.expr(s.LHS); err != nil {
			return nil, err
		}
	}
	lty, pos := s.LHS.Info().Type, s.Pos
	return func(f *frame) (ctl, error) {
		v, err := rhs(f)
		if err != nil {
			return ctlNext, err
		}
		if op != nil {
			old, err := cur(f)
			if err != nil {
				return ctlNext, err
			}
			if v, err = op(f.ctx(pos), []Value{old, v}); err != nil {
				return ctlNext, withPos(pos, err)
			}
		}
		v = toReal(f.st.t, v, lty)
		cl := &f.cells[slot]
		if groups == nil {
			if v.Len() != cl.v.Len() || len(v.Dims) != len(cl.v.Dims) {
				return ctlNext, withPos(pos, fmt.Errorf("assignment to %s: size mismatch (%v := %v)", id.Name, cl.v.Dims, v.Dims))
			}
			v.Dims = cl.v.Dims
			v.Type = cl.v.Type
			f.set(slot, v)
			return ctlNext, nil
		}
		if single != nil && len(single) <= len(cl.v.Dims) {
			dims, k := cl.v.Dims, 0
			for d, fn := range single {
				iv, err := fn(f)
				if err != nil {
					return ctlNext, err
				}
				i := iv.Ints[0]
				if i < 1 || i > dims[d] {
					return ctlNext, withPos(pos, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", i, dims[d]))
				}
				k = k*dims[d] + i - 1
			}
			blk := prod(dims[len(single):])
			var one [1]int
			flat := one[:0]
			if blk != 1 {
				flat = make([]int, 0, blk)
			}
			for j := 0; j < blk; j++ {
				flat = append(flat, k*blk+j)
			}
			return ctlNext, withPos(pos, f.writeElems(slot, flat, v))
		}
		flat, _, err := selection(f, cl.v.Dims, groups)
		if err != nil {
			return ctlNext, withPos(pos, err)
		}
		return ctlNext, withPos(pos, f.writeElems(slot, flat, v))
	}, nil
}

// tilde compiles y ~ dist(args) [T[lo, hi]]: target += dist_lupdf(y | args), with the
// truncation's normalisation.
func (c *compiler) tilde(s *Tilde) (execFn, error) {
	y, err := c.expr(s.LHS)
	if err != nil {
		return nil, err
	}
	args, err := c.exprs(s.Args)
	if err != nil {
		return nil, err
	}
	var dist func(f *frame, vs []Value) (Value, error)
	pos := s.Pos
	switch {
	case s.Fun != nil:
		uf := c.userFunc(s.Fun)
		dist = func(f *frame, vs []Value) (Value, error) { return uf.invoke(f.st, vs) }
	case s.Sig != nil && s.Sig.Fn != nil:
		fn := s.Sig.Fn
		dist = func(f *frame, vs []Value) (Value, error) { return fn(f.ctx(pos), vs) }
	default:
		return nil, c.unsupported(s, "distribution "+s.Dist)
	}
	var lo, hi evalFn
	var lcdf, lccdf func(f *frame, vs []Value) (Value, error)
	discrete := strings.HasSuffix(s.FullName, "pmf")
	if tr := s.Trunc; tr != nil {
		if tr.Lo != nil {
			if lo, err = c.expr(tr.Lo); err != nil {
				return nil, err
			}
		}
		if tr.Hi != nil {
			if hi, err = c.expr(tr.Hi); err != nil {
				return nil, err
			}
		}
		mk := func(sig *Sig, fun *FunDef, what string) (func(f *frame, vs []Value) (Value, error), error) {
			switch {
			case fun != nil:
				uf := c.userFunc(fun)
				return func(f *frame, vs []Value) (Value, error) { return uf.invoke(f.st, vs) }, nil
			case sig != nil && sig.Fn != nil:
				fn := sig.Fn
				return func(f *frame, vs []Value) (Value, error) { return fn(f.ctx(pos), vs) }, nil
			}
			return nil, c.unsupported(s, "truncation without "+s.Dist+what)
		}
		if hi != nil {
			if lcdf, err = mk(tr.LCDF, tr.LCDFFun, "_lcdf"); err != nil {
				return nil, err
			}
		}
		if lo != nil && hi == nil {
			if lccdf, err = mk(tr.LCCDF, tr.LCCDFFun, "_lccdf"); err != nil {
				return nil, err
			}
		}
	}
	return func(f *frame) (ctl, error) {
		st := f.st
		base := len(st.args)
		defer func() { st.args = st.args[:base] }()
		yv, err := y(f)
		if err != nil {
			return ctlNext, err
		}
		st.args = append(st.args, yv)
		for _, a := range args {
			v, err := a(f)
			if err != nil {
				return ctlNext, err
			}
			st.args = append(st.args, v)
		}
		// Sliced after every argument is evaluated (a nested push may have moved the stack);
		// capacity capped so that a callee appending to vs cannot write over a later push.
		vs := st.args[base:len(st.args):len(st.args)]
		lp, err := dist(f, vs)
		if err != nil {
			return ctlNext, withPos(pos, err)
		}
		st.addTarget(lp)
		if lo == nil && hi == nil {
			return ctlNext, nil
		}
		return ctlNext, withPos(pos, c.truncate(f, yv, vs, lo, hi, lcdf, lccdf, discrete))
	}, nil
}

// truncate adds the normalisation of T[lo, hi] to target (Stan 2.21's generated code: −∞
// outside [lo, hi]; −log(F(hi) − F(lo)) with both bounds, −log(1 − F(lo)) with lo only,
// −log F(hi) with hi only; for a pmf the lower bound enters as lo − 1).
func (c *compiler) truncate(f *frame, yv Value, vs []Value, lo, hi evalFn, lcdf, lccdf func(*frame, []Value) (Value, error), discrete bool) error {
	t := f.st.t
	scal := func(v Value) float64 {
		if v.Type.Base == Int {
			return float64(v.Ints[0])
		}
		return t.Float(v.Var)
	}
	if len(yv.Dims) != 0 {
		return errors.New("truncation of a non-scalar variate")
	}
	y := scal(yv)
	var lov, hiv Value
	var err error
	if lo != nil {
		if lov, err = lo(f); err != nil {
			return err
		}
		if y < scal(lov) {
			f.st.target = append(f.st.target, t.Const(math.Inf(-1)))
			return nil
		}
		if discrete {
			lov = Value{Type: TInt, Ints: []int{lov.Ints[0] - 1}}
		}
	}
	if hi != nil {
		if hiv, err = hi(f); err != nil {
			return err
		}
		if y > scal(hiv) {
			f.st.target = append(f.st.target, t.Const(math.Inf(-1)))
			return nil
		}
	}
	call := func(fn func(*frame, []Value) (Value, error), b Value) (ad.Var, error) {
		args := append([]Value{b}, vs[1:]...)
		v, err := fn(f, args)
		if err != nil {
			return ad.Var{}, err
		}
		return v.Var, nil
	}
	switch {
	case lo != nil && hi != nil:
		a, err := call(lcdf, hiv)
		if err != nil {
			return err
		}
		b, err := call(lcdf, lov)
		if err != nil {
			return err
		}
		// log(e^a − e^b) = a + log(−expm1(b − a))
		lde := t.Add(a, t.Log(t.Neg(t.Expm1(t.Sub(b, a)))))
		f.st.target = append(f.st.target, t.Neg(lde))
	case lo != nil:
		a, err := call(lccdf, lov)
		if err != nil {
			return err
		}
		f.st.target = append(f.st.target, t.Neg(a))
	default:
		a, err := call(lcdf, hiv)
		if err != nil {
			return err
		}
		f.st.target = append(f.st.target, t.Neg(a))
	}
	return nil
}

func (c *compiler) forLoop(s *For) (execFn, error) {
	if !c.plain {
		// A loop with an inner loop runs as a scalar kernel when it can (lanes would gather
		// per inner iteration); a flat loop runs in lanes when it can (one vector node per
		// operation); each falls back on the other.
		lanesFirst := !hasInnerLoop(s.Body)
		for _, lanes := range []bool{lanesFirst, !lanesFirst} {
			if lanes {
				if fn, err := c.laneLoop(s); err == nil {
					c.lanes++
					return fn, nil
				}
			} else if fn, err := c.scalarLoop(s); err == nil {
				return fn, nil
			}
		}
	}
	// Not a loop of independent iterations (or a construct the lane compiler does not
	// handle): the ordinary loop, which reports any real compile error.
	bounds, err := c.loopRange(s)
	if err != nil {
		return nil, err
	}
	slot := c.cur.add(s.Var)
	body, err := c.stmt(s.Body)
	if err != nil {
		return nil, err
	}
	return func(f *frame) (ctl, error) {
		lo, hi, err := bounds(f)
		if err != nil || hi < lo {
			return ctlNext, err
		}
		// The loop variable's values share backing arrays of up to 4096 ints (one allocation
		// per 4096 iterations rather than one per iteration).
		var ks []int
		for i := lo; i <= hi; i++ {
			if len(ks) == 0 {
				ks = make([]int, min(4096, hi-i+1))
			}
			ks[0] = i
			f.cells[slot] = cell{v: Value{Type: TInt, Ints: ks[0:1:1]}}
			ks = ks[1:]
			k, err := body(f)
			if err != nil || k == ctlReturn {
				return k, err
			}
			if k == ctlBreak {
				break
			}
		}
		return ctlNext, nil
	}, nil
}

// loopRange compiles a for loop's bounds into a function evaluating them (hi < lo: no
// iteration).
func (c *compiler) loopRange(s *For) (func(f *frame) (lo, hi int, err error), error) {
	lo, err := c.expr(s.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := c.expr(s.Hi)
	if err != nil {
		return nil, err
	}
	return func(f *frame) (int, int, error) {
		a, err := lo(f)
		if err != nil {
			return 0, -1, err
		}
		b, err := hi(f)
		if err != nil {
			return 0, -1, err
		}
		return a.Ints[0], b.Ints[0], nil
	}, nil
}

func (c *compiler) forEach(s *ForEach) (execFn, error) {
	over, err := c.expr(s.Over)
	if err != nil {
		return nil, err
	}
	slot := c.cur.add(s.Var)
	body, err := c.stmt(s.Body)
	if err != nil {
		return nil, err
	}
	oty := s.Over.Info().Type
	vty := s.Var.Type
	return func(f *frame) (ctl, error) {
		v, err := over(f)
		if err != nil {
			return ctlNext, err
		}
		t := f.st.t
		var items []Value
		switch {
		case oty.Array > 0:
			n := 0
			if len(v.Dims) > 0 {
				n = v.Dims[0]
			}
			inner := v.Dims[1:]
			es := prod(inner)
			for i := 0; i < n; i++ {
				flat := make([]int, es)
				for j := range flat {
					flat[j] = i*es + j
				}
				items = append(items, gather(t, v, flat, inner, oty.Elem()))
			}
		default:
			// Scalars of a vector, row vector or matrix, column-major for a matrix.
			n := v.Len()
			rows, cols := n, 1
			if len(v.Dims) == 2 {
				rows, cols = v.Dims[0], v.Dims[1]
			}
			for cc := 0; cc < cols; cc++ {
				for r := 0; r < rows; r++ {
					items = append(items, gather(t, v, []int{r*cols + cc}, nil, TReal))
				}
			}
		}
		for _, it := range items {
			it = toReal(t, it, vty)
			f.cells[slot] = cell{v: it}
			k, err := body(f)
			if err != nil || k == ctlReturn {
				return k, err
			}
			if k == ctlBreak {
				break
			}
		}
		return ctlNext, nil
	}, nil
}
