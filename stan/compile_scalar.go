package stan

import (
	"errors"
	"math"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
)

// Scalar kernels: a loop nest of scalar real arithmetic — the recursions that cannot run in
// lanes (garch's σ_t from σ_{t−1}, an HMM's forward pass, an AR mean accumulated over lags) —
// compiled once into a straight-line trace of float64 instructions that runs as one tape
// node.
//
// A loop qualifies when every int in it (bounds, indexes) is a function of data, literals and
// the loop variables only, and every real in it is a scalar (an element of a container, a
// scalar local) computed by the arithmetic operators and the scalar functions below; the
// statements are local declarations of reals, assignments (= and the compound forms) to
// scalars and elements, `~` and `target +=` with the univariate continuous densities of at
// most two parameters, blocks, nested for loops, and if statements and ?: whose conditions
// are data (the branch taken is recorded).
// Because no control flow then depends on a parameter, the sequence of operations is the
// same at every evaluation: the compiler executes the loop nest once at compile time over
// symbolic registers and records it. The trace is in static single assignment form:
// register i < nc is a constant (data, literals, folded subexpressions), then come the
// inputs (the values of the non-data variables the loop reads, copied in at each
// evaluation), then one register per instruction. An evaluation runs the instructions
// forward (cost: one switch dispatch and a few flops per instruction, no tape node, no
// allocation) and the node's backward pass sweeps them in reverse with the adjoints in
// tape scratch memory. Outputs are the sum of the loop's log-density terms and the final
// values of the containers declared outside the loop that it writes (an element it does
// not write passes its input through), which replace those containers' values. Memory: the
// trace once per compiled program (at most maxKernelCode instructions of 20 bytes), and per
// evaluation one float64 of tape memory per register for the values and one for the adjoints.
//
// Anything outside this — an int the parameters decide, a vector-valued expression, a
// function call not listed, another distribution, an index out of range, break/continue, a
// condition on a parameter — makes the loop compile as before (lanes or the ordinary loop),
// which also reports the run-time errors Stan would.
//
// This is the classic trace ("Wengert list") form of reverse-mode AD (Griewank & Walther,
// "Evaluating Derivatives", 2nd ed., SIAM 2008, §3–4), specialised to a trace that can be
// recorded ahead of time because its control flow is data-determined.

// skOp is a scalar-kernel instruction's operation.
type skOp uint8

const (
	skAdd skOp = iota
	skSub
	skMul
	skDiv
	skNeg
	skSqrt
	skSquare
	skExp
	skLog
	skLog1p
	skExpm1
	skInvLogit
	skLogInvLogit
	skLog1m
	skFabs
	skPow
	skTanh
	skInv
	skLSE2   // log_sum_exp(a, b)
	skLSEN   // log_sum_exp over lists[a : a+b]
	skNormal // normal_lpdf(a | b, c), normalising constant included
	skAddC   // a + k (k a constant register folded into the instruction: b)
	skMulC   // a * k
	// Fused by the peephole pass (fuse): one instruction where the trace had two.
	skFma      // a + b*c
	skFmaSq    // a + b·c²
	skAdd3     // a + b + c
	skSqDiff   // (a − b)²
	skNormalK  // normal_lpdf(a | b, σ) with σ a positive constant: c indexes the constants 1/σ, log σ + log √(2π)
	skDist     // contFamilies[fam]'s log density of a given its one or two parameters b, c
	skCheck    // a, after contFamilies[fam]'s check of its argument b (an error if it fails)
	skInvScale // 1/a after normal's check of its scale a; always followed by skLogScale of a
	skLogScale // log a + log √(2π)
	skNormalV  // normal_lpdf(a | b, σ) with c the register of 1/σ (skInvScale) and c+1 that of log σ + log √(2π)
)

// skInstr is one instruction; its result is register base+i for instruction i.
type skInstr struct {
	op      skOp
	fam     uint8 // skDist's family: an index of contFamilies
	a, b, c int32
	pos     int32 // index into scalarKernel.poss of the statement or call (skNormal), or -1
}

// skInput is a variable the kernel reads: its slot and the registers its elements occupy.
type skInput struct {
	slot int
	base int32
	n    int
}

// skOutput is a container the kernel writes: the register holding each element's final value.
type skOutput struct {
	slot int
	ty   Type
	dims []int
	regs []int32
	off  int // offset in the node's value
}

// scalarKernel is a recorded loop nest; read-only after compilation, shared by concurrent
// evaluations.
type scalarKernel struct {
	code    []skInstr
	lists   []int32
	consts  []float64
	inputs  []skInput
	outputs []skOutput
	terms   []int32 // registers summed into target
	cterm   float64 // the constant part of the loop's log density
	base    int32   // register of instruction 0
	nreg    int
	nout    int
	poss    []Pos
}

// errNotKernel reports a loop that does not compile as a scalar kernel.
var errNotKernel = errors.New("stan: not a scalar kernel")

// maxKernelCode bounds a kernel's trace (instructions); larger loops compile as loops.
const maxKernelCode = 1 << 18

// Register references during recording: kind in the low 2 bits, index above.
const (
	refConst = 0
	refInput = 1
	refInstr = 2
)

type skRef int32

func mkRef(kind, i int) skRef { return skRef(i<<2 | kind) }
func (r skRef) kind() int     { return int(r) & 3 }
func (r skRef) index() int    { return int(r) >> 2 }

// skVar is a container (or scalar) during recording: the register of each element.
type skVar struct {
	dims  []int
	regs  []skRef
	ext   bool // declared outside the kernel
	input int  // index in rec.inputs, or -1
	wrote bool
	slot  int
	ty    Type
}

// skRec records a kernel.
type skRec struct {
	c      *compiler
	env    map[*VarDecl]int // loop variables' values
	vars   map[*VarDecl]*skVar
	order  []*VarDecl // external variables in first-mention order
	consts []float64
	cidx   map[float64]int
	nanC   int
	ninput int
	inputs []skInput
	code   []skInstr
	lists  []skRef // operand lists (relocated at the end)
	ops    [][3]skRef
	terms  []skRef
	cterm  float64
	poss   []Pos
	cse    map[skKey]skRef
	npair  map[float64]int // σ → the constants of skNormalK
}

