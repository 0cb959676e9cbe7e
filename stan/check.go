package stan

import (
	"fmt"
	"strings"
)

// Check type-checks the program against the built-in table tb (Builtins()) and its own
// functions: scopes and block rules (what each block may assign, where _rng and _lp functions,
// target and ~ may appear), the type of every expression (int promoted to real where a real is
// expected), the resolution of every call and operator (user-defined functions first, then
// the built-ins: the first signature that accepts the argument types without promotion, else
// the first that accepts them with int → real promotion), constraint and size types. It
// fills the tree's checked fields (see ast.go) and returns an Errors listing every type error
// found (nil if none); warnings (int division, a ~ that may need a Jacobian, deprecated
// forms) are appended to p.Warnings. tb nil means Builtins(). Check never panics; its cost is
// linear in the size of the program times the number of signatures per name.
func (p *Program) Check(tb *Table) error {
	if tb == nil {
		tb = Builtins()
	}
	c := &checker{prog: p, tb: tb, d: &diag{src: p.Src}, funs: map[string][]*FunDef{}}
	c.run()
	p.Warnings = append(p.Warnings, c.d.warnings...)
	if len(c.d.errs) > 0 {
		p.Checked = false
		return c.d.errs
	}
	p.Checked = true
	return nil
}

// checker holds the state of one Check.
type checker struct {
	prog *Program
	tb   *Table
	d    *diag
	funs map[string][]*FunDef // user functions by name (definitions and declarations)
	sc   *scope
	cx   context
}

// context is where the statement being checked is.
type context struct {
	block BlockKind
	fun   *FunDef // the function whose body is checked, nil in a program block
	loops int
}

// scope is one level of variable declarations.
type scope struct {
	vars   map[string]*VarDecl
	parent *scope
}

func (c *checker) push() { c.sc = &scope{vars: map[string]*VarDecl{}, parent: c.sc} }
func (c *checker) pop()  { c.sc = c.sc.parent }

func (c *checker) lookup(name string) *VarDecl {
	for s := c.sc; s != nil; s = s.parent {
		if d, ok := s.vars[name]; ok {
			return d
		}
	}
	return nil
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.d.add(pos, fmt.Sprintf(format, args...))
}

// declare adds d to the innermost scope, reporting a name already in use.
func (c *checker) declare(d *VarDecl) {
	if c.lookup(d.Name) != nil {
		c.errorf(d.Pos, "Identifier '%s' is already in use.", d.Name)
		return
	}
	if _, ok := c.funs[d.Name]; ok {
		c.errorf(d.Pos, "Identifier '%s' clashes with a function of that name.", d.Name)
		return
	}
	c.sc.vars[d.Name] = d
}

