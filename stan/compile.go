package stan

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// compiler translates one checked program, with its data, into closures.
type compiler struct {
	prog    *Program
	cur     *slots
	retType Type
	funcs   map[*FunDef]*userFunc
	byName  map[string]*userFunc
	lane    *laneInfo // the loop being compiled in lanes (compile_lane.go), or nil
	plain   bool      // no optimisation: every statement as written (the tests' reference)
	lanes   int       // loops compiled in lanes
	glms    int       // statements fused into normal_id_glm
	kernels int       // loops compiled as scalar kernels (compile_scalar.go)
	// globals are the block variables known so far (data with values; parameters and
	// transformed parameters with dims), for what compiles at compile time (compile_scalar.go).
	globals map[*VarDecl]*global
	folds   int // fixed expressions folded (compile_fold.go)
	conts   int // density statements compiled by contStmt (compile_prior.go)
	// declAssigns counts declarations compiled with the assignment that follows them.
	declAssigns int
	tb          *Table // the built-ins, for re-resolving calls on lane values
	// fold turns on folding of fixed expressions (compile_fold.go): set once the transformed
	// data block is compiled, when data and transformed data no longer change; inFold is set
	// while an expression being folded is compiled (its parts need no folding of their own).
	fold, inFold bool
	// data are the data and transformed data variables by slot, with their values (the GLM
	// designs are built from them).
	data map[int]*global
	// designIdents are the identifiers read only as columns of a fused GLM's design (from
	// data, not from the frame): they do not make their variable live (compile_fold.go).
	designIdents map[*Ident]bool
}

// builtins returns the built-in table (made on first use).
func (c *compiler) builtins() *Table {
	if c.tb == nil {
		c.tb = Builtins()
	}
	return c.tb
}

// userFunc is a compiled user-defined function.
type userFunc struct {
	def   *FunDef
	sc    *slots
	slots []int // the parameters' slots
	body  execFn
	err   error // a compile error of the body, reported at the first call
	ret   Type
}

// userFunc returns the compiled function for def (compiling the body on first reference, so
// that recursion works).
func (c *compiler) userFunc(def *FunDef) *userFunc {
	if def.Def != nil {
		def = def.Def
	}
	if uf, ok := c.funcs[def]; ok {
		return uf
	}
	uf := &userFunc{def: def, sc: newSlots(), ret: def.Ret}
	c.funcs[def] = uf
	c.byName[def.Name] = uf
	for _, p := range def.Params {
		uf.slots = append(uf.slots, uf.sc.add(p))
	}
	saved, savedRet := c.cur, c.retType
	c.cur, c.retType = uf.sc, def.Ret
	if def.Body == nil {
		uf.err = fmt.Errorf("function %s declared but not defined", def.Name)
	} else {
		uf.body, uf.err = c.stmts(def.Body.Stmts)
	}
	c.cur, c.retType = saved, savedRet
	return uf
}

// maxCallDepth bounds user-function recursion at run time.
const maxCallDepth = 10000

func (uf *userFunc) invoke(st *state, args []Value) (Value, error) {
	if uf.err != nil {
		return Value{}, uf.err
	}
	if st.depth >= maxCallDepth {
		return Value{}, fmt.Errorf("%s: recursion deeper than %d", uf.def.Name, maxCallDepth)
	}
	st.depth++
	defer func() { st.depth-- }()
	f := &frame{st: st, cells: make([]cell, uf.sc.n)}
	for i, s := range uf.slots {
		v := args[i]
		if pt := uf.def.Params[i].Type; pt.Base != Int && pt.Base != Func {
			v = toReal(st.t, v, pt)
		}
		f.cells[s] = cell{v: v}
	}
	if _, err := uf.body(f); err != nil {
		return Value{}, err
	}
	return f.ret, nil
}

