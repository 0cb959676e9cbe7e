package stan

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
)

// Loops whose iterations are independent, compiled as vector statements ("lanes").
//
// A Stan loop such as
//
//	for (n in 1:N) y[n] ~ normal(alpha + beta * x[n], sigma);
//
// evaluates its body N times on scalars: one tape node per scalar operation and the closures'
// overhead per iteration. When no iteration can see another's effects, the compiler instead
// runs the body once with every iteration as one lane of a vector: the loop variable is the
// int array lo, …, hi; a scalar local declared in the body is a vector with one element per
// iteration; x[n] is a gather; scalar arithmetic and the element-wise math functions are
// vector arithmetic; a sampling statement, or target += of a density, is the vectorised
// density over all lanes, whose value is the sum the loop would have added; mu[n] = e writes
// the lanes into mu. An inner loop with bounds that do not depend on the lanes runs as a loop
// over lane statements (arK's `for (k in 1:K) m += beta[k] * y[t - k]`). The cost of the loop
// becomes a few vector nodes per statement instead of a few scalar nodes per iteration; the
// sum over lanes is associated differently from the loop's running sum, so the log density
// differs from the scalar loop's by rounding only.
//
// The body compiles in lanes only if every statement is one of: a scalar int or real local
// declaration; an assignment to such a local; mu[n] = e with n the loop variable and mu not
// otherwise mentioned in the body; a sampling statement without truncation or target += whose
// density's lane arguments are vectorised (`reals`/`ints`) in its signature; target += of a
// lane expression; a block; an inner for loop with lane-independent bounds. Expressions may use
// + − * / % and unary minus on scalars, single indexes into variables declared outside the
// body, and the element-wise built-ins of laneElementwise; a part that does not depend on the
// lanes compiles as usual and is evaluated once per loop. Anything else (if, while, break,
// print, reject, a _rng or _lp call, target(), assignments to outer variables other than the
// written-once form above, a sampling statement that does not depend on the lanes) compiles
// as the ordinary loop. See docs/design-notes.md ("A Stan-language front end").

// errNotLane reports that a loop does not compile in lanes; the caller compiles the ordinary
// loop.
var errNotLane = errors.New("stan: loop does not compile in lanes")

// laneElementwise are the built-ins whose vector signatures apply the scalar function to each
// element (the vectorised unary and binary math functions).
var laneElementwise = map[string]bool{
	"exp": true, "log": true, "log1p": true, "expm1": true, "inv_logit": true, "log_inv_logit": true,
	"lgamma": true, "sqrt": true, "square": true, "fabs": true, "tanh": true, "log1m": true,
	"logit": true, "log1m_inv_logit": true, "log1m_exp": true, "log1p_exp": true, "tgamma": true,
	"digamma": true, "trigamma": true, "Phi": true, "Phi_approx": true, "inv_Phi": true, "inv": true,
	"inv_sqrt": true, "inv_square": true, "inv_cloglog": true, "cbrt": true, "exp2": true,
	"log2": true, "log10": true, "sin": true, "cos": true, "tan": true, "asin": true, "acos": true,
	"atan": true, "sinh": true, "cosh": true, "asinh": true, "acosh": true, "atanh": true,
	"erf": true, "erfc": true, "pow": true, "fmin": true, "fmax": true, "fdim": true, "hypot": true,
	"atan2": true, "lbeta": true, "lchoose": true, "binomial_coefficient_log": true,
	"log_diff_exp": true, "fmod": true, "log_inv_logit_diff": true,
}

// laneInfo is what the compiler knows about the loop being compiled in lanes.
type laneInfo struct {
	loopVar  *VarDecl
	loopSlot int
	locals   map[*VarDecl]bool // scalars declared in the body: one value per lane
	reads    map[*VarDecl]int  // mentions of each variable in the body
	// keyed counts the mentions x[i, j, …] of a variable by the spelling of their indexes.
	keyed   map[*VarDecl]map[string]int
	scatter map[*VarDecl]string // the index spelling of each variable written as x[…, n, …] = e
}