// scalarLoop compiles s as a scalar kernel, or returns errNotKernel.
func (c *compiler) scalarLoop(s *For) (execFn, error) {
	r := &skRec{c: c, env: map[*VarDecl]int{}, vars: map[*VarDecl]*skVar{}, cidx: map[float64]int{}, nanC: -1, cse: map[skKey]skRef{}, npair: map[float64]int{}}
	if !r.stmt(s) || len(r.code) == 0 {
		return nil, errNotKernel
	}
	k := r.finish()
	c.kernels++
	return k.run, nil
}

// hasInnerLoop reports whether s contains a for loop.
func hasInnerLoop(s Stmt) bool {
	switch s := s.(type) {
	case *For:
		return true
	case *BlockStmt:
		for _, x := range s.Stmts {
			if hasInnerLoop(x) {
				return true
			}
		}
	case *If:
		return hasInnerLoop(s.Then) || s.Else != nil && hasInnerLoop(s.Else)
	}
	return false
}

// ---------------------------------------------------------------------------------------------
// Recording

func (r *skRec) konst(x float64) skRef {
	if math.IsNaN(x) {
		if r.nanC < 0 {
			r.nanC = len(r.consts)
			r.consts = append(r.consts, x)
		}
		return mkRef(refConst, r.nanC)
	}
	if i, ok := r.cidx[x]; ok && (x != 0 || !math.Signbit(x)) {
		return mkRef(refConst, i)
	}
	r.cidx[x] = len(r.consts)
	r.consts = append(r.consts, x)
	return mkRef(refConst, len(r.consts)-1)
}

// constVal is the value of a constant reference.
func (r *skRec) constVal(a skRef) (float64, bool) {
	if a.kind() != refConst {
		return 0, false
	}
	return r.consts[a.index()], true
}

// emit appends an instruction, folding it when every operand is a constant.
func (r *skRec) emit(op skOp, a, b, c skRef, pos int32) (skRef, bool) {
	if len(r.code) >= maxKernelCode {
		return 0, false
	}
	switch op {
	case skLSEN:
	default:
		n := opArity(op)
		allConst := true
		var v [3]float64
		xs := [3]skRef{a, b, c}
		for j, x := range xs[:n] {
			val, ok := r.constVal(x)
			if !ok {
				allConst = false
				break
			}
			v[j] = val
		}
		if allConst {
			y, err := skEval(op, v[0], v[1], v[2])
			if err != nil {
				return 0, false // fails at every evaluation: leave it to the ordinary loop's error
			}
			return r.konst(y), true
		}
	}
	// Common subexpressions: the same operation on the same registers is the same value
	// (registers are assigned once), so loop-invariant work — log(theta[j, k]) inside a
	// loop over t — is done once.
	key := skKey{op: op, a: a, b: b, c: c}
	if x, ok := r.cse[key]; ok {
		return x, true
	}
	r.code = append(r.code, skInstr{op: op, pos: pos})
	r.ops = append(r.ops, [3]skRef{a, b, c})
	x := mkRef(refInstr, len(r.code)-1)
	r.cse[key] = x
	return x, true
}

type skKey struct {
	op      skOp
	fam     uint8
	a, b, c skRef
}

// dist records the log density of family fam (np ≤ 2 parameters) at y.
func (r *skRec) dist(fam int, y Expr, ps []Expr, p Pos) (skRef, bool) {
	f := &contFamilies[fam]
	if len(ps) != f.np || f.np < 1 || f.np > 2 || f.kern == nil || f.name == "uniform" {
		return 0, false
	}
	var ops [3]skRef
	var ok bool
	if ops[0], ok = r.expr(y); !ok {
		return 0, false
	}
	for j, e := range ps {
		if ops[j+1], ok = r.expr(e); !ok {
			return 0, false
		}
	}
	if f.np == 1 {
		ops[2] = r.konst(0)
	}
	if f.name == "exponential" {
		// log λ − λ·y with λ checked and its logarithm computed once per λ (an HMM's
		// emission densities share them across time steps).
		lam, ok := r.check(fam, 1, ops[1], p)
		if !ok {
			return 0, false
		}
		yv, yc := r.constVal(ops[0])
		if yc && passes(f.checks[0], yv) {
			lg, ok := r.emit(skLog, lam, 0, 0, -1)
			if !ok {
				return 0, false
			}
			return r.emit(skFma, lg, lam, r.konst(-yv), -1)
		}
	}
	var vals [3]float64
	allConst := true
	for j := range f.np + 1 {
		v, ok := r.constVal(ops[j])
		allConst = allConst && ok
		vals[j] = v
	}
	if allConst {
		v, err := skDistEval(f, vals[0], vals[1], vals[2])
		if err != nil {
			return 0, false
		}
		return r.konst(v), true
	}
	key := skKey{skDist, uint8(fam), ops[0], ops[1], ops[2]}
	if x, ok := r.cse[key]; ok {
		return x, true
	}
	if len(r.code) >= maxKernelCode {
		return 0, false
	}
	r.code = append(r.code, skInstr{op: skDist, fam: uint8(fam), pos: r.pos(p)})
	r.ops = append(r.ops, ops)
	x := mkRef(refInstr, len(r.code)-1)
	r.cse[key] = x
	return x, true
}

// passes reports whether x passes check k (checkVals's conditions, without the message).
func passes(k pcheck, x float64) bool {
	switch k {
	case chkNotNaN:
		return !math.IsNaN(x)
	case chkFinite:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case chkPositive:
		return x > 0
	case chkPositiveFinite:
		return x > 0 && !math.IsInf(x, 1)
	case chkNonneg:
		return x >= 0
	case chkUnit:
		return x >= 0 && x <= 1
	}
	return true
}

// check records family fam's check of its argument j (0 the variate) on x: x itself when it
// is a constant that passes, else an instruction passing x through (once per x).
func (r *skRec) check(fam, j int, x skRef, p Pos) (skRef, bool) {
	f := &contFamilies[fam]
	if v, ok := r.constVal(x); ok {
		return x, passes(f.checks[j], v)
	}
	key := skKey{op: skCheck, fam: uint8(fam), a: x, b: skRef(j)}
	if y, ok := r.cse[key]; ok {
		return y, true
	}
	if len(r.code) >= maxKernelCode {
		return 0, false
	}
	r.code = append(r.code, skInstr{op: skCheck, fam: uint8(fam), pos: r.pos(p)})
	r.ops = append(r.ops, [3]skRef{x, skRef(j), 0})
	y := mkRef(refInstr, len(r.code)-1)
	r.cse[key] = y
	return y, true
}

// family returns the index in contFamilies of the family named name.
func family(name string) (int, bool) {
	for i := range contFamilies {
		if contFamilies[i].name == name {
			return i, true
		}
	}
	return 0, false
}