// callByName is Ctx.Call for state st.
func (c *compiler) callByName(st *state) func(t *ad.Tape, name string, args []Value) (Value, error) {
	return func(t *ad.Tape, name string, args []Value) (Value, error) {
		// Every defined function was compiled before the first evaluation; byName is read-only
		// here (evaluations run concurrently).
		uf, ok := c.byName[name]
		if !ok {
			return Value{}, fmt.Errorf("no user-defined function %q", name)
		}
		if t == st.t {
			return uf.invoke(st, args)
		}
		sub := &state{t: t, rng: st.rng, c: c, depth: st.depth}
		return uf.invoke(sub, args)
	}
}

// ---------------------------------------------------------------------------------------------
// The program

// global is a block variable known at compile time: data and transformed data (values), and
// the shapes of parameters, transformed parameters and generated quantities.
type global struct {
	decl *VarDecl
	slot int
	dims []int
	ints []int     // int data
	x    []float64 // real data, row-major
}

// compiled is a Stan program compiled with its data: the closures of its blocks and the data
// they read; model returns the model.Model.
//
// The translation happens once: every expression and statement becomes a closure over the
// slots of a frame (one per evaluation, one per user-function call), built-ins are called
// through their resolved Sig.Fn, and nothing walks the syntax tree per evaluation. Data and
// transformed data are evaluated here, once, and enter each evaluation as constant nodes
// (Tape.ConstRef, no copy). A real container written element by element (x[i] = …) keeps its
// elements as scalar nodes and is joined with one Concat when read whole.
type compiled struct {
	c      *compiler
	file   string
	nslots int
	data   []*global // data and transformed data, with values
	live   []*global // the data an evaluation's frame holds (compile_fold.go's liveData)
	params []*global
	tparam []*global
	gq     []*global
	lay    *model.Layout
	tp     execFn // transformed parameters block
	tpChk  func(f *frame) error
	mdl    execFn
	gen    execFn
	gqChk  func(f *frame) error
	seed   uint64
	// frames pools evaluation frames (cells and the target's slice) between evaluations; a
	// frame is used by one evaluation at a time.
	frames sync.Pool
}

// Compile parses, type-checks and compiles the Stan program src (file names it in messages)
// with data (nil when the program has no data) into a model.Model: parameters in Stan's
// unconstrained order with Stan's transforms, the model block (with transformed parameters)
// as Density, and transformed parameters and generated quantities as Derived (see
// compiled.derive for how generated quantities' _rng calls get their randomness).
func Compile(file string, src []byte, data *model.Data) (*model.Model, error) {
	prog, err := Parse(file, src)
	if err != nil {
		return nil, err
	}
	if err := prog.Check(Builtins()); err != nil {
		return nil, err
	}
	return CompileProgram(prog, data)
}

// CompileProgram compiles a program that passed Check with its data (see Compile). Errors:
// data that do not match the data block ("data: variable \"y\": …", "data: variable
// \"sigma[3]\": -1, want >= 0"), a transformed-data error, sizes or bounds of parameters
// that are not data, and constructs the compiler does not support ("unsupported construct:
// …", with the position).
func CompileProgram(prog *Program, data *model.Data) (*model.Model, error) {
	cp, err := compileProgram(prog, data)
	if err != nil {
		return nil, err
	}
	return cp.model()
}

func compileProgram(prog *Program, data *model.Data) (*compiled, error) {
	return compileProgramOpt(prog, data, true)
}