// laneLoop compiles s in lanes, or returns errNotLane.
func (c *compiler) laneLoop(s *For) (execFn, error) {
	li := &laneInfo{loopVar: s.Var, locals: map[*VarDecl]bool{}, reads: map[*VarDecl]int{},
		keyed: map[*VarDecl]map[string]int{}, scatter: map[*VarDecl]string{}}
	if !li.stmtOK(s.Body) {
		return nil, errNotLane
	}
	// A written variable may be mentioned only as the element the iteration writes (each
	// iteration then touches its own element, whatever the order of the iterations).
	for d, key := range li.scatter {
		if li.locals[d] || li.reads[d] != li.keyed[d][key] {
			return nil, errNotLane
		}
	}
	if li.mentions(s.Lo) || li.mentions(s.Hi) {
		return nil, errNotLane
	}
	bounds, err := c.loopRange(s)
	if err != nil {
		return nil, err
	}
	li.loopSlot = c.cur.add(s.Var)
	saved := c.lane
	c.lane = li
	body, err := c.laneStmt(s.Body)
	c.lane = saved
	if err != nil {
		return nil, err
	}
	slot := li.loopSlot
	// The loop variable's lanes lo, …, hi are kept between evaluations while the bounds stay
	// (values never write into Ints they did not copy).
	var mu sync.Mutex
	var last []int
	return func(f *frame) (ctl, error) {
		lo, hi, err := bounds(f)
		if err != nil || hi < lo {
			return ctlNext, err
		}
		mu.Lock()
		ks := last
		mu.Unlock()
		if len(ks) != hi-lo+1 || ks[0] != lo {
			ks = make([]int, hi-lo+1)
			for i := range ks {
				ks[i] = lo + i
			}
			mu.Lock()
			last = ks
			mu.Unlock()
		}
		f.cells[slot] = cell{v: laneInts(ks)}
		_, err = body(f)
		return ctlNext, err
	}, nil
}

// stmtOK checks that s is a lane statement and records the body's locals, reads and writes.
func (li *laneInfo) stmtOK(s Stmt) bool {
	switch s := s.(type) {
	case *BlockStmt:
		for _, x := range s.Stmts {
			if !li.stmtOK(x) {
				return false
			}
		}
		return true
	case *VarDecl:
		if s.Type.Array != 0 || (s.Type.Base != Int && s.Type.Base != Real) || len(s.Dims) != 0 || len(s.Sizes) != 0 {
			return false
		}
		if s.Init != nil && !li.exprOK(s.Init) {
			return false
		}
		li.locals[s] = true
		return true
	case *Assign:
		if !li.exprOK(s.RHS) {
			return false
		}
		switch lhs := s.LHS.(type) {
		case *Ident:
			// Only the body's own scalars: a write to an outer variable carries from one
			// iteration to the next.
			return lhs.Decl != nil && li.locals[lhs.Decl]
		case *IndexExpr:
			id, ok := lhs.X.(*Ident)
			if !ok || id.Decl == nil || !lhs.Info().Type.IsScalar() || lhs.Info().Type.Base != Real {
				return false
			}
			key, ok := li.indexKey(lhs.Indices)
			if !ok || (li.scatter[id.Decl] != "" && li.scatter[id.Decl] != key) {
				return false
			}
			hasLoop := false
			for _, ix := range lhs.Indices {
				if v, ok := ix.Lo.(*Ident); ok && v.Decl == li.loopVar {
					hasLoop = true
				} else if !li.exprOK(ix.Lo) {
					return false
				}
			}
			if !hasLoop {
				return false
			}
			li.scatter[id.Decl] = key
			if s.Op != "=" {
				// x[n] op= e reads the element it writes.
				li.reads[id.Decl]++
				li.countKey(id.Decl, key)
			}
			return true
		}
		return false
	case *Tilde:
		if s.Trunc != nil || s.Fun != nil || s.Sig == nil || s.Sig.Fn == nil || !li.exprOK(s.LHS) {
			return false
		}
		for _, a := range s.Args {
			if !li.exprOK(a) {
				return false
			}
		}
		return true
	case *TargetPlus:
		return li.exprOK(s.Expr)
	case *For:
		if !li.exprOK(s.Lo) || !li.exprOK(s.Hi) {
			return false
		}
		return li.stmtOK(s.Body)
	}
	return false
}

// exprOK checks the expression kinds a lane body may contain and counts variable mentions.
func (li *laneInfo) exprOK(e Expr) bool {
	switch e := e.(type) {
	case *Paren:
		return li.exprOK(e.X)
	case *IntLit, *RealLit:
		return true
	case *Ident:
		if e.Fun != nil || e.Decl == nil {
			return false
		}
		li.reads[e.Decl]++
		return true
	case *Binary:
		return li.exprOK(e.L) && li.exprOK(e.R)
	case *Unary:
		return li.exprOK(e.X)
	case *Ternary:
		return li.exprOK(e.Cond) && li.exprOK(e.Then) && li.exprOK(e.Else)
	case *Call:
		// _rng draws and _lp calls have effects that must happen once per iteration.
		if strings.HasSuffix(e.Name, "_rng") || strings.HasSuffix(e.Name, "_lp") {
			return false
		}
		for _, a := range e.Args {
			if !li.exprOK(a) {
				return false
			}
		}
		return true
	case *IndexExpr:
		if !li.exprOK(e.X) {
			return false
		}
		if id, ok := e.X.(*Ident); ok && id.Decl != nil {
			if key, ok := li.indexKey(e.Indices); ok {
				li.countKey(id.Decl, key)
			}
		}
		for _, ix := range e.Indices {
			if ix.Lo != nil && !li.exprOK(ix.Lo) {
				return false
			}
			if ix.Hi != nil && !li.exprOK(ix.Hi) {
				return false
			}
		}
		return true
	case *ArrayExpr:
		for _, x := range e.Elems {
			if !li.exprOK(x) {
				return false
			}
		}
		return true
	case *RowVectorExpr:
		for _, x := range e.Elems {
			if !li.exprOK(x) {
				return false
			}
		}
		return true
	}
	return false
}