// skDistEval is family f's log density with Stan's argument checks.
func skDistEval(f *contFamily, y, p1, p2 float64) (float64, error) {
	vs := [3]float64{y, p1, p2}
	for j := range f.np + 1 {
		if !passes(f.checks[j], vs[j]) {
			return 0, checkVals(f.name+"_lpdf", f.labels[j], f.checks[j], vs[j:j+1], false)
		}
	}
	v, _, _ := f.kern(y, [3]float64{p1, p2}, kLpdf)
	return v, nil
}

func opArity(op skOp) int {
	switch op {
	case skAdd, skSub, skMul, skDiv, skPow, skLSE2, skAddC, skMulC, skSqDiff:
		return 2
	case skNormal, skNormalK, skNormalV, skFma, skFmaSq, skAdd3, skDist:
		return 3
	}
	return 1
}

func (r *skRec) pos(p Pos) int32 {
	r.poss = append(r.poss, p)
	return int32(len(r.poss) - 1)
}

// dimsOf returns the dims of d (data: as read; others: their size expressions evaluated).
func (r *skRec) dimsOf(d *VarDecl) ([]int, bool) {
	if g, ok := r.c.globals[d]; ok {
		return g.dims, true
	}
	var out []int
	for _, e := range append(append([]Expr(nil), d.Dims...), d.Sizes...) {
		v, ok := r.intOf(e)
		if !ok || v < 0 {
			return nil, false
		}
		out = append(out, v)
	}
	if d.Type.Base == Matrix && len(d.Sizes) == 1 {
		out = append(out, out[len(out)-1])
	}
	return out, true
}

// variable returns the recording state of d, making it on first mention (an external real
// variable: data become constants, others inputs).
func (r *skRec) variable(d *VarDecl) (*skVar, bool) {
	if v, ok := r.vars[d]; ok {
		return v, true
	}
	if d.Type.Base != Real && d.Type.Base != Vector && d.Type.Base != RowVector && d.Type.Base != Matrix {
		return nil, false
	}
	slot, ok := r.c.cur.slot[d]
	if !ok {
		return nil, false
	}
	dims, ok := r.dimsOf(d)
	if !ok {
		return nil, false
	}
	v := &skVar{dims: dims, ext: true, input: -1, slot: slot, ty: d.Type}
	n := prod(dims)
	v.regs = make([]skRef, n)
	if g, ok := r.c.globals[d]; ok && g.x != nil && isDataDecl(d) {
		if len(g.x) != n {
			return nil, false
		}
		for j, x := range g.x {
			v.regs[j] = r.konst(x)
		}
	} else if isDataDecl(d) {
		return nil, false
	} else {
		v.input = len(r.inputs)
		r.inputs = append(r.inputs, skInput{slot: slot, base: int32(r.ninput), n: n})
		for j := range v.regs {
			v.regs[j] = mkRef(refInput, r.ninput+j)
		}
		r.ninput += n
	}
	r.vars[d] = v
	r.order = append(r.order, d)
	return v, true
}

// intOf evaluates an int expression of data, literals and loop variables.
func (r *skRec) intOf(e Expr) (int, bool) {
	switch e := e.(type) {
	case *Paren:
		return r.intOf(e.X)
	case *IntLit:
		return e.Value, true
	case *Ident:
		if e.Decl == nil {
			return 0, false
		}
		if v, ok := r.env[e.Decl]; ok {
			return v, true
		}
		if g, ok := r.c.globals[e.Decl]; ok && e.Decl.Type.Base == Int && e.Decl.Type.Array == 0 && len(g.ints) == 1 && isDataDecl(e.Decl) {
			return g.ints[0], true
		}
		return 0, false
	case *IndexExpr:
		id, ok := e.X.(*Ident)
		if !ok || id.Decl == nil || id.Decl.Type.Base != Int || !isDataDecl(id.Decl) {
			return 0, false
		}
		g, ok := r.c.globals[id.Decl]
		if !ok || g.ints == nil {
			return 0, false
		}
		j, ok := r.flat(g.dims, e.Indices)
		if !ok || j >= len(g.ints) {
			return 0, false
		}
		return g.ints[j], true
	case *Unary:
		if e.Type.Base != Int {
			return 0, false
		}
		v, ok := r.intOf(e.X)
		switch e.Name {
		case "minus":
			return -v, ok
		case "logical_negation":
			return boolInt(v == 0), ok
		}
		return 0, false
	case *Binary:
		if e.Type.Base != Int || e.Type.Array != 0 {
			return 0, false
		}
		a, ok := r.intOf(e.L)
		if !ok {
			return 0, false
		}
		b, ok := r.intOf(e.R)
		if !ok {
			return 0, false
		}
		switch e.Name {
		case "add":
			return a + b, true
		case "subtract":
			return a - b, true
		case "multiply":
			return a * b, true
		case "int_divide", "divide":
			if b == 0 {
				return 0, false
			}
			return a / b, true
		case "modulus":
			if b == 0 {
				return 0, false
			}
			return a % b, true
		case "logical_eq":
			return boolInt(a == b), true
		case "logical_neq":
			return boolInt(a != b), true
		case "logical_lt":
			return boolInt(a < b), true
		case "logical_lte":
			return boolInt(a <= b), true
		case "logical_gt":
			return boolInt(a > b), true
		case "logical_gte":
			return boolInt(a >= b), true
		case "logical_and":
			return boolInt(a != 0 && b != 0), true
		case "logical_or":
			return boolInt(a != 0 || b != 0), true
		}
	case *Ternary:
		if e.Type.Base != Int || e.Type.Array != 0 {
			return 0, false
		}
		x, ok := r.branch(e)
		if !ok {
			return 0, false
		}
		return r.intOf(x)
	}
	return 0, false
}

// branch is the arm of cond ? then : else that a data condition selects (known when the trace
// is recorded).
func (r *skRec) branch(e *Ternary) (Expr, bool) {
	cond, ok := r.intOf(e.Cond)
	if !ok {
		return nil, false
	}
	if cond != 0 {
		return e.Then, true
	}
	return e.Else, true
}

// flat is the row-major element of dims selected by single indexes (1-based), when every
// index is an in-range data int and there is one per dimension.
func (r *skRec) flat(dims []int, ix []*Index) (int, bool) {
	if len(ix) != len(dims) {
		return 0, false
	}
	j := 0
	for k, x := range ix {
		if x.Kind != IndexSingle {
			return 0, false
		}
		v, ok := r.intOf(x.Lo)
		if !ok || v < 1 || v > dims[k] {
			return 0, false
		}
		j = j*dims[k] + v - 1
	}
	return j, true
}