// compileProgramOpt is compileProgram with the optimisations on or off: loops of independent
// iterations in lanes, with one node per lane density and mixture (compile_lane.go,
// compile_lanefused.go); linear predictors and GLM calls over data fused into package
// density's GLM nodes (compile_glm.go); density statements of the continuous families without
// the general call path (compile_prior.go); data-only expressions evaluated once and only the
// data the later blocks read in the frame (compile_fold.go); real arithmetic with a scalar
// operand as its tape op, a declaration and the whole assignment after it as one statement.
// Off compiles every statement as written, the reference the tests compare the optimised
// compilation with (to rounding, errors included).
func compileProgramOpt(prog *Program, data *model.Data, optimise bool) (*compiled, error) {
	c := &compiler{prog: prog, cur: newSlots(), funcs: map[*FunDef]*userFunc{}, byName: map[string]*userFunc{}, plain: !optimise, globals: map[*VarDecl]*global{}, data: map[int]*global{}, designIdents: map[*Ident]bool{}}
	cp := &compiled{c: c, file: prog.File}
	h := fnv.New64a()
	h.Write(prog.Src)
	cp.seed = h.Sum64()
	for _, fd := range prog.Functions {
		if fd.Body != nil {
			c.userFunc(fd)
		}
	}
	// Data and transformed data run now, on a tape of constants.
	var t ad.Tape
	st := &state{t: &t, c: c, rng: rng.New(cp.seed, 0)}
	f := &frame{st: st}
	grow := func() {
		if len(f.cells) < c.cur.n {
			f.cells = append(f.cells, make([]cell, c.cur.n-len(f.cells))...)
		}
	}
	if prog.Data != nil {
		for _, s := range prog.Data.Stmts {
			d, ok := s.(*VarDecl)
			if !ok {
				return nil, c.unsupported(s, "statement in the data block")
			}
			g, err := cp.readDataDecl(f, d, data)
			if err != nil {
				return nil, err
			}
			grow()
			f.set(g.slot, cp.constValue(&t, g))
			cp.data = append(cp.data, g)
			c.globals[d] = g
		}
	}
	if prog.TransformedData != nil {
		var decls []*VarDecl
		for _, s := range prog.TransformedData.Stmts {
			if d, ok := s.(*VarDecl); ok && d.Kind == GlobalVar {
				decls = append(decls, d)
			}
		}
		run, err := c.stmts(prog.TransformedData.Stmts)
		if err != nil {
			return nil, err
		}
		chk, err := c.checkDecls(decls)
		if err != nil {
			return nil, err
		}
		grow()
		if _, err := run(f); err != nil {
			return nil, fmt.Errorf("transformed data: %w", err)
		}
		if err := chk(f); err != nil {
			return nil, fmt.Errorf("transformed data: %w", err)
		}
		for _, d := range decls {
			slot := c.cur.slot[d]
			v := f.read(slot)
			g := &global{decl: d, slot: slot, dims: v.Dims}
			if v.Type.Base == Int {
				g.ints = append([]int(nil), v.Ints...)
			} else {
				g.x = append([]float64(nil), t.Value(v.Var)...)
			}
			cp.data = append(cp.data, g)
			c.globals[d] = g
		}
	}
	for _, g := range cp.data {
		c.data[g.slot] = g
	}
	// Data are fixed from here on: data-only expressions are evaluated once, and an
	// evaluation's frame holds only the data the remaining blocks read.
	c.fold = optimise
	// Parameters: shapes and transforms from data-only sizes and bounds.
	var params []model.Param
	if prog.Parameters != nil {
		for _, s := range prog.Parameters.Stmts {
			d, ok := s.(*VarDecl)
			if !ok {
				return nil, c.unsupported(s, "statement in the parameters block")
			}
			grow()
			p, g, err := cp.paramDecl(f, d)
			if err != nil {
				return nil, err
			}
			params = append(params, p)
			cp.params = append(cp.params, g)
			c.globals[d] = &global{decl: d, slot: g.slot, dims: g.dims}
		}
	}
	lay, err := model.NewLayout(params...)
	if err != nil {
		return nil, fmt.Errorf("stan: %w", err)
	}
	cp.lay = lay
	// Transformed parameters, model, generated quantities.
	var err2 error
	if cp.tp, cp.tparam, cp.tpChk, err2 = cp.block(f, prog.TransformedParameters); err2 != nil {
		return nil, err2
	}
	for _, g := range cp.tparam {
		c.globals[g.decl] = g
	}
	if prog.Model != nil {
		if cp.mdl, err = c.stmts(prog.Model.Stmts); err != nil {
			return nil, err
		}
	}
	if cp.gen, cp.gq, cp.gqChk, err2 = cp.block(f, prog.GeneratedQuantities); err2 != nil {
		return nil, err2
	}
	cp.nslots = c.cur.n
	live := liveData(prog, c.designIdents)
	for _, g := range cp.data {
		if !optimise || live[g.decl] {
			cp.live = append(cp.live, g)
		}
	}
	return cp, nil
}