func (c *checker) run() {
	c.functions()
	c.sc = nil
	c.push() // the program's global scope
	for _, b := range c.prog.Blocks() {
		c.cx = context{block: b.Kind}
		for _, s := range b.Stmts {
			c.stmt(s)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Functions

func (c *checker) functions() {
	fs := c.prog.Functions
	// Register every function first, so that calls may come before definitions (recursion,
	// mutual recursion) as stanc3 allows.
	for _, f := range fs {
		c.checkSuffixRules(f)
		var def *FunDef
		for _, g := range c.funs[f.Name] {
			if sameParams(f, g) {
				if f.Body != nil && g.Body != nil {
					c.errorf(f.Pos, "Function '%s' has already been defined with these argument types.", f.Name)
				}
				if f.Ret != g.Ret {
					c.errorf(f.Pos, "Function '%s' has already been declared with return type %s.", f.Name, g.Ret)
				}
				def = g
			}
		}
		if def == nil {
			c.funs[f.Name] = append(c.funs[f.Name], f)
		} else if f.Body != nil && def.Body == nil {
			// the definition replaces the forward declaration in the table
			for i, g := range c.funs[f.Name] {
				if g == def {
					c.funs[f.Name][i] = f
				}
			}
		}
	}
	for _, f := range fs {
		for _, g := range c.funs[f.Name] {
			if sameParams(f, g) {
				f.Def = g
			}
		}
		if f.Def == nil || f.Def.Body == nil {
			if f.Body == nil {
				c.errorf(f.Pos, "Function '%s' is declared but not defined.", f.Name)
			}
		}
	}
	for _, f := range fs {
		if f.Body == nil {
			continue
		}
		c.sc = nil
		c.push()
		for _, a := range f.Params {
			c.declare(a)
		}
		c.cx = context{block: FunctionsBlock, fun: f}
		c.block(f.Body, false)
		if f.Ret != TVoid && !returns(f.Body) {
			c.errorf(f.Pos, "Function bodies must contain a return statement of correct type in every branch (function '%s').", f.Name)
		}
		c.pop()
	}
}

func sameParams(f, g *FunDef) bool {
	if len(f.Params) != len(g.Params) {
		return false
	}
	for i := range f.Params {
		if f.Params[i].Type != g.Params[i].Type {
			return false
		}
	}
	return true
}

// checkSuffixRules applies the naming rules of the _lpdf/_lpmf/_lcdf/_lccdf/_rng/_lp suffixes
// to a function definition.
func (c *checker) checkSuffixRules(f *FunDef) {
	switch suf := f.Suffix(); suf {
	case "_lupdf", "_lupmf":
		c.errorf(f.Pos, "User-defined functions may not end in %s; define the %s function and call it as %s.", suf, strings.Replace(suf, "u", "", 1), suf)
	case "_lpdf", "_lpmf", "_lcdf", "_lccdf":
		if f.Ret != TReal {
			c.errorf(f.Pos, "Real return type required for probability functions ending in %s (function '%s').", suf, f.Name)
		}
		if len(f.Params) == 0 {
			c.errorf(f.Pos, "Probability functions with suffix %s require at least one argument (function '%s').", suf, f.Name)
			return
		}
		first := f.Params[0].Type
		if suf == "_lpdf" && first.Base == Int {
			c.errorf(f.Params[0].Pos, "Probability density functions require real variates (first argument). Instead found type %s.", first)
		}
		if suf == "_lpmf" && first.Base != Int {
			c.errorf(f.Params[0].Pos, "Probability mass functions require integer variates (first argument). Instead found type %s.", first)
		}
	}
}

// returns reports whether every path through s ends in a return (or reject / fatal_error).
func returns(s Stmt) bool {
	switch s := s.(type) {
	case *Return:
		return true
	case *Print:
		return s.Kind != PrintStmt
	case *BlockStmt:
		for _, t := range s.Stmts {
			if returns(t) {
				return true
			}
		}
	case *If:
		return s.Else != nil && returns(s.Then) && returns(s.Else)
	case *While:
		// while (1) { … return …; } is a common idiom; a loop whose condition is a nonzero
		// literal and whose body returns counts.
		if l, ok := s.Cond.(*IntLit); ok && l.Value != 0 {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------------------------
// Statements

func (c *checker) block(b *BlockStmt, newScope bool) {
	if newScope {
		c.push()
		defer c.pop()
	}
	for _, s := range b.Stmts {
		c.stmt(s)
	}
}

func (c *checker) inModelLike() bool {
	return c.cx.block == ModelBlock || (c.cx.fun != nil && c.cx.fun.Suffix() == "_lp")
}

func (c *checker) stmt(s Stmt) {
	switch s := s.(type) {
	case *VarDecl:
		c.varDecl(s)
	case *Assign:
		c.assign(s)
	case *Tilde:
		c.tilde(s)
	case *TargetPlus:
		if !c.inModelLike() {
			c.errorf(s.Pos, "Target can only be accessed in the model block or in definitions of functions with the suffix _lp.")
		}
		t := c.expr(s.Expr)
		if t != nil && !(t.Base == Int || t.Base == Real || t.Base == Vector || t.Base == RowVector || t.Base == Matrix) {
			c.errorf(s.Expr.Position(), "Ill-typed arguments supplied to target +=: found type %s, expected a real or a container of reals.", *t)
		}
	case *For:
		c.condInt(s.Lo, "Lower bound of for-loop")
		c.condInt(s.Hi, "Upper bound of for-loop")
		c.push()
		s.Var.Type = TInt
		c.declare(s.Var)
		c.loop(s.Body)
		c.pop()
	case *ForEach:
		t := c.expr(s.Over)
		var el Type
		switch {
		case t == nil:
			el = TReal
		case t.Array > 0:
			el = t.Elem()
		case t.Base == Vector || t.Base == RowVector || t.Base == Matrix:
			el = TReal
		default:
			c.errorf(s.Over.Position(), "Foreach-loop must be over array, vector, row_vector or matrix. Instead found expression of type %s.", *t)
			el = TReal
		}
		c.push()
		s.Var.Type = el
		s.Var.DataOnly = t != nil && s.Over.Info().Data
		c.declare(s.Var)
		c.loop(s.Body)
		c.pop()
	case *While:
		c.cond(s.Cond, "Condition in while-loop")
		c.loop(s.Body)
	case *If:
		c.cond(s.Cond, "Condition in conditional")
		c.scoped(s.Then)
		if s.Else != nil {
			c.scoped(s.Else)
		}
	case *Break, *Continue:
		if c.cx.loops == 0 {
			c.errorf(s.Position(), "Break and continue statements are only allowed in the body of a for-loop or while-loop.")
		}
	case *Return:
		c.ret(s)
	case *BlockStmt:
		c.block(s, true)
	case *Print:
		for _, a := range s.Args {
			if _, ok := a.(*StringLit); ok {
				continue
			}
			if t := c.expr(a); t != nil && (t.Base == Void || t.Base == Func) {
				c.errorf(a.Position(), "Cannot print an expression of type %s.", *t)
			}
		}
	case *ExprStmt:
		c.call(s.Call, true)
	}
}

// scoped checks the body of a control statement in its own scope.
func (c *checker) scoped(s Stmt) {
	c.push()
	c.stmt(s)
	c.pop()
}

func (c *checker) loop(body Stmt) {
	c.cx.loops++
	c.scoped(body)
	c.cx.loops--
}

func (c *checker) cond(e Expr, what string) {
	t := c.expr(e)
	if t != nil && !t.IsScalar() {
		c.errorf(e.Position(), "%s must be of type int or real. Instead found type %s.", what, *t)
	}
}

func (c *checker) condInt(e Expr, what string) {
	t := c.expr(e)
	if t != nil && *t != TInt {
		c.errorf(e.Position(), "%s must be of type int. Instead found type %s.", what, *t)
	}
}

func (c *checker) ret(s *Return) {
	f := c.cx.fun
	if f == nil {
		if s.Value != nil {
			c.errorf(s.Pos, "Expression return statements may only be used inside returning function definitions.")
		}
		return
	}
	if s.Value == nil {
		if f.Ret != TVoid {
			c.errorf(s.Pos, "Void return statements may only be used inside non-returning function definitions (function '%s' returns %s).", f.Name, f.Ret)
		}
		return
	}
	t := c.expr(s.Value)
	if f.Ret == TVoid {
		c.errorf(s.Pos, "Expression return statements may only be used inside returning function definitions (function '%s' is void).", f.Name)
		return
	}
	if t != nil && !assignable(f.Ret, *t) {
		c.errorf(s.Value.Position(), "Invalid return type: function '%s' returns %s but this statement returns %s.", f.Name, f.Ret, *t)
	}
}

// varDecl checks a declaration and declares its name.
func (c *checker) varDecl(d *VarDecl) {
	global := d.Kind == GlobalVar
	for _, e := range d.Dims {
		c.size(e, global)
	}
	for _, e := range d.Sizes {
		c.size(e, global)
	}
	if d.Cons.Kind != ConsNone && !global {
		c.errorf(d.Pos, "Local variables cannot have constraints (variable '%s').", d.Name)
	}
	if global && d.Type.Base == Int && (d.Block == ParametersBlock || d.Block == TransformedParametersBlock) {
		c.errorf(d.Pos, "(Transformed) Parameters cannot be integers (variable '%s').", d.Name)
	}
	c.constraint(d)
	if d.Init != nil {
		if global && (d.Block == DataBlock || d.Block == ParametersBlock) {
			c.errorf(d.Init.Position(), "Cannot assign to variables in the %s block; only declarations are allowed there.", d.Block)
		}
		if t := c.expr(d.Init); t != nil && !assignable(d.Type, *t) {
			c.errorf(d.Init.Position(), "Ill-typed arguments supplied to assignment operator =: lhs has type %s and rhs has type %s.", d.Type, *t)
		}
	}
	c.declare(d)
}

// size checks an array or container size: an int, and data-only at the top level of a block.
func (c *checker) size(e Expr, global bool) {
	t := c.expr(e)
	if t == nil {
		return
	}
	if *t != TInt {
		c.errorf(e.Position(), "Size declarations must be of type int. Instead found type %s.", *t)
		return
	}
	if global && !e.Info().Data {
		c.errorf(e.Position(), "Non-data variables are not allowed in top level size declarations.")
	}
}

// constraint checks the types of a declaration's bound, offset and multiplier expressions.
func (c *checker) constraint(d *VarDecl) {
	check := func(e Expr, what string) {
		if e == nil {
			return
		}
		t := c.expr(e)
		if t == nil {
			return
		}
		elem := Type{Base: d.Type.Base}
		if elem.Base == Int {
			if *t != TInt {
				c.errorf(e.Position(), "Bounds of integer variable must be of type int. Found type %s.", *t)
			}
			return
		}
		if t.IsScalar() || *t == d.Type || (t.Array == 0 && t.Base == d.Type.Base) {
			return
		}
		c.errorf(e.Position(), "The %s of '%s' must be an int, a real or of the variable's type %s. Instead found type %s.", what, d.Name, d.Type, *t)
	}
	check(d.Cons.Lower, "lower bound")
	check(d.Cons.Upper, "upper bound")
	if d.Type.Base == Int && (d.Cons.Offset != nil || d.Cons.Multiplier != nil) {
		c.errorf(d.Pos, "Integer variables cannot have an offset or multiplier (variable '%s').", d.Name)
		return
	}
	check(d.Cons.Offset, "offset")
	check(d.Cons.Multiplier, "multiplier")
}

var compoundOps = map[string]string{"+=": "add", "-=": "subtract", "*=": "multiply", "/=": "divide", ".*=": "elt_multiply", "./=": "elt_divide"}

func (c *checker) assign(s *Assign) {
	root := s.LHS
	for {
		if ix, ok := root.(*IndexExpr); ok {
			root = ix.X
			continue
		}
		if pe, ok := root.(*Paren); ok {
			root = pe.X
			continue
		}
		break
	}
	id, ok := root.(*Ident)
	if !ok {
		c.errorf(s.LHS.Position(), "Left hand side of an assignment must be a variable, possibly indexed.")
		c.expr(s.RHS)
		return
	}
	lt := c.expr(s.LHS)
	rt := c.expr(s.RHS)
	d := id.Decl
	if d != nil {
		s.Var = d
		switch {
		case d.Kind == ParamVar:
			c.errorf(id.Pos, "Cannot assign to function argument or loop identifier '%s'.", d.Name)
		case d.Kind == LoopVar:
			c.errorf(id.Pos, "Cannot assign to function argument or loop identifier '%s'.", d.Name)
		case d.Kind == GlobalVar && d.Block != c.cx.block:
			c.errorf(id.Pos, "Cannot assign to global variable '%s' declared in previous blocks.", d.Name)
		}
	}
	if lt == nil || rt == nil {
		return
	}
	if s.Op == "=" {
		if !assignable(*lt, *rt) {
			c.errorf(s.Pos, "Ill-typed arguments supplied to assignment operator =: lhs has type %s and rhs has type %s.", *lt, *rt)
		}
		return
	}
	s.OpName = compoundOps[s.Op]
	sig, ret := c.resolve(s.OpName, []Type{*lt, *rt}, []Expr{s.LHS, s.RHS})
	if sig == nil || !assignable(*lt, ret) {
		c.errorf(s.Pos, "Ill-typed arguments supplied to assignment operator %s: lhs has type %s and rhs has type %s.", s.Op, *lt, *rt)
		return
	}
	s.Sig = sig
}

// assignable reports whether a value of type from may be assigned to type to: equal, or int
// promoted to real (elementwise in arrays).
func assignable(to, from Type) bool {
	if to == from {
		return true
	}
	return to.Array == from.Array && to.Base == Real && from.Base == Int
}

func (c *checker) tilde(s *Tilde) {
	if !c.inModelLike() {
		c.errorf(s.Pos, "Target can only be accessed in the model block or in definitions of functions with the suffix _lp.")
	}
	lt := c.expr(s.LHS)
	types := []Type{}
	exprs := append([]Expr{s.LHS}, s.Args...)
	bad := lt == nil
	if lt != nil {
		types = append(types, *lt)
	}
	for _, a := range s.Args {
		t := c.expr(a)
		if t == nil {
			bad = true
			continue
		}
		types = append(types, *t)
	}
	if bad {
		return
	}
	if suf := nameSuffix(s.Dist); suf != "" {
		c.errorf(s.Pos, "~ statement should refer to a distribution without its \"%s\" suffix. For example, \"target += normal_lpdf(y | 0, 1)\" should become \"y ~ normal(0, 1)\".", suf)
		return
	}
	found := false
	for _, suf := range []string{"_lpdf", "_lpmf"} {
		if fs := c.funs[s.Dist+suf]; len(fs) > 0 {
			found = true
			if f := c.matchUser(fs, types, exprs); f != nil {
				s.Fun, s.FullName = f, f.Name
				break
			}
		}
	}
	if s.Fun == nil {
		for _, suf := range []string{"_lupdf", "_lupmf", "_lpdf", "_lpmf"} {
			name := s.Dist + suf
			if len(c.tb.Lookup(name)) == 0 {
				continue
			}
			found = true
			if sig, _ := c.resolve(name, types, exprs); sig != nil {
				s.Sig, s.FullName = sig, name
				break
			}
		}
	}
	if s.Fun == nil && s.Sig == nil {
		if !found {
			var dists []string
			for _, n := range append(c.tb.Names(), c.visibleNames()...) {
				for _, suf := range []string{"_lpdf", "_lpmf"} {
					if strings.HasSuffix(n, suf) {
						dists = append(dists, strings.TrimSuffix(n, suf))
					}
				}
			}
			c.errorf(s.Pos, "Ill-typed arguments to '~' statement. No distribution '%s' was found.%s", s.Dist, didYouMean(s.Dist, dists))
		} else {
			avail := ""
			for _, suf := range []string{"_lpdf", "_lpmf"} {
				if fs := c.funs[s.Dist+suf]; len(fs) > 0 {
					avail += userSigList(fs)
				}
				if len(c.tb.Lookup(s.Dist+suf)) > 0 {
					avail += c.sigList(s.Dist + suf)
				}
			}
			c.errorf(s.Pos, "Ill-typed arguments to '~' statement. No distribution '%s' was found with the correct signature: found argument types %s.\nAvailable signatures for %s(y | ...):%s", s.Dist, typeList(types), s.Dist, avail)
		}
		return
	}
	if s.Trunc != nil {
		c.truncation(s, types, exprs)
	}
	if nonlinear(s.LHS) {
		c.d.warn(s.LHS.Position(), "Left-hand side of sampling statement (~) may contain a non-linear transform of a parameter or local variable. If it does, you need to include a target += statement with the log absolute determinant of the Jacobian of the transform.")
	}
}

// nonlinear reports whether e applies a function or a power to something that is not data:
// the case in which a ~ statement needs a Jacobian adjustment (stanc3 warns likewise).
func nonlinear(e Expr) bool {
	if e.Info().Data {
		return false
	}
	switch e := e.(type) {
	case *Call:
		if !reshaping[e.Name] {
			return true
		}
		for _, a := range e.Args {
			if nonlinear(a) {
				return true
			}
		}
		return false
	case *Binary:
		if e.Op == "^" || e.Op == ".^" || ((e.Op == "/" || e.Op == "./") && !e.R.Info().Data) || ((e.Op == "*" || e.Op == ".*") && !e.L.Info().Data && !e.R.Info().Data) {
			return true
		}
		return nonlinear(e.L) || nonlinear(e.R)
	case *Unary:
		return nonlinear(e.X)
	case *Paren:
		return nonlinear(e.X)
	case *Ternary:
		return nonlinear(e.Then) || nonlinear(e.Else)
	case *IndexExpr:
		return nonlinear(e.X)
	case *ArrayExpr:
		for _, x := range e.Elems {
			if nonlinear(x) {
				return true
			}
		}
	case *RowVectorExpr:
		for _, x := range e.Elems {
			if nonlinear(x) {
				return true
			}
		}
	}
	return false
}

// reshaping are the built-ins that only select or rearrange elements (no Jacobian).
var reshaping = map[string]bool{
	"to_vector": true, "to_row_vector": true, "to_matrix": true, "to_array_1d": true,
	"to_array_2d": true, "col": true, "row": true, "segment": true, "head": true, "tail": true,
	"block": true, "sub_col": true, "sub_row": true, "append_row": true, "append_col": true,
	"rep_array": true, "rep_vector": true, "rep_row_vector": true, "rep_matrix": true,
}

// visibleNames lists the variables in scope and the user functions.
func (c *checker) visibleNames() []string {
	var out []string
	for s := c.sc; s != nil; s = s.parent {
		for n := range s.vars {
			out = append(out, n)
		}
	}
	for n := range c.funs {
		out = append(out, n)
	}
	return out
}

// didYouMean returns " Did you mean 'x'?" for the candidate closest to name within edit
// distance 2 (ties broken alphabetically), or "".
func didYouMean(name string, candidates []string) string {
	best, bestD := "", 3
	for _, cand := range candidates {
		if cand == name || abs(len(cand)-len(name)) > 2 {
			continue
		}
		d := editDistance(name, cand)
		if d < bestD || (d == bestD && cand < best) {
			best, bestD = cand, d
		}
	}
	if bestD > 2 {
		return ""
	}
	return " Did you mean '" + best + "'?"
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the optimal-string-alignment distance between a and b (insertions,
// deletions, substitutions and transpositions of adjacent characters cost 1), capped at 3:
// only distances up to 2 matter to didYouMean. Cost O(len(a)·len(b)).
func editDistance(a, b string) int {
	const capD = 3
	if len(a) > 64 || len(b) > 64 {
		return capD
	}
	pp := make([]int, len(b)+1) // row i-2
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return min(prev[len(b)], capD)
}

// truncation resolves the CDFs a T[L, U] needs on (bound, distribution arguments).
func (c *checker) truncation(s *Tilde, types []Type, exprs []Expr) {
	tr := s.Trunc
	if !types[0].IsScalar() {
		c.errorf(tr.Pos, "Truncation is only defined if the left hand side of '~' is univariate (found type %s).", types[0])
	}
	resolveCDF := func(bound Expr, suffix string) (*Sig, *FunDef) {
		bt := c.expr(bound)
		if bt == nil {
			return nil, nil
		}
		if !bt.IsScalar() {
			c.errorf(bound.Position(), "Truncation bounds must be of type int or real. Instead found type %s.", *bt)
			return nil, nil
		}
		ts := append([]Type{*bt}, types[1:]...)
		es := append([]Expr{bound}, exprs[1:]...)
		name := s.Dist + suffix
		if fs := c.funs[name]; len(fs) > 0 {
			if f := c.matchUser(fs, ts, es); f != nil {
				return nil, f
			}
		}
		if sig, _ := c.resolve(name, ts, es); sig != nil {
			return sig, nil
		}
		c.errorf(tr.Pos, "Truncation requires the function '%s' with argument types %s; none was found.", name, typeList(ts))
		return nil, nil
	}
	if tr.Hi != nil {
		tr.LCDF, tr.LCDFFun = resolveCDF(tr.Hi, "_lcdf")
		if tr.Lo != nil {
			// T[L, U] subtracts log(F(U) - F(L)): the lcdf at L too (the same signature)
			resolveCDF(tr.Lo, "_lcdf")
		}
	} else if tr.Lo != nil {
		tr.LCCDF, tr.LCCDFFun = resolveCDF(tr.Lo, "_lccdf")
	}
}

// ---------------------------------------------------------------------------------------------
// Expressions

// expr infers e's type, fills its ExprInfo and returns the type (nil after an error in e,
// already reported).
func (c *checker) expr(e Expr) *Type {
	t, ok := c.expr1(e)
	if !ok {
		return nil
	}
	e.Info().Type = t
	if t.Base == Int {
		e.Info().Data = true
	}
	return &t
}

func (c *checker) expr1(e Expr) (Type, bool) {
	switch e := e.(type) {
	case *IntLit:
		e.Data = true
		return TInt, true
	case *RealLit:
		e.Data = true
		return TReal, true
	case *StringLit:
		c.errorf(e.Pos, "String literals are allowed only in print, reject and fatal_error.")
		return Type{}, false
	case *Paren:
		t := c.expr(e.X)
		if t == nil {
			return Type{}, false
		}
		e.Data = e.X.Info().Data
		return *t, true
	case *Ident:
		if d := c.lookup(e.Name); d != nil {
			e.Decl = d
			e.Data = isDataDecl(d)
			if d.Kind == LoopVar && d.Type.Base == Int {
				e.Data = true
			}
			return d.Type, true
		}
		if fs := c.funs[e.Name]; len(fs) > 0 {
			e.Fun = fs[0]
			if fs[0].Def != nil {
				e.Fun = fs[0].Def
			}
			e.Data = true
			return Type{Base: Func}, true
		}
		c.errorf(e.Pos, "Identifier '%s' not in scope.%s", e.Name, didYouMean(e.Name, c.visibleNames()))
		return Type{}, false
	case *TargetExpr:
		if !c.inModelLike() {
			c.errorf(e.Pos, "Target can only be accessed in the model block or in definitions of functions with the suffix _lp.")
		}
		return TReal, true
	case *Call:
		return c.call(e, false)
	case *Binary:
		return c.binary(e)
	case *Unary:
		return c.unary(e)
	case *Ternary:
		c.cond(e.Cond, "Condition in ternary expression")
		a, b := c.expr(e.Then), c.expr(e.Else)
		if a == nil || b == nil {
			return Type{}, false
		}
		e.Data = e.Cond.Info().Data && e.Then.Info().Data && e.Else.Info().Data
		if a.Base == Func || b.Base == Func || a.Base == Void || b.Base == Void {
			c.errorf(e.Pos, "A conditional expression cannot choose between functions or void values.")
			return Type{}, false
		}
		switch {
		case assignable(*a, *b):
			return *a, true
		case assignable(*b, *a):
			return *b, true
		}
		c.errorf(e.Pos, "Type mismatch in ternary expression, expression when true is: %s; expression when false is: %s.", *a, *b)
		return Type{}, false
	case *IndexExpr:
		return c.index(e)
	case *ArrayExpr:
		var el *Type
		e.Data = true
		for _, x := range e.Elems {
			t := c.expr(x)
			if t == nil {
				return Type{}, false
			}
			e.Data = e.Data && x.Info().Data
			if t.Base == Func || t.Base == Void {
				c.errorf(x.Position(), "Array expression elements cannot have type %s.", *t)
				return Type{}, false
			}
			switch {
			case el == nil || assignable(*t, *el):
				el = t
			case assignable(*el, *t):
			default:
				c.errorf(x.Position(), "Array expression must have entries of consistent type: found %s and %s.", *el, *t)
				return Type{}, false
			}
		}
		if el == nil {
			return Type{}, false
		}
		return Type{Base: el.Base, Array: el.Array + 1}, true
	case *RowVectorExpr:
		e.Data = true
		scalars, rows := 0, 0
		for _, x := range e.Elems {
			t := c.expr(x)
			if t == nil {
				return Type{}, false
			}
			e.Data = e.Data && x.Info().Data
			switch {
			case t.IsScalar():
				scalars++
			case *t == TRowVector:
				rows++
			default:
				c.errorf(x.Position(), "Row_vector expression must have all int and real entries or all row_vector entries. Found type %s.", *t)
				return Type{}, false
			}
		}
		if rows > 0 && scalars > 0 {
			c.errorf(e.Pos, "Row_vector expression must have all int and real entries or all row_vector entries.")
			return Type{}, false
		}
		if rows > 0 {
			return TMatrix, true
		}
		return TRowVector, true
	}
	c.errorf(e.Position(), "Unsupported expression.")
	return Type{}, false
}

// isDataDecl reports whether a variable's value never depends on the parameters.
func isDataDecl(d *VarDecl) bool {
	switch d.Kind {
	case ParamVar:
		return d.DataOnly || d.Type.Base == Int
	case LoopVar:
		return d.DataOnly || d.Type.Base == Int
	}
	if d.Type.Base == Int {
		return true
	}
	return d.Block == DataBlock || d.Block == TransformedDataBlock
}

// index types x[indices] (Stan Reference Manual, "Indexing"): single indexes drop a
// dimension, multiple indexes and ranges keep it.
func (c *checker) index(e *IndexExpr) (Type, bool) {
	xt := c.expr(e.X)
	ok := xt != nil
	data := ok && e.X.Info().Data
	for _, ix := range e.Indices {
		for _, b := range []Expr{ix.Lo, ix.Hi} {
			if b == nil {
				continue
			}
			t := c.expr(b)
			if t == nil {
				ok = false
				continue
			}
			switch {
			case *t == TInt:
			case ix.Kind == IndexSingle && *t == (Type{Base: Int, Array: 1}):
				ix.Kind = IndexMulti
			case ix.Kind == IndexRange:
				c.errorf(b.Position(), "Range bound must be of type int. Instead found type %s.", *t)
				ok = false
			default:
				c.errorf(b.Position(), "Index must be of type int or array[] int or must be a range. Instead found type %s.", *t)
				ok = false
			}
		}
	}
	if !ok {
		return Type{}, false
	}
	e.Data = data
	t := *xt
	cont := 0
	switch t.Base {
	case Vector, RowVector:
		cont = 1
	case Matrix:
		cont = 2
	}
	if t.Base == Func || t.Base == Void {
		cont = -t.Array
	}
	if n := len(e.Indices); n > t.Array+cont {
		c.errorf(e.Pos, "Too many indexes, expression dimensions=%d, indexes found=%d.", t.Array+cont, n)
		return Type{}, false
	}
	arr := 0
	k := 0
	for ; k < len(e.Indices) && k < t.Array; k++ {
		if e.Indices[k].Kind != IndexSingle {
			arr++
		}
	}
	if k < t.Array {
		arr += t.Array - k
	}
	rest := e.Indices[k:]
	base := t.Base
	single := func(i int) bool { return rest[i].Kind == IndexSingle }
	switch {
	case len(rest) == 0:
	case base == Vector || base == RowVector:
		if single(0) {
			base = Real
		}
	case base == Matrix && len(rest) == 1:
		if single(0) {
			base = RowVector
		}
	case base == Matrix:
		switch {
		case single(0) && single(1):
			base = Real
		case single(0):
			base = RowVector
		case single(1):
			base = Vector
		}
	}
	return Type{Base: base, Array: arr}, true
}

func (c *checker) binary(e *Binary) (Type, bool) {
	l, r := c.expr(e.L), c.expr(e.R)
	if l == nil || r == nil {
		return Type{}, false
	}
	e.Data = e.L.Info().Data && e.R.Info().Data
	if e.Op == "/" && *l == TInt && *r == TInt {
		c.d.warn(e.R.Position(), "Found int division: values will be rounded towards zero; if this is not intended, write one operand as a real (e.g. 1.0 * a / b).")
	}
	sig, ret := c.resolve(e.Name, []Type{*l, *r}, []Expr{e.L, e.R})
	if sig == nil {
		c.errorf(e.Pos, "Ill-typed arguments supplied to infix operator %s. Available signatures:%s\nInstead supplied arguments of incompatible type: %s, %s.", e.Op, c.sigList(e.Name), *l, *r)
		return Type{}, false
	}
	e.Sig = sig
	if ret.Base == Int {
		e.Data = true
	}
	return ret, true
}

func (c *checker) unary(e *Unary) (Type, bool) {
	x := c.expr(e.X)
	if x == nil {
		return Type{}, false
	}
	e.Data = e.X.Info().Data
	if e.Name == "plus" {
		if x.Base == Func || x.Base == Void || x.Array > 0 {
			c.errorf(e.Pos, "Ill-typed arguments supplied to prefix operator +: found type %s.", *x)
			return Type{}, false
		}
		return *x, true
	}
	sig, ret := c.resolve(e.Name, []Type{*x}, []Expr{e.X})
	if sig == nil {
		kind := "prefix"
		if e.Op == "'" {
			kind = "postfix"
		}
		c.errorf(e.Pos, "Ill-typed arguments supplied to %s operator %s. Available signatures:%s\nInstead supplied argument of incompatible type: %s.", kind, e.Op, c.sigList(e.Name), *x)
		return Type{}, false
	}
	e.Sig = sig
	return ret, true
}

// call checks a function call; stmt says it is a statement (a void function is expected).
func (c *checker) call(e *Call, stmt bool) (Type, bool) {
	if len(c.funs[e.Name]) == 0 && len(c.tb.Lookup(e.Name)) == 0 {
		if nn := c.oldDensityName(e.Name); nn != "" {
			c.d.warn(e.Pos, fmt.Sprintf("%s is the pre-2.10 name of %s(y | ...), removed in Stan 2.33; use %s.", e.Name, nn, nn))
			e.Name = nn
			e.Bar = len(e.Args) > 1 // the old names took the variate with a comma
		}
	}
	types := make([]Type, 0, len(e.Args))
	ok := true
	e.Data = true
	for _, a := range e.Args {
		t := c.expr(a)
		if t == nil {
			ok = false
			continue
		}
		if t.Base == Void {
			c.errorf(a.Position(), "A void function call cannot be an argument.")
			ok = false
		}
		e.Data = e.Data && a.Info().Data
		types = append(types, *t)
	}
	suf := nameSuffix(e.Name)
	isDensity := suf == "_lpdf" || suf == "_lupdf" || suf == "_lpmf" || suf == "_lupmf" || suf == "_lcdf" || suf == "_lccdf" || strings.HasSuffix(e.Name, "_cdf")
	if e.Bar && !isDensity {
		c.errorf(e.Pos, "Only functions with names ending in _lpdf, _lupdf, _lpmf, _lupmf, _cdf, _lcdf, _lccdf can make use of conditional notation.")
	}
	if !e.Bar && isDensity && len(e.Args) > 1 {
		if strings.HasSuffix(e.Name, "_cdf") { // Stan before 2.27 wrote foo_cdf(y, theta)
			c.d.warn(e.Pos, fmt.Sprintf("Use of the _cdf suffix without a vertical bar (|) between its first two arguments is deprecated; write %s(y | ...).", e.Name))
		} else {
			c.errorf(e.Pos, "Probability functions with suffixes _lpdf, _lupdf, _lpmf, _lupmf, _cdf, _lcdf and _lccdf, require a vertical bar (|) between the first two arguments.")
		}
	}
	c.suffixContext(e, suf)
	if !ok {
		return Type{}, false
	}
	// user-defined functions first; foo_lupdf calls the user's foo_lpdf
	uname := e.Name
	switch suf {
	case "_lupdf":
		uname = strings.TrimSuffix(e.Name, "_lupdf") + "_lpdf"
	case "_lupmf":
		uname = strings.TrimSuffix(e.Name, "_lupmf") + "_lpmf"
	}
	if fs := c.funs[uname]; len(fs) > 0 {
		f := c.matchUser(fs, types, e.Args)
		if f == nil {
			c.errorf(e.Pos, "Ill-typed arguments supplied to function '%s':\n%s\nAvailable signatures:%s", e.Name, typeList(types), userSigList(fs))
			return Type{}, false
		}
		e.Fun = f
		return c.callResult(e, f.Ret, stmt)
	}
	sigs := c.tb.Lookup(e.Name)
	if len(sigs) == 0 {
		if c.lookup(e.Name) != nil {
			c.errorf(e.Pos, "A returning function was expected but a non-function value '%s' was supplied.", e.Name)
		} else {
			names := c.tb.Names()
			for n := range c.funs {
				names = append(names, n)
			}
			c.errorf(e.Pos, "A returning function was expected but an undeclared identifier '%s' was supplied.%s", e.Name, didYouMean(e.Name, names))
		}
		return Type{}, false
	}
	sig, ret := c.resolve(e.Name, types, e.Args)
	if sig == nil {
		c.errorf(e.Pos, "Ill-typed arguments supplied to function '%s':\n%s\nAvailable signatures:%s", e.Name, typeList(types), c.sigList(e.Name))
		return Type{}, false
	}
	e.Sig = sig
	return c.callResult(e, ret, stmt)
}

// oldDensityName maps the pre-2.10 density names foo_log, foo_cdf_log and foo_ccdf_log to
// foo_lpdf or foo_lpmf, foo_lcdf and foo_lccdf when the new name exists ("" otherwise).
func (c *checker) oldDensityName(name string) string {
	for _, m := range []struct{ old, new string }{{"_ccdf_log", "_lccdf"}, {"_cdf_log", "_lcdf"}, {"_log", "_lpdf"}, {"_log", "_lpmf"}} {
		if base, ok := strings.CutSuffix(name, m.old); ok && base != "" {
			if nn := base + m.new; len(c.tb.Lookup(nn)) > 0 || len(c.funs[nn]) > 0 {
				return nn
			}
		}
	}
	return ""
}

func (c *checker) callResult(e *Call, ret Type, stmt bool) (Type, bool) {
	if stmt && ret != TVoid {
		c.errorf(e.Pos, "A non-returning function was expected but a returning function '%s' was supplied.", e.Name)
		return Type{}, false
	}
	if !stmt && ret == TVoid {
		c.errorf(e.Pos, "A returning function was expected but a non-returning function '%s' was supplied.", e.Name)
		return Type{}, false
	}
	if ret.Base == Int {
		e.Data = true
	}
	if strings.HasSuffix(e.Name, "_rng") {
		e.Data = false // random: not a function of the data alone
	}
	return ret, true
}

// suffixContext enforces where _rng, _lp and _lupdf/_lupmf functions may be called.
func (c *checker) suffixContext(e *Call, suf string) {
	fs := ""
	if c.cx.fun != nil {
		fs = c.cx.fun.Suffix()
	}
	switch suf {
	case "_rng":
		if !(c.cx.block == TransformedDataBlock || c.cx.block == GeneratedQuantitiesBlock || fs == "_rng") {
			c.errorf(e.Pos, "Random number generators are only allowed in the transformed data block, the generated quantities block or user-defined functions with names ending in _rng.")
		}
	case "_lp":
		if !(c.cx.block == ModelBlock || c.cx.block == TransformedParametersBlock || fs == "_lp") {
			c.errorf(e.Pos, "Functions with names ending in _lp may only be called in the model block, the transformed parameters block or function definitions with names ending in _lp.")
		}
	case "_lupdf", "_lupmf":
		if !(c.cx.block == ModelBlock || fs == "_lpdf" || fs == "_lpmf" || fs == "_lp") {
			c.errorf(e.Pos, "Functions with names ending in _lupdf and _lupmf can only be used in the model block or user-defined functions with names ending in _lpdf, _lpmf or _lp.")
		}
	}
}

// matchUser returns the first user function (its definition) whose parameters accept types.
func (c *checker) matchUser(fs []*FunDef, types []Type, args []Expr) *FunDef {
	for _, f := range fs {
		if len(f.Params) != len(types) {
			continue
		}
		ok := true
		for i, p := range f.Params {
			if !assignable(p.Type, types[i]) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for i, p := range f.Params {
			if p.DataOnly && !args[i].Info().Data && !c.dataContext() {
				c.errorf(args[i].Position(), "Function '%s' requires argument %d ('%s') to be data only, but the expression depends on parameters.", f.Name, i+1, p.Name)
			}
		}
		if f.Def != nil {
			return f.Def
		}
		return f
	}
	return nil
}

// dataContext reports that every value is data where the current statement runs (the
// transformed data and generated quantities blocks).
func (c *checker) dataContext() bool {
	return c.cx.block == TransformedDataBlock || c.cx.block == GeneratedQuantitiesBlock || c.cx.block == DataBlock
}

// resolve returns the first built-in signature under name that accepts types, and its return
// type (nil if none).
func (c *checker) resolve(name string, types []Type, args []Expr) (*Sig, Type) {
	sigs := c.tb.Lookup(name)
	for pass := 0; pass < 2; pass++ {
		for i := range sigs {
			s := &sigs[i]
			if !accepts(s, types, pass == 1) {
				continue
			}
			return c.resolved(name, s, types, args)
		}
	}
	return nil, Type{}
}

// resolved checks the data-only arguments of the chosen signature and returns its return type.
func (c *checker) resolved(name string, s *Sig, types []Type, args []Expr) (*Sig, Type) {
	for j, a := range s.Args {
		if a.DataOnly && j < len(args) && !args[j].Info().Data && !c.dataContext() {
			c.errorf(args[j].Position(), "Argument %d of '%s' must be data only (it may not depend on parameters).", j+1, name)
		}
	}
	ret := s.Ret
	if s.RetOf != nil {
		ret = s.RetOf(types)
	}
	return s, ret
}

// accepts reports whether signature s takes arguments of the given types; promote allows int
// → real promotion (Check tries every signature without promotion first, then with it, so
// that the most specific signature wins, as in Stan).
func accepts(s *Sig, types []Type, promote bool) bool {
	if len(s.Args) != len(types) {
		return false
	}
	for i, a := range s.Args {
		if !classAccepts(a, types[i], promote) {
			return false
		}
	}
	return true
}

func classAccepts(a Arg, t Type, promote bool) bool {
	switch a.Class {
	case Exact:
		return a.Type == t || (promote && assignable(a.Type, t))
	case Reals:
		if t.Base == Int && !promote {
			return false
		}
		return (t.Array == 0 && t.Base != Matrix && t.Base != Func && t.Base != Void) || (t.Array == 1 && (t.Base == Int || t.Base == Real))
	case Ints:
		return t.Base == Int && t.Array <= 1
	case Vectors:
		return (t.Base == Vector || t.Base == RowVector) && t.Array <= 1
	case Any:
		return t.Base != Void && t.Base != Func // a function only where the signature says so
	}
	return false
}

// typeList formats argument types as "(int, vector)".
func typeList(ts []Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

var classNames = [...]string{Exact: "", Reals: "reals", Ints: "ints", Vectors: "vectors", Any: "any"}

// sigList lists the built-in signatures under name, one a line (at most 12).
func (c *checker) sigList(name string) string {
	sigs := c.tb.Lookup(name)
	if len(sigs) == 0 {
		return " none (the built-in '" + name + "' is not implemented)"
	}
	var b strings.Builder
	for i, s := range sigs {
		if i == 12 {
			fmt.Fprintf(&b, "\n… and %d more", len(sigs)-12)
			break
		}
		parts := make([]string, len(s.Args))
		for j, a := range s.Args {
			if a.Class == Exact {
				parts[j] = a.Type.String()
			} else if int(a.Class) < len(classNames) {
				parts[j] = classNames[a.Class]
			}
			if a.DataOnly {
				parts[j] = "data " + parts[j]
			}
		}
		ret := s.Ret.String()
		if s.RetOf != nil {
			ret = "(depends on the arguments)"
		}
		fmt.Fprintf(&b, "\n(%s) => %s", strings.Join(parts, ", "), ret)
	}
	return b.String()
}

func userSigList(fs []*FunDef) string {
	var b strings.Builder
	for _, f := range fs {
		ts := make([]Type, len(f.Params))
		for i, p := range f.Params {
			ts[i] = p.Type
		}
		fmt.Fprintf(&b, "\n%s => %s", typeList(ts), f.Ret)
	}
	return b.String()
}