// target resolves an lvalue or an element read x, x[i, …] (also x[i][j]) to its variable
// and the element's index.
func (r *skRec) element(e Expr) (*skVar, int, bool) {
	var ixs []*Index
	for {
		switch x := e.(type) {
		case *Paren:
			e = x.X
			continue
		case *IndexExpr:
			ixs = append(append([]*Index(nil), x.Indices...), ixs...)
			e = x.X
			continue
		}
		break
	}
	id, ok := e.(*Ident)
	if !ok || id.Decl == nil {
		return nil, 0, false
	}
	v, ok := r.variable(id.Decl)
	if !ok {
		return nil, 0, false
	}
	if len(ixs) == 0 {
		if len(v.dims) != 0 {
			return nil, 0, false
		}
		return v, 0, true
	}
	j, ok := r.flat(v.dims, ixs)
	return v, j, ok
}

// row resolves x or x[i, …] with fewer indexes than dims to the registers of the selected
// elements (the argument of log_sum_exp).
func (r *skRec) row(e Expr) ([]skRef, bool) {
	var ixs []*Index
	if ie, ok := e.(*IndexExpr); ok {
		ixs, e = ie.Indices, ie.X
	}
	id, ok := e.(*Ident)
	if !ok || id.Decl == nil {
		return nil, false
	}
	v, ok := r.variable(id.Decl)
	if !ok || len(ixs) >= len(v.dims) {
		return nil, false
	}
	j := 0
	for k, x := range ixs {
		if x.Kind != IndexSingle {
			return nil, false
		}
		i, ok := r.intOf(x.Lo)
		if !ok || i < 1 || i > v.dims[k] {
			return nil, false
		}
		j = j*v.dims[k] + i - 1
	}
	n := prod(v.dims[len(ixs):])
	return v.regs[j*n : (j+1)*n], true
}

func isScalarType(t Type) bool {
	return t.Array == 0 && (t.Base == Int || t.Base == Real)
}

// expr records a scalar real expression.
func (r *skRec) expr(e Expr) (skRef, bool) {
	info := e.Info()
	if !isScalarType(info.Type) {
		return 0, false
	}
	if info.Type.Base == Int {
		v, ok := r.intOf(e)
		if !ok {
			return 0, false
		}
		return r.konst(float64(v)), true
	}
	switch e := e.(type) {
	case *Paren:
		return r.expr(e.X)
	case *RealLit:
		return r.konst(e.Value), true
	case *Ident, *IndexExpr:
		v, j, ok := r.element(e)
		if !ok {
			return 0, false
		}
		return v.regs[j], true
	case *Unary:
		if e.Name != "minus" {
			return 0, false
		}
		a, ok := r.expr(e.X)
		if !ok {
			return 0, false
		}
		return r.emit(skNeg, a, 0, 0, -1)
	case *Binary:
		var op skOp
		switch e.Name {
		case "add":
			op = skAdd
		case "subtract":
			op = skSub
		case "multiply", "elt_multiply":
			op = skMul
		case "divide", "elt_divide":
			op = skDiv
		case "pow":
			op = skPow
		default:
			return 0, false
		}
		a, ok := r.expr(e.L)
		if !ok {
			return 0, false
		}
		b, ok := r.expr(e.R)
		if !ok {
			return 0, false
		}
		return r.binary(op, a, b)
	case *Call:
		return r.call(e)
	case *Ternary:
		x, ok := r.branch(e)
		if !ok {
			return 0, false
		}
		return r.expr(x)
	}
	return 0, false
}

// binary emits a op b, with a constant operand of + and * folded into the instruction.
func (r *skRec) binary(op skOp, a, b skRef) (skRef, bool) {
	_, ca := r.constVal(a)
	_, cb := r.constVal(b)
	if ca != cb && (op == skAdd || op == skMul) {
		if ca {
			a, b = b, a
		}
		if op == skAdd {
			return r.emit(skAddC, a, b, 0, -1)
		}
		return r.emit(skMulC, a, b, 0, -1)
	}
	return r.emit(op, a, b, 0, -1)
}

// unaryOp is the instruction of a one-argument built-in.
func unaryOp(name string) (skOp, bool) {
	switch name {
	case "sqrt":
		return skSqrt, true
	case "square":
		return skSquare, true
	case "exp":
		return skExp, true
	case "log":
		return skLog, true
	case "log1p":
		return skLog1p, true
	case "expm1":
		return skExpm1, true
	case "inv_logit":
		return skInvLogit, true
	case "log_inv_logit":
		return skLogInvLogit, true
	case "log1m":
		return skLog1m, true
	case "fabs", "abs":
		return skFabs, true
	case "tanh":
		return skTanh, true
	case "inv":
		return skInv, true
	}
	return 0, false
}

func (r *skRec) call(e *Call) (skRef, bool) {
	if e.Sig == nil || e.Fun != nil {
		return 0, false
	}
	args := e.Args
	if op, ok := unaryOp(e.Name); ok && len(args) == 1 {
		a, ok := r.expr(args[0])
		if !ok {
			return 0, false
		}
		return r.emit(op, a, 0, 0, -1)
	}
	switch e.Name {
	case "pow":
		if len(args) != 2 {
			return 0, false
		}
		a, ok := r.expr(args[0])
		if !ok {
			return 0, false
		}
		b, ok := r.expr(args[1])
		if !ok {
			return 0, false
		}
		return r.emit(skPow, a, b, 0, -1)
	case "normal_lpdf", "normal_lupdf":
		if len(args) != 3 {
			return 0, false
		}
		return r.normal(args[0], args[1], args[2], e.Pos)
	case "log_sum_exp":
		if len(args) == 2 && isScalarType(args[0].Info().Type) && isScalarType(args[1].Info().Type) {
			a, ok := r.expr(args[0])
			if !ok {
				return 0, false
			}
			b, ok := r.expr(args[1])
			if !ok {
				return 0, false
			}
			return r.emit(skLSE2, a, b, 0, -1)
		}
		if len(args) == 1 {
			t := args[0].Info().Type
			if !(t.Array == 1 && t.Base == Real) && !(t.Array == 0 && (t.Base == Vector || t.Base == RowVector)) {
				return 0, false
			}
			regs, ok := r.row(args[0])
			if !ok || len(regs) == 0 {
				return 0, false
			}
			if len(regs) == 2 { // an HMM of two states: the two-argument form
				return r.emit(skLSE2, regs[0], regs[1], 0, -1)
			}
			if len(r.code) >= maxKernelCode {
				return 0, false
			}
			off := len(r.lists)
			r.lists = append(r.lists, regs...)
			r.code = append(r.code, skInstr{op: skLSEN, pos: -1})
			r.ops = append(r.ops, [3]skRef{skRef(off), skRef(len(regs)), 0})
			return mkRef(refInstr, len(r.code)-1), true
		}
	}
	if base, ok := strings.CutSuffix(e.Name, "_lpdf"); ok && len(args) >= 2 {
		if fam, ok := family(base); ok {
			return r.dist(fam, args[0], args[1:], e.Pos)
		}
	}
	if base, ok := strings.CutSuffix(e.Name, "_lupdf"); ok && len(args) >= 2 {
		if fam, ok := family(base); ok {
			return r.dist(fam, args[0], args[1:], e.Pos)
		}
	}
	return 0, false
}