// block compiles a transformed parameters or generated quantities block, with the shapes of
// its global variables (sizes must be data) and the check of their constraints.
func (cp *compiled) block(f *frame, b *Block) (execFn, []*global, func(*frame) error, error) {
	if b == nil {
		return nil, nil, nil, nil
	}
	c := cp.c
	run, err := c.stmts(b.Stmts)
	if err != nil {
		return nil, nil, nil, err
	}
	var gs []*global
	var decls []*VarDecl
	for _, s := range b.Stmts {
		d, ok := s.(*VarDecl)
		if !ok || d.Kind != GlobalVar {
			continue
		}
		dims, err := c.declDims(d)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(f.cells) < c.cur.n {
			f.cells = append(f.cells, make([]cell, c.cur.n-len(f.cells))...)
		}
		ds, err := dims(f)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %s: size of %s: %w", b.Kind, posString(d.Pos), d.Name, err)
		}
		gs = append(gs, &global{decl: d, slot: c.cur.slot[d], dims: ds})
		decls = append(decls, d)
	}
	chk, err := c.checkDecls(decls)
	if err != nil {
		return nil, nil, nil, err
	}
	return run, gs, chk, nil
}

func posString(p Pos) string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// readDataDecl reads one data variable.
func (cp *compiled) readDataDecl(f *frame, d *VarDecl, data *model.Data) (*global, error) {
	c := cp.c
	dims, err := c.declDims(d)
	if err != nil {
		return nil, err
	}
	slot := c.cur.add(d)
	if len(f.cells) < c.cur.n {
		f.cells = append(f.cells, make([]cell, c.cur.n-len(f.cells))...)
	}
	ds, err := dims(f)
	if err != nil {
		return nil, fmt.Errorf("data: variable %q: size: %w", d.Name, err)
	}
	ks, xs, err := readData(data, d.Name, d.Type.Base, ds)
	if err != nil {
		return nil, err
	}
	g := &global{decl: d, slot: slot, dims: ds, ints: ks, x: xs}
	// Constraint check on the value just read.
	f.set(slot, cp.constValue(f.st.t, g))
	chk, err := c.checkDecls([]*VarDecl{d})
	if err != nil {
		return nil, err
	}
	if err := chk(f); err != nil {
		return nil, fmt.Errorf("data: %w", errors.Unwrap(err))
	}
	return g, nil
}

// constValue is a data global as a constant value on t.
func (cp *compiled) constValue(t *ad.Tape, g *global) Value { return dataValue(t, g) }

// dataValue is a data global as a constant value on t.
func dataValue(t *ad.Tape, g *global) Value {
	ty := g.decl.Type
	if ty.Base == Int {
		return Value{Type: ty, Dims: g.dims, Ints: g.ints}
	}
	return mkValue(t, ty, g.dims, t.ConstRef(g.x))
}