// indexKey spells a list of single indexes made of variables, int literals and int
// arithmetic; ok is false for any other index.
func (li *laneInfo) indexKey(ixs []*Index) (string, bool) {
	var b strings.Builder
	var spell func(e Expr) bool
	spell = func(e Expr) bool {
		switch e := e.(type) {
		case *Paren:
			return spell(e.X)
		case *Ident:
			if e.Decl == nil {
				return false
			}
			fmt.Fprintf(&b, "v%p", e.Decl)
			return true
		case *IntLit:
			fmt.Fprintf(&b, "%d", e.Value)
			return true
		case *Binary:
			b.WriteString("(")
			if !spell(e.L) {
				return false
			}
			b.WriteString(e.Op)
			if !spell(e.R) {
				return false
			}
			b.WriteString(")")
			return true
		}
		return false
	}
	for i, ix := range ixs {
		if ix.Kind != IndexSingle {
			return "", false
		}
		if i > 0 {
			b.WriteString(",")
		}
		if !spell(ix.Lo) {
			return "", false
		}
	}
	return b.String(), true
}

func (li *laneInfo) countKey(d *VarDecl, key string) {
	m := li.keyed[d]
	if m == nil {
		m = map[string]int{}
		li.keyed[d] = m
	}
	m[key]++
}

// mentions reports whether e depends on the lanes: the loop variable or a lane local.
func (li *laneInfo) mentions(e Expr) bool {
	switch e := e.(type) {
	case *Paren:
		return li.mentions(e.X)
	case *Ident:
		return e.Decl != nil && (e.Decl == li.loopVar || li.locals[e.Decl])
	case *Binary:
		return li.mentions(e.L) || li.mentions(e.R)
	case *Unary:
		return li.mentions(e.X)
	case *Ternary:
		return li.mentions(e.Cond) || li.mentions(e.Then) || li.mentions(e.Else)
	case *Call:
		for _, a := range e.Args {
			if li.mentions(a) {
				return true
			}
		}
	case *IndexExpr:
		if li.mentions(e.X) {
			return true
		}
		for _, ix := range e.Indices {
			if (ix.Lo != nil && li.mentions(ix.Lo)) || (ix.Hi != nil && li.mentions(ix.Hi)) {
				return true
			}
		}
	case *ArrayExpr:
		for _, x := range e.Elems {
			if li.mentions(x) {
				return true
			}
		}
	case *RowVectorExpr:
		for _, x := range e.Elems {
			if li.mentions(x) {
				return true
			}
		}
	}
	return false
}

// lanesOf is the number of lanes of the running loop.
func (li *laneInfo) lanesOf(f *frame) int { return len(f.cells[li.loopSlot].v.Ints) }