func (r *skRec) normal(y, mu, sigma Expr, p Pos) (skRef, bool) {
	a, ok := r.expr(y)
	if !ok {
		return 0, false
	}
	b, ok := r.expr(mu)
	if !ok {
		return 0, false
	}
	c, ok := r.expr(sigma)
	if !ok {
		return 0, false
	}
	_, ca := r.constVal(a)
	_, cb := r.constVal(b)
	if sv, ok := r.constVal(c); ok && sv > 0 && !math.IsInf(sv, 1) && !(ca && cb) {
		// A constant scale: no check, no logarithm per evaluation. The instruction addresses
		// the constants 1/σ and log σ + log √(2π) as an adjacent pair, made once per σ.
		k, ok := r.npair[sv]
		if !ok {
			k = len(r.consts)
			r.consts = append(r.consts, 1/sv, math.Log(sv)+lnSqrt2Pi)
			r.npair[sv] = k
		}
		return r.emit(skNormalK, a, b, mkRef(refConst, k), r.pos(p))
	}
	if _, cc := r.constVal(c); !cc && !(ca && cb) {
		// A parameter scale: its check, reciprocal and logarithm once per σ (an AR model's
		// observations share them).
		inv, ok := r.scale(c, p)
		if !ok {
			return 0, false
		}
		return r.emit(skNormalV, a, b, inv, r.pos(p))
	}
	return r.emit(skNormal, a, b, c, r.pos(p))
}

// scale records 1/σ and log σ + log √(2π) as adjacent instructions, once per σ, and returns
// the first.
func (r *skRec) scale(sigma skRef, p Pos) (skRef, bool) {
	key := skKey{op: skInvScale, a: sigma}
	if x, ok := r.cse[key]; ok {
		return x, true
	}
	if len(r.code)+2 > maxKernelCode {
		return 0, false
	}
	r.code = append(r.code, skInstr{op: skInvScale, pos: r.pos(p)}, skInstr{op: skLogScale, pos: -1})
	r.ops = append(r.ops, [3]skRef{sigma, 0, 0}, [3]skRef{sigma, 0, 0})
	x := mkRef(refInstr, len(r.code)-2)
	r.cse[key] = x
	return x, true
}

// assignTo writes val to element j of v.
func (r *skRec) assignTo(v *skVar, j int, val skRef) {
	if v.ext {
		v.wrote = true
	}
	v.regs[j] = val
}

// stmt records one statement.
func (r *skRec) stmt(s Stmt) bool {
	switch s := s.(type) {
	case *BlockStmt:
		for _, x := range s.Stmts {
			if !r.stmt(x) {
				return false
			}
		}
		return true
	case *VarDecl:
		if s.Kind != LocalVar || s.Cons.Kind != ConsNone || (s.Type.Base != Real && s.Type.Base != Vector && s.Type.Base != RowVector && s.Type.Base != Matrix) {
			return false
		}
		dims, ok := r.dimsOf(s)
		if !ok {
			return false
		}
		v := &skVar{dims: dims, input: -1, regs: make([]skRef, prod(dims)), ty: s.Type}
		for j := range v.regs {
			v.regs[j] = r.konst(math.NaN())
		}
		r.vars[s] = v
		if s.Init != nil {
			if len(dims) != 0 {
				return false
			}
			x, ok := r.expr(s.Init)
			if !ok {
				return false
			}
			v.regs[0] = x
		}
		return true
	case *Assign:
		if s.Var == nil || s.Var.Type.Base == Int {
			return false
		}
		v, j, ok := r.element(s.LHS)
		if !ok || !isScalarType(s.LHS.Info().Type) {
			return false
		}
		if v.ext && isDataDecl(s.Var) {
			return false
		}
		rhs, ok := r.expr(s.RHS)
		if !ok {
			return false
		}
		old := v.regs[j]
		switch s.Op {
		case "=":
		case "+=":
			rhs, ok = r.binary(skAdd, old, rhs)
		case "-=":
			rhs, ok = r.emit(skSub, old, rhs, 0, -1)
		case "*=", ".*=":
			rhs, ok = r.binary(skMul, old, rhs)
		case "/=", "./=":
			rhs, ok = r.emit(skDiv, old, rhs, 0, -1)
		default:
			return false
		}
		if !ok {
			return false
		}
		r.assignTo(v, j, rhs)
		return true
	case *Tilde:
		if s.Fun != nil || s.Trunc != nil || !isScalarType(s.LHS.Info().Type) {
			return false
		}
		var x skRef
		var ok bool
		if s.Dist == "normal" && len(s.Args) == 2 {
			x, ok = r.normal(s.LHS, s.Args[0], s.Args[1], s.Pos)
		} else if fam, isFam := family(s.Dist); isFam && len(s.Args) >= 1 {
			x, ok = r.dist(fam, s.LHS, s.Args, s.Pos)
		}
		if !ok {
			return false
		}
		r.term(x)
		return true
	case *TargetPlus:
		x, ok := r.expr(s.Expr)
		if !ok {
			return false
		}
		r.term(x)
		return true
	case *If:
		cond, ok := r.intOf(s.Cond)
		if !ok {
			return false
		}
		if cond != 0 {
			return r.stmt(s.Then)
		}
		if s.Else != nil {
			return r.stmt(s.Else)
		}
		return true
	case *For:
		lo, ok := r.intOf(s.Lo)
		if !ok {
			return false
		}
		hi, ok := r.intOf(s.Hi)
		if !ok {
			return false
		}
		for i := lo; i <= hi; i++ {
			r.env[s.Var] = i
			if !r.stmt(s.Body) {
				return false
			}
		}
		delete(r.env, s.Var)
		return true
	}
	return false
}