// checkDecls compiles the constraint checks of global declarations (their values must be set).
func (c *compiler) checkDecls(decls []*VarDecl) (func(*frame) error, error) {
	type chk struct {
		d      *VarDecl
		slot   int
		lo, hi evalFn
	}
	var cs []chk
	for _, d := range decls {
		if d.Cons.Kind == ConsNone || d.Cons.Kind == ConsAffine {
			continue
		}
		k := chk{d: d, slot: c.cur.slot[d]}
		var err error
		if d.Cons.Lower != nil {
			if k.lo, err = c.expr(d.Cons.Lower); err != nil {
				return nil, err
			}
		}
		if d.Cons.Upper != nil {
			if k.hi, err = c.expr(d.Cons.Upper); err != nil {
				return nil, err
			}
		}
		cs = append(cs, k)
	}
	if len(cs) == 0 {
		return func(*frame) error { return nil }, nil
	}
	return func(f *frame) error {
		t := f.st.t
		for _, k := range cs {
			v := f.read(k.slot)
			x := valuesOf(t, v)
			ck := checked{name: k.d.Name, dims: v.Dims, x: x}
			var err error
			if k.d.Cons.Kind == ConsBounds {
				var lo, hi []float64
				if k.lo != nil {
					b, err := k.lo(f)
					if err != nil {
						return err
					}
					lo = valuesOf(t, b)
				}
				if k.hi != nil {
					b, err := k.hi(f)
					if err != nil {
						return err
					}
					hi = valuesOf(t, b)
				}
				err = checkBounds(ck, lo, hi)
			} else {
				rows, cols := 1, 1
				nd := len(v.Dims)
				switch {
				case k.d.Type.Base == Matrix && nd >= 2:
					rows, cols = v.Dims[nd-2], v.Dims[nd-1]
				case nd >= 1:
					rows = v.Dims[nd-1]
				}
				err = checkStructured(ck, k.d.Cons.Kind, rows, cols)
			}
			if err != nil {
				return withPos(k.d.Pos, err)
			}
		}
		return nil
	}, nil
}

// valuesOf returns v's elements as float64 (row-major).
func valuesOf(t *ad.Tape, v Value) []float64 {
	if v.Type.Base == Int {
		xs := make([]float64, len(v.Ints))
		for i, k := range v.Ints {
			xs[i] = float64(k)
		}
		return xs
	}
	return t.Value(v.Var)
}