// laneStmt compiles one statement of a lane body.
func (c *compiler) laneStmt(s Stmt) (execFn, error) {
	li := c.lane
	switch s := s.(type) {
	case *BlockStmt:
		fns := make([]execFn, 0, len(s.Stmts))
		for _, x := range s.Stmts {
			fn, err := c.laneStmt(x)
			if err != nil {
				return nil, err
			}
			fns = append(fns, fn)
		}
		return func(f *frame) (ctl, error) {
			for _, fn := range fns {
				if _, err := fn(f); err != nil {
					return ctlNext, err
				}
			}
			return ctlNext, nil
		}, nil
	case *VarDecl:
		slot := c.cur.add(s)
		var init evalFn
		if s.Init != nil {
			var err error
			if init, _, err = c.laneExpr(s.Init); err != nil {
				return nil, err
			}
		}
		isInt := s.Type.Base == Int
		return func(f *frame) (ctl, error) {
			n := li.lanesOf(f)
			if init == nil {
				if isInt {
					ks := make([]int, n)
					for i := range ks {
						ks[i] = math.MinInt
					}
					f.cells[slot] = cell{v: laneInts(ks)}
				} else {
					f.cells[slot] = cell{v: laneReal(f.st.t, f.st.nanVar(), n)}
				}
				return ctlNext, nil
			}
			v, err := init(f)
			if err != nil {
				return ctlNext, err
			}
			f.cells[slot] = cell{v: laneWiden(f.st.t, v, n, isInt)}
			return ctlNext, nil
		}, nil
	case *Assign:
		rhs, _, err := c.laneExpr(s.RHS)
		if err != nil {
			return nil, err
		}
		pos := s.Pos
		switch lhs := s.LHS.(type) {
		case *Ident:
			slot := c.cur.slot[lhs.Decl]
			isInt := lhs.Decl.Type.Base == Int
			op := ""
			if s.Op != "=" {
				op = s.OpName
				if !laneArithOp(op) {
					return nil, errNotLane
				}
			}
			return func(f *frame) (ctl, error) {
				v, err := rhs(f)
				if err != nil {
					return ctlNext, err
				}
				if op != "" {
					if v, err = laneArith(f.st.t, op, f.cells[slot].v, v, isInt); err != nil {
						return ctlNext, withPos(pos, err)
					}
				}
				f.cells[slot] = cell{v: laneWiden(f.st.t, v, li.lanesOf(f), isInt)}
				return ctlNext, nil
			}, nil
		case *IndexExpr:
			id := lhs.X.(*Ident)
			slot, ok := c.cur.slot[id.Decl]
			if !ok {
				return nil, errNotLane
			}
			idx := make([]evalFn, len(lhs.Indices))
			for i, ix := range lhs.Indices {
				if v, ok := ix.Lo.(*Ident); ok && v.Decl == li.loopVar {
					idx[i] = func(f *frame) (Value, error) { return f.cells[li.loopSlot].v, nil }
					continue
				}
				if li.mentions(ix.Lo) {
					return nil, errNotLane
				}
				var err error
				if idx[i], err = c.expr(ix.Lo); err != nil {
					return nil, err
				}
			}
			var op string
			var cur evalFn
			if s.Op != "=" {
				op = s.OpName
				if !laneArithOp(op) {
					return nil, errNotLane
				}
				var err error
				if cur, _, err = c.laneIndex(lhs); err != nil {
					return nil, err
				}
			}
			name := id.Name
			return func(f *frame) (ctl, error) {
				v, err := rhs(f)
				if err != nil {
					return ctlNext, err
				}
				t := f.st.t
				if op != "" {
					old, err := cur(f)
					if err != nil {
						return ctlNext, err
					}
					if v, err = laneArith(t, op, old, v, false); err != nil {
						return ctlNext, withPos(pos, err)
					}
				}
				n := li.lanesOf(f)
				cl := &f.cells[slot]
				flat, err := laneFlat(f, name, cl.v.Dims, idx, n)
				if err != nil {
					return ctlNext, withPos(pos, err)
				}
				v = laneWiden(t, v, n, false)
				whole := n == cl.v.Len() && cl.elems == nil
				for i, j := range flat {
					whole = whole && i == j
				}
				if whole {
					// The whole variable in order: one node, no per-element bookkeeping.
					f.set(slot, mkValue(t, cl.v.Type, cl.v.Dims, v.Var))
					return ctlNext, nil
				}
				return ctlNext, withPos(pos, f.writeElems(slot, flat, v))
			}, nil
		}
		return nil, errNotLane
	case *Tilde:
		y, yl, err := c.laneExpr(s.LHS)
		if err != nil {
			return nil, err
		}
		args := make([]evalFn, len(s.Args))
		lanes := yl
		if yl && !laneVectorised(s.Sig, 0) {
			return nil, errNotLane
		}
		for i, a := range s.Args {
			var l bool
			if args[i], l, err = c.laneExpr(a); err != nil {
				return nil, err
			}
			if l && !laneVectorised(s.Sig, i+1) {
				return nil, errNotLane
			}
			lanes = lanes || l
		}
		if !lanes {
			// The same term for every iteration: the loop would add it n times.
			return nil, errNotLane
		}
		return c.laneDensity(s.Pos, s.Sig.Fn, append([]evalFn{y}, args...)), nil
	case *TargetPlus:
		e := s.Expr
		for {
			p, ok := e.(*Paren)
			if !ok {
				break
			}
			e = p.X
		}
		if call, ok := e.(*Call); ok && call.Fun == nil && call.Sig != nil && call.Sig.Fn != nil && isDensityName(call.Name) {
			args := make([]evalFn, len(call.Args))
			lanes := false
			for i, a := range call.Args {
				var l bool
				var err error
				if args[i], l, err = c.laneExpr(a); err != nil {
					return nil, err
				}
				if l && !laneVectorised(call.Sig, i) {
					return nil, errNotLane
				}
				lanes = lanes || l
			}
			if !lanes {
				return nil, errNotLane
			}
			return c.laneDensity(call.Pos, call.Sig.Fn, args), nil
		}
		x, l, err := c.laneExpr(s.Expr)
		if err != nil {
			return nil, err
		}
		if !l {
			return nil, errNotLane
		}
		return func(f *frame) (ctl, error) {
			v, err := x(f)
			if err != nil {
				return ctlNext, err
			}
			f.st.addTarget(v)
			return ctlNext, nil
		}, nil
	case *For:
		if li.mentions(s.Lo) || li.mentions(s.Hi) {
			return nil, errNotLane
		}
		bounds, err := c.loopRange(s)
		if err != nil {
			return nil, err
		}
		slot := c.cur.add(s.Var)
		body, err := c.laneStmt(s.Body)
		if err != nil {
			return nil, err
		}
		return func(f *frame) (ctl, error) {
			lo, hi, err := bounds(f)
			if err != nil || hi < lo {
				return ctlNext, err
			}
			ks := make([]int, hi-lo+1)
			for i := range ks {
				ks[i] = lo + i
				f.cells[slot] = cell{v: Value{Type: TInt, Ints: ks[i : i+1 : i+1]}}
				if _, err := body(f); err != nil {
					return ctlNext, err
				}
			}
			return ctlNext, nil
		}, nil
	}
	return nil, errNotLane
}