func (r *skRec) term(x skRef) {
	if v, ok := r.constVal(x); ok {
		r.cterm += v
		return
	}
	r.terms = append(r.terms, x)
}

// finish relocates the references into registers: constants, inputs, instructions.
func (r *skRec) finish() *scalarKernel {
	r.fuse()
	nc, ni := len(r.consts), r.ninput
	base := nc + ni
	reg := func(x skRef) int32 {
		switch x.kind() {
		case refConst:
			return int32(x.index())
		case refInput:
			return int32(nc + x.index())
		}
		return int32(base + x.index())
	}
	k := &scalarKernel{consts: r.consts, base: int32(base), nreg: base + len(r.code), poss: r.poss, cterm: r.cterm}
	k.code = r.code
	for i := range k.code {
		in := &k.code[i]
		o := r.ops[i]
		if in.op == skLSEN {
			in.a, in.b = int32(o[0]), int32(o[1])
			continue
		}
		if in.op == skCheck { // b is the checked argument's index, not a register
			in.a, in.b = reg(o[0]), int32(o[1])
			continue
		}
		in.a, in.b, in.c = reg(o[0]), reg(o[1]), reg(o[2])
	}
	k.lists = make([]int32, len(r.lists))
	for i, x := range r.lists {
		k.lists[i] = reg(x)
	}
	for _, x := range r.terms {
		k.terms = append(k.terms, reg(x))
	}
	k.inputs = r.inputs
	for i := range k.inputs {
		k.inputs[i].base += int32(nc)
	}
	k.nout = 1
	for _, d := range r.order {
		v := r.vars[d]
		if !v.wrote {
			continue
		}
		out := skOutput{slot: v.slot, ty: v.ty, dims: v.dims, off: k.nout, regs: make([]int32, len(v.regs))}
		for j, x := range v.regs {
			out.regs[j] = reg(x)
		}
		k.outputs = append(k.outputs, out)
		k.nout += len(v.regs)
	}
	return k
}