// paramDecl builds one parameter's model.Param: shape, and Stan's transform with its bounds
// evaluated (they must be data).
func (cp *compiled) paramDecl(f *frame, d *VarDecl) (model.Param, *global, error) {
	c := cp.c
	dims, err := c.declDims(d)
	if err != nil {
		return model.Param{}, nil, err
	}
	ds, err := dims(f)
	if err != nil {
		return model.Param{}, nil, fmt.Errorf("parameters: %s: %w", d.Name, err)
	}
	slot := c.cur.add(d)
	g := &global{decl: d, slot: slot, dims: ds}
	p := model.Param{Name: d.Name, Dims: ds}
	narr := prod(ds[:d.Type.Array])
	cdims := ds[d.Type.Array:]
	rows, cols := 1, 1
	switch len(cdims) {
	case 1:
		rows = cdims[0]
		if d.Type.Base == RowVector {
			rows, cols = 1, cdims[0]
		}
	case 2:
		rows, cols = cdims[0], cdims[1]
	}
	bound := func(e Expr) ([]float64, error) {
		if e == nil {
			return nil, nil
		}
		if !e.Info().Data {
			return nil, c.unsupported(e, "a parameter-dependent bound")
		}
		fn, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		v, err := fn(f)
		if err != nil {
			return nil, err
		}
		return valuesOf(f.st.t, v), nil
	}
	if d.Cons.Kind == ConsBounds && len(ds) == 0 && d.Cons.Lower != nil && d.Cons.Upper != nil &&
		(!d.Cons.Lower.Info().Data || !d.Cons.Upper.Info().Data) {
		// A scalar interval whose ends depend on earlier parameters: model.Bounds when both
		// ends are affine in earlier scalar parameters (Stan's lub_constrain with those ends).
		lo, err := c.affineOf(f, d.Cons.Lower)
		if err != nil {
			return p, nil, err
		}
		hi, err := c.affineOf(f, d.Cons.Upper)
		if err != nil {
			return p, nil, err
		}
		p.Bounds = &model.Bounds{Lower: []model.Affine{lo}, Upper: []model.Affine{hi}}
		return p, g, nil
	}
	var kind tkind
	var lo, hi []float64
	switch d.Cons.Kind {
	case ConsNone:
		kind = tIdentity
	case ConsBounds:
		if lo, err = bound(d.Cons.Lower); err != nil {
			return p, nil, err
		}
		if hi, err = bound(d.Cons.Upper); err != nil {
			return p, nil, err
		}
		switch {
		case lo != nil && hi != nil:
			kind = tLowerUpper
		case lo != nil:
			kind = tLower
		default:
			kind = tUpper
		}
	case ConsAffine:
		kind = tOffsetMult
		if lo, err = bound(d.Cons.Offset); err != nil {
			return p, nil, err
		}
		if hi, err = bound(d.Cons.Multiplier); err != nil {
			return p, nil, err
		}
		if lo == nil {
			lo = []float64{0}
		}
		if hi == nil {
			hi = []float64{1}
		}
	case ConsSimplex:
		kind = tSimplex
	case ConsOrdered:
		kind = tOrdered
	case ConsPositiveOrdered:
		kind = tPositiveOrdered
	case ConsUnitVector:
		kind = tUnitVector
	case ConsCholeskyCorr:
		kind = tCholeskyCorr
	case ConsCholeskyCov:
		kind = tCholeskyCov
	case ConsCorr:
		kind = tCorrMatrix
	case ConsCov:
		kind = tCovMatrix
	}
	if kind == tIdentity && (rows == 1 || cols == 1) {
		return p, g, nil // Stan's order is the tape's
	}
	// Use bijector's own transforms where they are Stan's (saved fits can describe them).
	if narr*rows*cols > 0 && (rows == 1 || cols == 1) {
		n := narr * rows * cols
		one := func(v []float64) (float64, bool) {
			if len(v) == 1 {
				return v[0], true
			}
			return 0, false
		}
		switch kind {
		case tLower:
			if l, ok := one(lo); ok && !math.IsNaN(l) && !math.IsInf(l, 1) {
				p.Constraint = bijector.Lower(n, l)
				return p, g, nil
			}
		case tUpper:
			if h, ok := one(hi); ok && !math.IsNaN(h) && !math.IsInf(h, -1) {
				p.Constraint = bijector.Upper(n, h)
				return p, g, nil
			}
		case tLowerUpper:
			l, ok1 := one(lo)
			h, ok2 := one(hi)
			if ok1 && ok2 && l < h {
				p.Constraint = bijector.Interval(n, l, h)
				return p, g, nil
			}
		case tSimplex, tOrdered, tPositiveOrdered:
			tr, err := newTransform(kind, 1, rows, 1, nil, nil)
			if err != nil {
				return p, nil, withPos(d.Pos, err)
			}
			p.Constraint = tr.inner
			if narr > 1 { // Stan's array of vectors: the elements' free coordinates one after the other
				p.Constraint = bijector.Repeat(tr.inner, narr)
			}
			return p, g, nil
		}
	}
	if kind == tIdentity && narr == 1 {
		// A matrix: free coordinates column-major (Stan's), values row-major.
		p.Constraint = bijector.IdentityColMajor(rows, cols)
		return p, g, nil
	}
	if (kind == tCholeskyCorr || kind == tCholeskyCov) && narr == 1 {
		tr, err := newTransform(kind, 1, rows, cols, nil, nil)
		if err != nil {
			return p, nil, withPos(d.Pos, err)
		}
		p.Constraint = tr.inner
		return p, g, nil
	}
	tr, err := newTransform(kind, narr, rows, cols, lo, hi)
	if err != nil {
		return p, nil, withPos(d.Pos, fmt.Errorf("parameter %s: %w", d.Name, err))
	}
	p.Constraint = tr
	return p, g, nil
}