// laneDensity adds fn(args) — a vectorised density over the lanes — to target.
func (c *compiler) laneDensity(pos Pos, fn Impl, args []evalFn) execFn {
	return func(f *frame) (ctl, error) {
		st := f.st
		base := len(st.args)
		defer func() { st.args = st.args[:base] }()
		for _, a := range args {
			v, err := a(f)
			if err != nil {
				return ctlNext, err
			}
			st.args = append(st.args, v)
		}
		vs := st.args[base:len(st.args):len(st.args)]
		lp, err := fn(f.ctx(pos), vs)
		if err != nil {
			return ctlNext, withPos(pos, err)
		}
		st.addTarget(lp)
		return ctlNext, nil
	}
}

// isDensityName reports a log density or mass function's name.
func isDensityName(name string) bool {
	for _, s := range []string{"_lpdf", "_lupdf", "_lpmf", "_lupmf"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// laneVectorised reports whether argument i of s accepts a container of one value per lane
// (a `reals` or `ints` argument: the density sums over its elements).
func laneVectorised(s *Sig, i int) bool {
	if i >= len(s.Args) {
		return false
	}
	cl := s.Args[i].Class
	return cl == Reals || cl == Ints
}

// laneExpr compiles e inside a lane body; lanes reports whether its value has one element per
// lane (a vector, or an int array), else it is an ordinary value shared by all lanes.
func (c *compiler) laneExpr(e Expr) (fn evalFn, lanes bool, err error) {
	li := c.lane
	if !li.mentions(e) {
		fn, err := c.expr(e)
		return fn, false, err
	}
	switch e := e.(type) {
	case *Paren:
		return c.laneExpr(e.X)
	case *Ident:
		slot, ok := c.cur.slot[e.Decl]
		if !ok {
			return nil, false, errNotLane
		}
		return func(f *frame) (Value, error) { return f.cells[slot].v, nil }, true, nil
	case *Binary:
		if !e.L.Info().Type.IsScalar() || !e.R.Info().Type.IsScalar() {
			return nil, false, errNotLane
		}
		l, _, err := c.laneExpr(e.L)
		if err != nil {
			return nil, false, err
		}
		r, _, err := c.laneExpr(e.R)
		if err != nil {
			return nil, false, err
		}
		isInt, pos := e.Info().Type == TInt, e.Pos
		if laneArithOp(e.Name) {
			name := e.Name
			return func(f *frame) (Value, error) {
				a, err := l(f)
				if err != nil {
					return Value{}, err
				}
				b, err := r(f)
				if err != nil {
					return Value{}, err
				}
				v, err := laneArith(f.st.t, name, a, b, isInt)
				return v, withPos(pos, err)
			}, true, nil
		}
		fn, err := c.laneBuiltin(e.Name, pos, e.Info().Type, []Expr{e.L, e.R}, []evalFn{l, r})
		return fn, true, err
	case *Unary:
		if (e.Name != "minus" && e.Op != "-") || !e.X.Info().Type.IsScalar() {
			return nil, false, errNotLane
		}
		x, _, err := c.laneExpr(e.X)
		if err != nil {
			return nil, false, err
		}
		return func(f *frame) (Value, error) {
			v, err := x(f)
			if err != nil {
				return Value{}, err
			}
			if v.Type.Base == Int {
				ks := make([]int, len(v.Ints))
				for i, k := range v.Ints {
					ks[i] = -k
				}
				return laneInts(ks), nil
			}
			return laneVec(f.st.t.Neg(v.Var), v.Dims[0]), nil
		}, true, nil
	case *Call:
		if e.Fun == nil && laneScalarFns[e.Name].fn != nil {
			return c.laneScalarCall(e)
		}
		if e.Fun != nil || !e.Info().Type.IsScalar() || e.Info().Type.Base == Int || !laneElementwise[e.Name] {
			return nil, false, errNotLane
		}
		args, err := c.laneScalarArgs(e.Args)
		if err != nil {
			return nil, false, err
		}
		fn, err := c.laneBuiltin(e.Name, e.Pos, e.Info().Type, e.Args, args)
		return fn, true, err
	case *IndexExpr:
		return c.laneIndex(e)
	}
	return nil, false, errNotLane
}

// laneScalarFns are scalar-valued built-ins computed lane by lane when used inside an
// expression (a density's value per iteration, not its sum), from tape nodes; args are the
// arguments' nodes (a lane vector or a shared scalar), vals their values for the domain checks.
var laneScalarFns = map[string]laneScalarFn{
	// normal_lpdf(y | μ, σ) = −½((y − μ)/σ)² − log σ − ½ log 2π.
	"normal_lpdf": {3, func(t *ad.Tape, a []ad.Var, vals [][]float64) (ad.Var, error) {
		const name = "normal_lpdf"
		for j, chk := range []struct {
			label string
			k     pcheck
		}{{lblY, chkNotNaN}, {lblLoc, chkFinite}, {lblScale, chkPositive}} {
			if err := checkVals(name, chk.label, chk.k, vals[j], len(vals[j]) > 1); err != nil {
				return ad.Var{}, err
			}
		}
		return laneNormal(t, a[0], a[1], a[2]), nil
	}},
	// log_mix(θ, a, b) = log(θ eᵃ + (1 − θ) eᵇ) (compile_lanefused.go).
	"log_mix": {3, func(t *ad.Tape, a []ad.Var, vals [][]float64) (ad.Var, error) {
		for _, th := range vals[0] {
			if !(th >= 0 && th <= 1) {
				return ad.Var{}, errf("log_mix", "lambda is %v, but must be in the interval [0, 1]", th)
			}
		}
		return laneLogMix(t, a[0], a[1], a[2]), nil
	}},
	"log_sum_exp": {2, func(t *ad.Tape, a []ad.Var, vals [][]float64) (ad.Var, error) {
		return laneLogAddExp(t, a[0], a[1]), nil
	}},
}

// laneScalarFn is one entry of laneScalarFns: its number of arguments and its computation.
type laneScalarFn struct {
	arity int
	fn    func(t *ad.Tape, args []ad.Var, vals [][]float64) (ad.Var, error)
}

// laneLogAddExp is log(eˣ + eʸ) element-wise: x + softplus(y − x), without overflow.
func laneLogAddExp(t *ad.Tape, x, y ad.Var) ad.Var { return t.Add(x, t.Softplus(t.Sub(y, x))) }

// laneScalarCall compiles a call of laneScalarFns on real scalar arguments.
func (c *compiler) laneScalarCall(e *Call) (evalFn, bool, error) {
	sf := laneScalarFns[e.Name]
	if len(e.Args) != sf.arity || e.Info().Type != TReal {
		return nil, false, errNotLane
	}
	if fn, ok, err := c.laneMixNormal(e); ok || err != nil {
		return fn, ok, err
	}
	args, err := c.laneScalarArgs(e.Args)
	if err != nil {
		return nil, false, err
	}
	fn, li, pos := sf.fn, c.lane, e.Pos
	return func(f *frame) (Value, error) {
		t := f.st.t
		var xs [3]ad.Var
		var vals [3][]float64
		for i, a := range args {
			v, err := a(f)
			if err != nil {
				return Value{}, err
			}
			xs[i] = laneRealVar(t, v)
			vals[i] = t.Value(xs[i])
		}
		x, err := fn(t, xs[:len(args)], vals[:len(args)])
		if err != nil {
			return Value{}, withPos(pos, err)
		}
		n := li.lanesOf(f)
		if t.Size(x) != n {
			return laneReal(t, x, n), nil
		}
		return laneVec(x, n), nil
	}, true, nil
}

// laneScalarArgs compiles the arguments of a built-in call inside a lane body; each must be a
// scalar (a lane value or a shared one).
func (c *compiler) laneScalarArgs(es []Expr) ([]evalFn, error) {
	args := make([]evalFn, len(es))
	for i, a := range es {
		if !a.Info().Type.IsScalar() {
			return nil, errNotLane
		}
		var err error
		if args[i], _, err = c.laneExpr(a); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// laneBuiltin calls an element-wise built-in on lane values: the signature is resolved again
// with vector arguments where the lanes differ, and must return a vector.
func (c *compiler) laneBuiltin(name string, pos Pos, ty Type, exprs []Expr, args []evalFn) (evalFn, error) {
	if !laneElementwise[name] || ty != TReal {
		return nil, errNotLane
	}
	types := make([]Type, len(exprs))
	for i, e := range exprs {
		types[i] = TReal
		if c.lane.mentions(e) {
			types[i] = TVector
		}
	}
	var sig *Sig
	sigs := c.builtins().Lookup(name)
	for _, promote := range []bool{false, true} {
		for i := range sigs {
			if accepts(&sigs[i], types, promote) {
				sig = &sigs[i]
				break
			}
		}
		if sig != nil {
			break
		}
	}
	if sig == nil || sig.Fn == nil || (sig.RetOf == nil && sig.Ret != TVector) {
		return nil, errNotLane
	}
	fn, li := sig.Fn, c.lane
	lanes := make([]bool, len(types))
	for i := range types {
		lanes[i] = types[i] == TVector
	}
	return func(f *frame) (Value, error) {
		st := f.st
		base := len(st.args)
		defer func() { st.args = st.args[:base] }()
		for i, a := range args {
			v, err := a(f)
			if err != nil {
				return Value{}, err
			}
			if lanes[i] {
				v = laneWiden(st.t, v, li.lanesOf(f), false)
			} else {
				v = toReal(st.t, v, TReal)
			}
			st.args = append(st.args, v)
		}
		vs := st.args[base:len(st.args):len(st.args)]
		v, err := fn(f.ctx(pos), vs)
		if err != nil {
			return Value{}, withPos(pos, err)
		}
		if v.Type != TVector {
			return Value{}, withPos(pos, fmt.Errorf("%s: element-wise call returned %s", name, v.Type))
		}
		return v, nil
	}, nil
}

// laneIndex compiles x[i, j, …] (single indexes down to a scalar, x declared outside the
// body) where some index depends on the lanes: a gather.
func (c *compiler) laneIndex(e *IndexExpr) (evalFn, bool, error) {
	li := c.lane
	id, ok := e.X.(*Ident)
	if !ok || id.Decl == nil || li.locals[id.Decl] || id.Decl == li.loopVar || !e.Info().Type.IsScalar() {
		return nil, false, errNotLane
	}
	slot, ok := c.cur.slot[id.Decl]
	if !ok {
		return nil, false, errNotLane
	}
	idx := make([]evalFn, len(e.Indices))
	for i, ix := range e.Indices {
		if ix.Kind != IndexSingle || !ix.Lo.Info().Type.IsScalar() || ix.Lo.Info().Type.Base != Int {
			return nil, false, errNotLane
		}
		var err error
		if idx[i], _, err = c.laneExpr(ix.Lo); err != nil {
			return nil, false, err
		}
	}
	pos, name := e.Pos, id.Name
	// x[n] with n the loop variable itself: the lanes read consecutive elements.
	byLoopVar := false
	if len(e.Indices) == 1 {
		if iv, ok := e.Indices[0].Lo.(*Ident); ok && iv.Decl == li.loopVar {
			byLoopVar = true
		}
	}
	return func(f *frame) (Value, error) {
		n := li.lanesOf(f)
		cl := &f.cells[slot]
		bv := cl.v
		if cl.elems == nil {
			bv = f.read(slot)
		}
		dims := bv.Dims
		if byLoopVar && cl.elems == nil && bv.Type.Base != Int && len(dims) == 1 && n > 0 {
			ks := f.cells[li.loopSlot].v.Ints
			lo, hi := ks[0], ks[len(ks)-1]
			for _, k := range [2]int{lo, hi} {
				if k < 1 || k > dims[0] {
					return Value{}, withPos(pos, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k, dims[0]))
				}
			}
			t := f.st.t
			if n == dims[0] {
				return laneVec(bv.Var, n), nil
			}
			return laneVec(t.Slice(bv.Var, lo-1, hi), n), nil
		}
		flat, err := laneFlat(f, name, dims, idx, n)
		if err != nil {
			return Value{}, withPos(pos, err)
		}
		if bv.Type.Base == Int {
			ks := make([]int, n)
			for l, j := range flat {
				ks[l] = bv.Ints[j]
			}
			return laneInts(ks), nil
		}
		t := f.st.t
		if cl.elems != nil {
			// Written element by element (by an ordinary loop): gather the lanes' elements
			// without materialising the whole variable.
			xs := make([]ad.Var, n)
			for l, j := range flat {
				xs[l] = cl.elems[j]
			}
			if n == 1 {
				return laneVec(xs[0], 1), nil
			}
			return laneVec(t.Concat(xs...), n), nil
		}
		if t.IsConst(bv.Var) {
			// Data stay constant, so that a density drops the same terms as the scalar loop;
			// consecutive elements (x[n] over the loop's range) are a view, not a copy.
			x := t.Value(bv.Var)
			if lo, ok := laneRun(flat); ok && n > 0 {
				if lo == 0 && n == len(x) {
					return laneVec(bv.Var, n), nil
				}
				return laneVec(t.Slice(bv.Var, lo, lo+n), n), nil
			}
			xs := make([]float64, n)
			for l, j := range flat {
				xs[l] = x[j]
			}
			return laneVec(t.Const(xs...), n), nil
		}
		return laneVec(t.Gather(bv.Var, flat), n), nil
	}, true, nil
}

// laneRun reports whether flat is consecutive positions lo, lo+1, ….
func laneRun(flat []int) (lo int, ok bool) {
	if len(flat) == 0 {
		return 0, false
	}
	for l, j := range flat {
		if j != flat[0]+l {
			return 0, false
		}
	}
	return flat[0], true
}

// laneFlat evaluates single indexes (each an int, or one int per lane) into the row-major
// element of each of n lanes in a variable of dims, checking every index's range.
func laneFlat(f *frame, name string, dims []int, idx []evalFn, n int) ([]int, error) {
	if len(dims) != len(idx) {
		return nil, fmt.Errorf("%s: %d indexes for %d dimensions", name, len(idx), len(dims))
	}
	flat := make([]int, n)
	for d, fn := range idx {
		iv, err := fn(f)
		if err != nil {
			return nil, err
		}
		for l := range flat {
			k := iv.Ints[0]
			if len(iv.Ints) > 1 {
				k = iv.Ints[l]
			}
			if k < 1 || k > dims[d] {
				return nil, fmt.Errorf("index %d out of range; expecting index to be between 1 and %d", k, dims[d])
			}
			flat[l] = flat[l]*dims[d] + k - 1
		}
	}
	return flat, nil
}

// laneArithOp reports the operators laneArith implements.
func laneArithOp(name string) bool {
	switch name {
	case "add", "subtract", "multiply", "divide", "modulus":
		return true
	}
	return false
}

// laneArith applies a scalar operator lane by lane; a and b are lane values or scalars.
func laneArith(t *ad.Tape, name string, a, b Value, isInt bool) (Value, error) {
	if isInt {
		if a.Type.Base != Int || b.Type.Base != Int {
			return Value{}, fmt.Errorf("%s: int operator on real operands", name)
		}
		n := max(len(a.Ints), len(b.Ints))
		ks := make([]int, n)
		for i := range ks {
			x, y := a.Ints[0], b.Ints[0]
			if len(a.Ints) > 1 {
				x = a.Ints[i]
			}
			if len(b.Ints) > 1 {
				y = b.Ints[i]
			}
			var r int
			switch name {
			case "add":
				r = x + y
			case "subtract":
				r = x - y
			case "multiply":
				r = x * y
			case "divide":
				if y == 0 {
					return Value{}, errf("divide", "integer division by zero")
				}
				r = x / y
			case "modulus":
				if y == 0 {
					return Value{}, errf("modulus", "modulus by zero")
				}
				r = x % y
			}
			ks[i] = r
		}
		return laneInts(ks), nil
	}
	n := max(laneCount(a), laneCount(b))
	x, y := laneRealVar(t, a), laneRealVar(t, b)
	var r ad.Var
	switch name {
	case "add":
		r = t.Add(x, y)
	case "subtract":
		r = t.Sub(x, y)
	case "multiply":
		r = t.Mul(x, y)
	case "divide":
		r = t.Div(x, y)
	default:
		return Value{}, fmt.Errorf("%s: not a real operator", name)
	}
	return laneVec(r, n), nil
}

// laneCount is the number of lanes of a lane value (1 for a shared scalar).
func laneCount(v Value) int {
	if len(v.Dims) == 0 {
		return 1
	}
	return v.Dims[0]
}

// laneRealVar is v's real node (an int value becomes a constant).
func laneRealVar(t *ad.Tape, v Value) ad.Var {
	if v.Type.Base != Int {
		return v.Var
	}
	xs := make([]float64, len(v.Ints))
	for i, k := range v.Ints {
		xs[i] = float64(k)
	}
	return t.Const(xs...)
}

// laneWiden makes v a lane value of n lanes (a shared scalar repeats), int or real.
func laneWiden(t *ad.Tape, v Value, n int, isInt bool) Value {
	if isInt {
		if len(v.Ints) == n && len(v.Dims) == 1 {
			return v
		}
		ks := make([]int, n)
		for i := range ks {
			ks[i] = v.Ints[0]
		}
		return laneInts(ks)
	}
	x := laneRealVar(t, v)
	if t.Size(x) == n && len(v.Dims) == 1 {
		return laneVec(x, n)
	}
	return laneReal(t, x, n)
}

// laneReal repeats the scalar node x over n lanes.
func laneReal(t *ad.Tape, x ad.Var, n int) Value {
	if t.IsConst(x) {
		xs := make([]float64, n)
		v := t.Value(x)[0]
		for i := range xs {
			xs[i] = v
		}
		return laneVec(t.Const(xs...), n)
	}
	return laneVec(t.Gather(x, make([]int, n)), n)
}

func laneVec(x ad.Var, n int) Value { return Value{Type: TVector, Dims: []int{n}, Var: x} }

func laneInts(ks []int) Value {
	return Value{Type: Type{Base: Int, Array: 1}, Dims: []int{len(ks)}, Ints: ks}
}