// fuse merges an instruction into its only user where a fused form exists — x + b·c
// (skFma, from a product used once), x + b·c² (skFmaSq), a + b + c (skAdd3) and (a − b)²
// (skSqDiff) — and compacts the trace.
func (r *skRec) fuse() {
	n := len(r.code)
	uses := make([]int32, n)
	use := func(x skRef) {
		if x.kind() == refInstr {
			uses[x.index()]++
		}
	}
	for i, in := range r.code {
		if in.op == skLSEN {
			continue
		}
		for _, x := range r.ops[i][:opArity(in.op)] {
			use(x)
		}
	}
	for _, x := range r.lists {
		use(x)
	}
	for _, x := range r.terms {
		use(x)
	}
	for _, v := range r.vars {
		if v.wrote {
			for _, x := range v.regs {
				use(x)
			}
		}
	}
	dead := make([]bool, n)
	once := func(x skRef, ops ...skOp) (int, bool) {
		if x.kind() != refInstr || uses[x.index()] != 1 {
			return 0, false
		}
		j := x.index()
		for _, op := range ops {
			if r.code[j].op == op && !dead[j] {
				return j, true
			}
		}
		return 0, false
	}
	fused := false
	for i := range r.code {
		in := &r.code[i]
		o := &r.ops[i]
		switch in.op {
		case skAdd:
			for side := 0; side < 2 && in.op == skAdd; side++ {
				x, other := o[side], o[1-side]
				if j, ok := once(x, skMul, skMulC); ok {
					in.op = skFma
					*o = [3]skRef{other, r.ops[j][0], r.ops[j][1]}
					dead[j], fused = true, true
				}
			}
			for side := 0; side < 2 && in.op == skAdd; side++ {
				x, other := o[side], o[1-side]
				if j, ok := once(x, skAdd); ok {
					in.op = skAdd3
					*o = [3]skRef{other, r.ops[j][0], r.ops[j][1]}
					dead[j], fused = true, true
				}
			}
		case skAddC:
			if j, ok := once(o[0], skMul, skMulC); ok {
				in.op = skFma
				*o = [3]skRef{o[1], r.ops[j][0], r.ops[j][1]}
				dead[j], fused = true, true
			}
		case skSquare:
			if j, ok := once(o[0], skSub); ok {
				in.op = skSqDiff
				*o = [3]skRef{r.ops[j][0], r.ops[j][1], 0}
				dead[j], fused = true, true
			}
		}
		if in.op == skFma { // a + b·c² (garch's β·σ²_{t−1}): the square folded in
			for side := 1; side <= 2 && in.op == skFma; side++ {
				if j, ok := once(o[side], skSquare); ok {
					in.op = skFmaSq
					*o = [3]skRef{o[0], o[3-side], r.ops[j][0]}
					dead[j], fused = true, true
				}
			}
		}
	}
	if !fused {
		return
	}
	// Compact: renumber the live instructions.
	newIdx := make([]int, n)
	k := 0
	for i := range r.code {
		if dead[i] {
			continue
		}
		newIdx[i] = k
		r.code[k], r.ops[k] = r.code[i], r.ops[i]
		k++
	}
	r.code, r.ops = r.code[:k], r.ops[:k]
	re := func(x skRef) skRef {
		if x.kind() != refInstr {
			return x
		}
		return mkRef(refInstr, newIdx[x.index()])
	}
	for i, in := range r.code {
		if in.op == skLSEN {
			continue
		}
		for j := range opArity(in.op) {
			r.ops[i][j] = re(r.ops[i][j])
		}
	}
	for i, x := range r.lists {
		r.lists[i] = re(x)
	}
	for i, x := range r.terms {
		r.terms[i] = re(x)
	}
	for _, v := range r.vars {
		for i, x := range v.regs {
			v.regs[i] = re(x)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Evaluation

// skEval is one operation on values (used for folding; the forward pass inlines the same
// arithmetic).
func skEval(op skOp, a, b, c float64) (float64, error) {
	switch op {
	case skAdd, skAddC:
		return a + b, nil
	case skSub:
		return a - b, nil
	case skMul, skMulC:
		return a * b, nil
	case skDiv:
		return a / b, nil
	case skNeg:
		return -a, nil
	case skSqrt:
		return math.Sqrt(a), nil
	case skSquare:
		return a * a, nil
	case skExp:
		return math.Exp(a), nil
	case skLog:
		return math.Log(a), nil
	case skLog1p:
		return math.Log1p(a), nil
	case skExpm1:
		return math.Expm1(a), nil
	case skInvLogit:
		return invLogit(a), nil
	case skLogInvLogit:
		return logInvLogit(a), nil
	case skLog1m:
		return math.Log1p(-a), nil
	case skFabs:
		return math.Abs(a), nil
	case skPow:
		return math.Pow(a, b), nil
	case skTanh:
		return math.Tanh(a), nil
	case skInv:
		return 1 / a, nil
	case skLSE2:
		return lse2(a, b), nil
	case skNormal:
		if err := normalChecks(a, b, c); err != nil {
			return 0, err
		}
		z := (a - b) / c
		return -0.5*z*z - math.Log(c) - lnSqrt2Pi, nil
	}
	return math.NaN(), nil
}

const lnSqrt2Pi = 0.91893853320467274178032973640561764

func invLogit(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// logInvLogit is log σ(x) = −log1p(e^{−x}), stable for both signs.
func logInvLogit(x float64) float64 {
	if x >= 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}

// lse2 is log(eᵃ + eᵇ) = max + log1p(e^{−|a−b|}): one exponential.
func lse2(a, b float64) float64 {
	m := math.Max(a, b)
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return m
	}
	return m + math.Log1p(math.Exp(-math.Abs(a-b)))
}

// normalChecks are normal_lpdf's argument checks, in Stan's words.
func normalChecks(y, mu, sigma float64) error {
	if math.IsNaN(y) {
		return checkVals("normal_lpdf", lblY, chkNotNaN, []float64{y}, false)
	}
	if math.IsNaN(mu) || math.IsInf(mu, 0) {
		return checkVals("normal_lpdf", lblLoc, chkFinite, []float64{mu}, false)
	}
	if !(sigma > 0) {
		return checkVals("normal_lpdf", lblScale, chkPositive, []float64{sigma}, false)
	}
	return nil
}

// run evaluates the kernel in frame f: one custom node whose value is [the loop's log
// density, the written containers' elements].
func (k *scalarKernel) run(f *frame) (ctl, error) {
	st := f.st
	t := st.t
	var buf [8]ad.Var
	args := buf[:0]
	for _, in := range k.inputs {
		v := f.read(in.slot)
		if v.Type.Base == Int || t.Size(v.Var) != in.n {
			return ctlNext, errors.New("stan: scalar kernel: input of unexpected size")
		}
		args = append(args, v.Var)
	}
	cn := t.CustomUninit(k, k.nout, k.nreg, args...)
	regs := cn.Aux()
	copy(regs, k.consts)
	for i, in := range k.inputs {
		copy(regs[in.base:int(in.base)+in.n], t.Value(args[i]))
	}
	if err := k.forward(regs); err != nil {
		return ctlNext, err
	}
	y := cn.Value()
	lp := k.cterm
	for _, j := range k.terms {
		lp += regs[j]
	}
	y[0] = lp
	for _, o := range k.outputs {
		for j, r := range o.regs {
			y[o.off+j] = regs[r]
		}
	}
	out := cn.Var()
	if len(k.outputs) == 0 {
		st.target = append(st.target, out)
		return ctlNext, nil
	}
	st.target = append(st.target, t.Slice(out, 0, 1))
	for _, o := range k.outputs {
		x := t.Slice(out, o.off, o.off+len(o.regs))
		f.set(o.slot, mkValue(t, o.ty, o.dims, x))
	}
	return ctlNext, nil
}

// forward runs the instructions on the register file. The common operations are inline;
// the rest go through forwardRare, which keeps this loop small (its registers stay in
// machine registers).
func (k *scalarKernel) forward(regs []float64) error {
	out := regs[k.base:]
	code := k.code
	for i := range code {
		in := &code[i]
		var y float64
		switch in.op {
		case skAdd, skAddC:
			y = regs[in.a] + regs[in.b]
		case skSub:
			y = regs[in.a] - regs[in.b]
		case skMul, skMulC:
			y = regs[in.a] * regs[in.b]
		case skDiv:
			y = regs[in.a] / regs[in.b]
		case skNeg:
			y = -regs[in.a]
		case skSquare:
			x := regs[in.a]
			y = x * x
		case skSqrt:
			y = math.Sqrt(regs[in.a])
		case skFma:
			y = regs[in.a] + regs[in.b]*regs[in.c]
		case skFmaSq:
			x := regs[in.c]
			y = regs[in.a] + regs[in.b]*x*x
		case skAdd3:
			y = regs[in.a] + regs[in.b] + regs[in.c]
		case skSqDiff:
			x := regs[in.a] - regs[in.b]
			y = x * x
		case skNormalK, skNormalV:
			a, b := regs[in.a], regs[in.b]
			if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(b, 0) {
				return withPos(k.poss[in.pos], normalChecks(a, b, 1))
			}
			z := (a - b) * regs[in.c]
			y = -0.5*z*z - regs[in.c+1]
		default:
			var err error
			if y, err = k.forwardRare(in, regs); err != nil {
				return err
			}
		}
		out[i] = y
	}
	return nil
}

// forwardRare is one instruction other than the arithmetic and sqrt.
//
//go:noinline
func (k *scalarKernel) forwardRare(in *skInstr, regs []float64) (float64, error) {
	switch in.op {
	case skNormal:
		a, b, c := regs[in.a], regs[in.b], regs[in.c]
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(b, 0) || !(c > 0) {
			return 0, withPos(k.poss[in.pos], normalChecks(a, b, c))
		}
		z := (a - b) / c
		return -0.5*z*z - math.Log(c) - lnSqrt2Pi, nil
	case skLSEN:
		l := k.lists[in.a : in.a+in.b]
		m := math.Inf(-1)
		for _, j := range l {
			m = math.Max(m, regs[j])
		}
		if math.IsInf(m, 0) || math.IsNaN(m) {
			return m, nil
		}
		s := 0.0
		for _, j := range l {
			s += math.Exp(regs[j] - m)
		}
		return m + math.Log(s), nil
	}
	switch in.op {
	case skInvScale:
		sig := regs[in.a]
		if !(sig > 0) {
			return 0, withPos(k.poss[in.pos], normalChecks(0, 0, sig))
		}
		return 1 / sig, nil
	case skLogScale:
		return math.Log(regs[in.a]) + lnSqrt2Pi, nil
	}
	if in.op == skCheck {
		f := &contFamilies[in.fam]
		x := regs[in.a]
		if !passes(f.checks[in.b], x) {
			return 0, withPos(k.poss[in.pos], checkVals(f.name+"_lpdf", f.labels[in.b], f.checks[in.b], []float64{x}, false))
		}
		return x, nil
	}
	if in.op == skDist {
		v, err := skDistEval(&contFamilies[in.fam], regs[in.a], regs[in.b], regs[in.c])
		return v, withPos(k.poss[in.pos], err)
	}
	return skEval(in.op, regs[in.a], regs[in.b], regs[in.c])
}

// backwardRare is the reverse rule of one instruction other than the arithmetic and sqrt:
// adds d·∂y/∂operand to the operands' adjoints (y the instruction's value).
//
//go:noinline
func (k *scalarKernel) backwardRare(in *skInstr, d, y float64, regs, adj []float64) {
	switch in.op {
	case skExp:
		adj[in.a] += d * y
	case skLog:
		adj[in.a] += d / regs[in.a]
	case skLog1p:
		adj[in.a] += d / (1 + regs[in.a])
	case skExpm1:
		adj[in.a] += d * (y + 1)
	case skInvLogit:
		adj[in.a] += d * y * (1 - y)
	case skLogInvLogit:
		adj[in.a] += d * invLogit(-regs[in.a])
	case skLog1m:
		adj[in.a] -= d / (1 - regs[in.a])
	case skFabs:
		x := regs[in.a]
		switch {
		case x > 0:
			adj[in.a] += d
		case x < 0:
			adj[in.a] -= d
		default: // 0 (the derivative Stan takes there) or NaN (which propagates)
			adj[in.a] += d * x
		}
	case skPow:
		a, b := regs[in.a], regs[in.b]
		if b == 2 {
			adj[in.a] += 2 * d * a
		} else if a != 0 || b > 1 {
			adj[in.a] += d * b * math.Pow(a, b-1)
		}
		if a != 0 {
			adj[in.b] += d * y * math.Log(a)
		}
	case skTanh:
		adj[in.a] += d * (1 - y*y)
	case skInv:
		adj[in.a] -= d * y * y
	case skLSE2:
		if !math.IsInf(y, 0) {
			// The weights e^{a−y} and e^{b−y} sum to 1: one exponential, of the smaller.
			a, b := regs[in.a], regs[in.b]
			if a <= b {
				w := math.Exp(a - y)
				adj[in.a] += d * w
				adj[in.b] += d * (1 - w)
			} else {
				w := math.Exp(b - y)
				adj[in.b] += d * w
				adj[in.a] += d * (1 - w)
			}
		}
	case skLSEN:
		if !math.IsInf(y, 0) {
			for _, j := range k.lists[in.a : in.a+in.b] {
				adj[j] += d * math.Exp(regs[j]-y)
			}
		}
	case skNormal:
		a, b, c := regs[in.a], regs[in.b], regs[in.c]
		s := 1 / c
		z := (a - b) * s
		adj[in.a] -= d * z * s
		adj[in.b] += d * z * s
		adj[in.c] += d * (z*z - 1) * s
	case skCheck:
		adj[in.a] += d
	case skInvScale:
		adj[in.a] -= d * y * y
	case skLogScale:
		adj[in.a] += d / regs[in.a]
	case skDist:
		f := &contFamilies[in.fam]
		_, dx, dp := f.kern(regs[in.a], [3]float64{regs[in.b], regs[in.c]}, kLpdf)
		adj[in.a] += d * dx
		adj[in.b] += d * dp[0]
		if f.np == 2 {
			adj[in.c] += d * dp[1]
		}
	}
}

// Backward accumulates the adjoints of the node's inputs from its output adjoint.
func (k *scalarKernel) Backward(cn ad.Custom) {
	t := cn.Tape()
	g := cn.Grad()
	regs := cn.Aux()
	adj := t.Scratch(k.nreg) // zeroed
	for _, j := range k.terms {
		adj[j] += g[0]
	}
	for _, o := range k.outputs {
		for j, r := range o.regs {
			adj[r] += g[o.off+j]
		}
	}
	base := int(k.base)
	code := k.code
	for i := len(code) - 1; i >= 0; i-- {
		d := adj[base+i]
		if d == 0 {
			continue
		}
		in := &code[i]
		switch in.op {
		case skAdd:
			adj[in.a] += d
			adj[in.b] += d
		case skAddC:
			adj[in.a] += d
		case skSub:
			adj[in.a] += d
			adj[in.b] -= d
		case skMul:
			adj[in.a] += d * regs[in.b]
			adj[in.b] += d * regs[in.a]
		case skMulC:
			adj[in.a] += d * regs[in.b]
		case skDiv:
			b := regs[in.b]
			adj[in.a] += d / b
			adj[in.b] -= d * regs[base+i] / b
		case skNeg:
			adj[in.a] -= d
		case skSquare:
			adj[in.a] += 2 * d * regs[in.a]
		case skSqrt:
			adj[in.a] += d * 0.5 / regs[base+i]
		case skFma:
			adj[in.a] += d
			adj[in.b] += d * regs[in.c]
			adj[in.c] += d * regs[in.b]
		case skFmaSq:
			x := regs[in.c]
			adj[in.a] += d
			adj[in.b] += d * x * x
			adj[in.c] += 2 * d * regs[in.b] * x
		case skAdd3:
			adj[in.a] += d
			adj[in.b] += d
			adj[in.c] += d
		case skSqDiff:
			x := 2 * d * (regs[in.a] - regs[in.b])
			adj[in.a] += x
			adj[in.b] -= x
		case skNormalK:
			s := regs[in.c]
			g := d * (regs[in.a] - regs[in.b]) * s * s
			adj[in.a] -= g
			adj[in.b] += g
		case skNormalV:
			s := regs[in.c]
			e := regs[in.a] - regs[in.b]
			g := d * e * s * s
			adj[in.a] -= g
			adj[in.b] += g
			adj[in.c] -= d * e * e * s // ∂/∂(1/σ) of −½(e/σ)²
			adj[in.c+1] -= d
		default:
			k.backwardRare(in, d, regs[base+i], regs, adj)
		}
	}
	for i, in := range k.inputs {
		gr := t.Grad(cn.Arg(i))
		if gr == nil {
			continue
		}
		for j, a := range adj[in.base : int(in.base)+in.n] {
			gr[j] += a
		}
	}
}