// evalFrame sets up a frame on t with the data and the constrained parameters p.
func (cp *compiled) evalFrame(t *ad.Tape, p []ad.Var, r *rng.Stream) *frame {
	var f *frame
	if x, ok := cp.frames.Get().(*frame); ok && len(x.cells) == cp.nslots {
		f = x
		cx := f.st.cx // the built-ins' context survives in the pool (its Call is bound to f.st)
		if cx != nil {
			cx.T, cx.RNG = t, r
		}
		*f.st = state{t: t, c: cp.c, rng: r, target: f.st.target[:0], args: f.st.args[:0], cx: cx}
	} else {
		f = &frame{st: &state{t: t, c: cp.c, rng: r}, cells: make([]cell, cp.nslots)}
	}
	for _, g := range cp.live {
		f.cells[g.slot] = cell{v: cp.constValue(t, g)}
	}
	for i, g := range cp.params {
		f.cells[g.slot] = cell{v: mkValue(t, g.decl.Type, g.dims, p[i])}
	}
	return f
}

// release returns an evaluation's frame to the pool, its cells cleared but for the backing
// arrays of element-wise written containers (cell.spare), which the next evaluation reuses.
func (cp *compiled) release(f *frame) {
	for i := range f.cells {
		c := &f.cells[i]
		spare := c.elems
		if spare == nil {
			spare = c.spare
		}
		*c = cell{spare: spare}
	}
	f.ret = Value{}
	cp.frames.Put(f)
}

// logDensity runs the transformed parameters and model blocks; a run-time error (a domain
// error, reject) is returned with its position.
func (cp *compiled) logDensity(t *ad.Tape, p []ad.Var) (ad.Var, error) {
	f := cp.evalFrame(t, p, nil)
	defer cp.release(f)
	if cp.tp != nil {
		if _, err := cp.tp(f); err != nil {
			return ad.Var{}, err
		}
		if err := cp.tpChk(f); err != nil {
			return ad.Var{}, err
		}
	}
	if cp.mdl != nil {
		if _, err := cp.mdl(f); err != nil {
			return ad.Var{}, err
		}
	}
	return f.st.sumTarget(), nil
}

// derive computes the transformed parameters and generated quantities at the constrained
// parameters p (row-major per parameter) into out. The _rng calls of generated quantities
// draw from the stream rng.New(seed, h) where seed hashes the program text and h the bits of
// the parameter values (FNV-1a), so a draw's derived quantities are a deterministic function
// of the draw, as model.Model.Derive requires, and differ between draws. A run-time error
// (or a violated constraint) fills the draw's derived quantities with NaN.
func (cp *compiled) derive(p, out [][]float64) { cp.run(p, out, true) }

// run is derive; without gq it computes the transformed parameters only (out then holds
// len(cp.tparam) slices).
func (cp *compiled) run(p, out [][]float64, gq bool) {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range p {
		for _, v := range x {
			u := math.Float64bits(v)
			for i := range b {
				b[i] = byte(u >> (8 * i))
			}
			h.Write(b[:])
		}
	}
	var t ad.Tape
	vars := make([]ad.Var, len(p))
	for i, x := range p {
		vars[i] = shapeVar(&t, cp.params[i].decl.Type, cp.params[i].dims, t.Const(x...))
	}
	f := cp.evalFrame(&t, vars, rng.New(cp.seed, h.Sum64()))
	err := func() error {
		if cp.tp != nil {
			if _, err := cp.tp(f); err != nil {
				return err
			}
			if err := cp.tpChk(f); err != nil {
				return err
			}
		}
		if cp.gen != nil && gq {
			if _, err := cp.gen(f); err != nil {
				return err
			}
			if err := cp.gqChk(f); err != nil {
				return err
			}
		}
		return nil
	}()
	k := 0
	for _, gs := range [][]*global{cp.tparam, cp.gq} {
		for _, g := range gs {
			if k == len(out) {
				return
			}
			o := out[k]
			k++
			if err != nil {
				for i := range o {
					o[i] = math.NaN()
				}
				continue
			}
			copy(o, valuesOf(&t, f.read(g.slot)))
		}
	}
}

// model builds the model.Model.
func (cp *compiled) model() (*model.Model, error) {
	m := &model.Model{Layout: cp.lay}
	m.Density = func(t *ad.Tape, p []ad.Var) ad.Var {
		lp, err := cp.logDensity(t, p)
		if err != nil {
			return t.Const(math.NaN())
		}
		return lp
	}
	for _, gs := range [][]*global{cp.tparam, cp.gq} {
		for _, g := range gs {
			m.Derived = append(m.Derived, model.Quantity{Name: g.decl.Name, Dims: g.dims})
		}
	}
	if len(m.Derived) > 0 {
		m.Derive = cp.derive
	}
	m.Explain = func(z []float64) error {
		if len(z) != cp.lay.Dim() {
			return fmt.Errorf("stan: Explain: %d values for %d unconstrained parameters", len(z), cp.lay.Dim())
		}
		_, err := cp.logDensityAt(z, false)
		return err
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("stan: %w", err)
	}
	return m, nil
}

// affineOf writes a bound expression as Const + Σ coef·(scalar parameter): data evaluate to
// constants; +, −, unary −, multiplication by data and division by data combine affine forms.
// Anything else is an unsupported parameter-dependent bound.
func (c *compiler) affineOf(f *frame, e Expr) (model.Affine, error) {
	if e.Info().Data {
		fn, err := c.expr(e)
		if err != nil {
			return model.Affine{}, err
		}
		v, err := fn(f)
		if err != nil {
			return model.Affine{}, err
		}
		xs := valuesOf(f.st.t, v)
		if len(xs) != 1 {
			return model.Affine{}, c.unsupported(e, "a parameter-dependent container bound")
		}
		return model.Affine{Const: xs[0]}, nil
	}
	scale := func(a model.Affine, k float64) model.Affine {
		out := model.Affine{Const: a.Const * k}
		for _, t := range a.Terms {
			out.Terms = append(out.Terms, model.Term{Name: t.Name, Coef: t.Coef * k})
		}
		return out
	}
	constOf := func(x Expr) (float64, bool) {
		if !x.Info().Data {
			return 0, false
		}
		a, err := c.affineOf(f, x)
		return a.Const, err == nil
	}
	switch e := e.(type) {
	case *Paren:
		return c.affineOf(f, e.X)
	case *Ident:
		if e.Decl != nil && e.Decl.Block == ParametersBlock && e.Decl.Kind == GlobalVar && e.Decl.Type == TReal {
			return model.Affine{Terms: []model.Term{{Name: e.Name, Coef: 1}}}, nil
		}
	case *Unary:
		if e.Name == "minus" {
			a, err := c.affineOf(f, e.X)
			return scale(a, -1), err
		}
	case *Binary:
		switch e.Name {
		case "add", "subtract":
			a, err := c.affineOf(f, e.L)
			if err != nil {
				return a, err
			}
			b, err := c.affineOf(f, e.R)
			if err != nil {
				return b, err
			}
			if e.Name == "subtract" {
				b = scale(b, -1)
			}
			return model.Affine{Const: a.Const + b.Const, Terms: append(a.Terms, b.Terms...)}, nil
		case "multiply":
			if k, ok := constOf(e.L); ok {
				a, err := c.affineOf(f, e.R)
				return scale(a, k), err
			}
			if k, ok := constOf(e.R); ok {
				a, err := c.affineOf(f, e.L)
				return scale(a, k), err
			}
		case "divide":
			if k, ok := constOf(e.R); ok && k != 0 {
				a, err := c.affineOf(f, e.L)
				return scale(a, 1/k), err
			}
		}
	}
	return model.Affine{}, c.unsupported(e, "a parameter-dependent bound that is not affine in earlier scalar parameters")
}
