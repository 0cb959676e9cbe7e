package stan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse lexes and parses the Stan program src (file names it in diagnostics). It returns the
// syntax tree, unchecked (see Check), and an Errors when the program has lexical or syntax
// errors; the parser recovers at statement boundaries, so one call reports several errors.
// Deprecated syntax Stan still accepts (the pre-2.33 array declarations `real x[N];`, `#`
// comments) parses with a warning in Program.Warnings. Parse never panics; its cost is linear
// in the length of src.
func Parse(file string, src []byte) (*Program, error) {
	d := &diag{src: src}
	p := &parser{lx: newLexer(file, src, d), d: d}
	p.prog = &Program{File: file, Src: src}
	p.advance()
	p.program()
	p.prog.Warnings = d.warnings
	if len(d.errs) > 0 {
		return p.prog, d.errs
	}
	return p.prog, nil
}

// parser is a recursive-descent parser over the lexer's tokens, one token of look-ahead
// (plus a second for the few places that need it).
type parser struct {
	lx   *lexer
	d    *diag
	tok  token
	peek []token // tokens read ahead of tok
	// prevEnd is the position just past the last token consumed.
	prevEnd Pos
	prog    *Program
	// depth bounds the recursion on nested expressions and statements (hostile inputs).
	depth int
}

// bailout unwinds the parser to the nearest statement boundary after a syntax error.
type bailout struct{}

const maxDepth = 500

func (p *parser) advance() {
	p.prevEnd = p.tok.end
	if len(p.peek) > 0 {
		p.tok = p.peek[0]
		p.peek = p.peek[1:]
		return
	}
	p.tok = p.lx.next()
}

// lookahead returns the token k places after the current one (k ≥ 1).
func (p *parser) lookahead(k int) token {
	for len(p.peek) < k {
		p.peek = append(p.peek, p.lx.next())
	}
	return p.peek[k-1]
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

func (p *parser) isPunct(text string) bool { return p.tok.kind == tPunct && p.tok.text == text }

// fail records a syntax error at the current token and unwinds.
func (p *parser) fail(msg string) {
	p.failAt(p.tok.pos, msg)
}

// failMissing reports a missing token: at the end of the previous token when the current
// one is on a later line (a forgotten ";" is reported where it belongs, not on the next line).
func (p *parser) failMissing(msg string) {
	if p.prevEnd.Line > 0 && p.tok.pos.Line > p.prevEnd.Line {
		p.failAt(p.prevEnd, msg)
	}
	p.fail(msg)
}

func (p *parser) failAt(pos Pos, msg string) {
	p.d.add(pos, msg)
	panic(bailout{})
}

// describe names the current token in a message.
func (p *parser) describe() string {
	switch p.tok.kind {
	case tEOF:
		return "end of file"
	case tString:
		return "a string literal"
	}
	return fmt.Sprintf("%q", p.tok.text)
}

// expect consumes the punctuation text or fails with `Expected "text" <context>.`
func (p *parser) expect(text, context string) token {
	if !p.isPunct(text) {
		msg := fmt.Sprintf("Expected %q", text)
		if context != "" {
			msg += " " + context
		}
		p.failMissing(msg + fmt.Sprintf(" but found %s.", p.describe()))
	}
	t := p.tok
	p.advance()
	return t
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail("Program nested too deeply.")
	}
}

func (p *parser) leave() { p.depth-- }

// recoverTo runs f; on a syntax error it skips to the end of the statement (past a ';' at the
// current nesting, or up to a '}' that closes it) so that parsing continues.
func (p *parser) recoverTo(f func()) (ok bool) {
	start := p.tok.off
	depth := p.depth
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, is := r.(bailout); !is {
					panic(r)
				}
				ok = false
			}
		}()
		f()
		ok = true
	}()
	if ok {
		return true
	}
	p.depth = depth
	p.sync(start)
	return false
}

// sync skips tokens to a statement boundary: past the next ';' or balanced '}' block at
// nesting zero, or before a '}' that closes the enclosing block.
func (p *parser) sync(start int) {
	nest := 0
	for p.tok.kind != tEOF {
		if p.tok.kind == tPunct {
			switch p.tok.text {
			case "{", "(", "[":
				nest++
			case ")", "]":
				if nest > 0 {
					nest--
				}
			case "}":
				if nest == 0 {
					if p.tok.off == start {
						p.advance() // no progress otherwise
					}
					return
				}
				nest--
				if nest == 0 {
					p.advance()
					return
				}
			case ";":
				if nest == 0 {
					p.advance()
					return
				}
			}
		}
		p.advance()
	}
}

// ---------------------------------------------------------------------------------------------
// Program structure

var blockHeads = []struct {
	words []string
	kind  BlockKind
}{
	{[]string{"functions"}, FunctionsBlock},
	{[]string{"data"}, DataBlock},
	{[]string{"transformed", "data"}, TransformedDataBlock},
	{[]string{"parameters"}, ParametersBlock},
	{[]string{"transformed", "parameters"}, TransformedParametersBlock},
	{[]string{"model"}, ModelBlock},
	{[]string{"generated", "quantities"}, GeneratedQuantitiesBlock},
}

func (p *parser) program() {
	last := -1
	for p.tok.kind != tEOF {
		ok := p.recoverTo(func() {
			start := p.tok
			kind, found := p.blockHead()
			if !found {
				p.fail(fmt.Sprintf("Expected \"functions {\", \"data {\", \"transformed data {\", \"parameters {\", \"transformed parameters {\", \"model {\" or \"generated quantities {\" but found %s.", p.describe()))
			}
			if int(kind) == last {
				p.d.add(start.pos, fmt.Sprintf("The %s block appears twice; each block may appear at most once.", kind))
			} else if int(kind) < last {
				p.d.add(start.pos, fmt.Sprintf("Block %q must come after the %q block; the order is functions, data, transformed data, parameters, transformed parameters, model, generated quantities, each at most once.", kind.String(), BlockKind(last).String()))
			}
			if int(kind) > last {
				last = int(kind)
			}
			p.expect("{", "after \""+kind.String()+"\"")
			if kind == FunctionsBlock {
				p.functions()
				return
			}
			b := &Block{Pos: start.pos, Kind: kind}
			p.blockBody(b)
			switch kind {
			case DataBlock:
				p.prog.Data = b
			case TransformedDataBlock:
				p.prog.TransformedData = b
			case ParametersBlock:
				p.prog.Parameters = b
			case TransformedParametersBlock:
				p.prog.TransformedParameters = b
			case ModelBlock:
				p.prog.Model = b
			case GeneratedQuantitiesBlock:
				p.prog.GeneratedQuantities = b
			}
		})
		if !ok && p.isPunct("}") {
			p.advance()
		}
	}
}

// blockHead consumes a block's name.
func (p *parser) blockHead() (BlockKind, bool) {
	for _, h := range blockHeads {
		if p.tok.kind != tIdent || p.tok.text != h.words[0] {
			continue
		}
		if len(h.words) == 2 {
			nx := p.lookahead(1)
			if nx.kind != tIdent || nx.text != h.words[1] {
				continue
			}
			p.advance()
		}
		p.advance()
		return h.kind, true
	}
	return 0, false
}

// blockBody parses declarations and statements up to the block's closing brace.
func (p *parser) blockBody(b *Block) {
	for !p.isPunct("}") {
		if p.tok.kind == tEOF {
			p.fail(fmt.Sprintf("Expected \"}\" to close the %s block but found end of file.", b.Kind))
		}
		p.recoverTo(func() {
			if p.isDeclStart() {
				kind := GlobalVar
				if b.Kind == ModelBlock {
					kind = LocalVar // the model block's variables are local to it
				}
				b.Stmts = append(b.Stmts, p.varDecl(b.Kind, kind)...)
				return
			}
			if b.Kind == DataBlock || b.Kind == ParametersBlock {
				p.fail(fmt.Sprintf("Expected a variable declaration in the %s block but found %s (statements are not allowed in the %s block).", b.Kind, p.describe(), b.Kind))
			}
			if s := p.statement(b.Kind); s != nil {
				b.Stmts = append(b.Stmts, s)
			}
		})
	}
	p.advance()
}

// functions parses the functions block's body.
func (p *parser) functions() {
	for !p.isPunct("}") {
		if p.tok.kind == tEOF {
			p.fail("Expected \"}\" to close the functions block but found end of file.")
		}
		p.recoverTo(func() {
			p.prog.Functions = append(p.prog.Functions, p.funDef())
		})
	}
	p.advance()
}

func (p *parser) funDef() *FunDef {
	f := &FunDef{Pos: p.tok.pos}
	if p.is("void") {
		f.Ret = TVoid
		p.advance()
	} else {
		t, ok := p.unsizedType()
		if !ok {
			p.fail(fmt.Sprintf("Expected a function's return type (void, int, real, vector, …) but found %s.", p.describe()))
		}
		f.Ret = t
	}
	if p.tok.kind != tIdent {
		p.fail(fmt.Sprintf("Expected a function name but found %s.", p.describe()))
	}
	p.checkNewName(p.tok)
	f.Name = p.tok.text
	p.advance()
	p.expect("(", "after the function name")
	for !p.isPunct(")") {
		if len(f.Params) > 0 {
			p.expect(",", "between function arguments")
		}
		a := &VarDecl{Pos: p.tok.pos, Kind: ParamVar, Block: FunctionsBlock}
		if p.is("data") {
			a.DataOnly = true
			p.advance()
		}
		t, ok := p.unsizedType()
		if !ok {
			p.fail(fmt.Sprintf("Expected an argument type (int, real, vector, array[] real, …) but found %s.", p.describe()))
		}
		a.Type = t
		if p.tok.kind != tIdent {
			p.fail(fmt.Sprintf("Expected an argument name but found %s.", p.describe()))
		}
		p.checkNewName(p.tok)
		a.Name = p.tok.text
		a.Pos = p.tok.pos
		p.advance()
		f.Params = append(f.Params, a)
	}
	p.advance()
	if p.isPunct(";") {
		p.advance()
		return f
	}
	if !p.isPunct("{") {
		p.fail(fmt.Sprintf("Expected \"{\" to start the body of function '%s' (or \";\" for a forward declaration) but found %s.", f.Name, p.describe()))
	}
	f.Body = p.blockStmt(FunctionsBlock)
	return f
}

// unsizedType parses a function argument or return type: array[,] base, or the old
// base[,] form.
func (p *parser) unsizedType() (Type, bool) {
	var t Type
	if p.is("array") && p.lookahead(1).kind == tPunct && p.lookahead(1).text == "[" {
		p.advance()
		p.advance()
		t.Array = 1
		for p.isPunct(",") {
			t.Array++
			p.advance()
		}
		p.expect("]", "after the array dimensions of an argument type")
	}
	b, ok := baseKeyword(p.tok)
	if !ok {
		return t, false
	}
	t.Base = b
	p.advance()
	if p.isPunct("[") && t.Array == 0 {
		pos := p.tok.pos
		p.advance()
		t.Array = 1
		for p.isPunct(",") {
			t.Array++
			p.advance()
		}
		p.expect("]", "after the array dimensions of an argument type")
		p.d.warn(pos, fmt.Sprintf("Declaration of arrays by placing brackets after a type is deprecated; use %s instead.", t))
	}
	return t, true
}

func baseKeyword(t token) (Base, bool) {
	if t.kind != tIdent {
		return 0, false
	}
	switch t.text {
	case "int":
		return Int, true
	case "real":
		return Real, true
	case "vector":
		return Vector, true
	case "row_vector":
		return RowVector, true
	case "matrix":
		return Matrix, true
	}
	return 0, false
}

// constrainedKeywords maps the constrained type keywords to their base and constraint.
var constrainedKeywords = map[string]struct {
	base  Base
	cons  ConsKind
	sizes int // how many sizes in brackets (cholesky_factor_cov takes 1 or 2)
}{
	"simplex":              {Vector, ConsSimplex, 1},
	"ordered":              {Vector, ConsOrdered, 1},
	"positive_ordered":     {Vector, ConsPositiveOrdered, 1},
	"unit_vector":          {Vector, ConsUnitVector, 1},
	"cholesky_factor_corr": {Matrix, ConsCholeskyCorr, 1},
	"cholesky_factor_cov":  {Matrix, ConsCholeskyCov, 2},
	"corr_matrix":          {Matrix, ConsCorr, 1},
	"cov_matrix":           {Matrix, ConsCov, 1},
}

// isDeclStart reports whether the current token starts a variable declaration.
func (p *parser) isDeclStart() bool {
	if p.tok.kind != tIdent {
		return false
	}
	if _, ok := baseKeyword(p.tok); ok {
		return true
	}
	if _, ok := constrainedKeywords[p.tok.text]; ok {
		return true
	}
	if p.tok.text == "array" {
		nx := p.lookahead(1)
		return nx.kind == tPunct && nx.text == "["
	}
	return p.tok.text == "complex" || p.tok.text == "complex_vector" || p.tok.text == "complex_matrix" || p.tok.text == "complex_row_vector" || p.tok.text == "tuple"
}

// varDecl parses a variable declaration (possibly of several names: `real a, b = 1;`).
func (p *parser) varDecl(block BlockKind, kind DeclKind) []Stmt {
	start := p.tok.pos
	startOff := p.tok.off
	var dims []Expr
	if p.is("array") {
		p.advance()
		p.expect("[", "after \"array\"")
		dims = p.exprList("]", "array dimensions")
		if len(dims) == 0 {
			p.fail("Expected the array sizes (array[N] real x;) but found \"]\".")
		}
		p.advance()
	}
	if strings.HasPrefix(p.tok.text, "complex") || p.tok.text == "tuple" {
		p.fail(fmt.Sprintf("The type %q is not supported by vigo's Stan front end.", p.tok.text))
	}
	var base Base
	var cons Constraint
	nsizes := 0
	if b, ok := baseKeyword(p.tok); ok {
		base = b
		switch b {
		case Vector, RowVector:
			nsizes = 1
		case Matrix:
			nsizes = 2
		}
		p.advance()
		if p.isPunct("<") {
			cons = p.rangeConstraint()
		}
	} else if ck, ok := constrainedKeywords[p.tok.text]; ok {
		base, cons.Kind, nsizes = ck.base, ck.cons, ck.sizes
		p.advance()
	} else {
		p.fail(fmt.Sprintf("Expected a type (int, real, vector, …) after \"array[...]\" but found %s.", p.describe()))
	}
	var sizes []Expr
	if nsizes > 0 {
		kw := base.String()
		if cons.Kind > ConsAffine {
			kw = cons.Kind.String()
		}
		p.expect("[", "and the size of the "+kw)
		sizes = p.exprList("]", "sizes")
		p.advance()
		want := nsizes
		if cons.Kind == ConsCholeskyCov && len(sizes) == 1 {
			want = 1
		}
		if len(sizes) != want {
			p.failAt(start, fmt.Sprintf("A %s declaration takes %d size(s) in brackets; found %d.", kw, want, len(sizes)))
		}
	}
	typeText := strings.TrimSpace(string(p.lx.src[startOff:p.tok.off]))
	var out []Stmt
	for {
		if p.tok.kind != tIdent {
			p.fail(fmt.Sprintf("Expected a new identifier after the type but found %s.", p.describe()))
		}
		p.checkNewName(p.tok)
		d := &VarDecl{Pos: p.tok.pos, Name: p.tok.text, Cons: cons, Kind: kind, Block: block, Sizes: sizes, Dims: dims}
		d.Type = Type{Base: base}
		p.advance()
		if p.isPunct("[") { // the pre-2.33 form real x[N];
			pos := p.tok.pos
			if len(dims) > 0 {
				p.fail("An array declaration may not have both \"array[...]\" and sizes after the name.")
			}
			lb := p.tok.off
			p.advance()
			d.Dims = p.exprList("]", "array dimensions")
			dimsText := strings.Join(strings.Fields(string(p.lx.src[lb+1:p.tok.off])), " ")
			p.advance()
			d.OldSyntax = true
			p.d.warn(pos, fmt.Sprintf("Declaration of arrays by placing brackets after a variable name is deprecated and removed in Stan 2.33; write array[%s] %s %s instead.", dimsText, typeText, d.Name))
		}
		d.Type.Array = len(d.Dims)
		if p.isPunct("=") {
			p.advance()
			d.Init = p.expr()
		}
		out = append(out, d)
		if !p.isPunct(",") {
			break
		}
		p.advance()
	}
	if !p.isPunct(";") {
		p.failMissing(fmt.Sprintf("Expected \";\" after variable declaration but found %s.", p.describe()))
	}
	p.advance()
	return out
}

// rangeConstraint parses <lower=…, upper=…> or <offset=…, multiplier=…>.
func (p *parser) rangeConstraint() Constraint {
	p.advance() // <
	var c Constraint
	for {
		if p.tok.kind != tIdent {
			p.fail(fmt.Sprintf("Expected \"lower\", \"upper\", \"offset\" or \"multiplier\" in the constraint but found %s.", p.describe()))
		}
		name := p.tok.text
		pos := p.tok.pos
		p.advance()
		p.expect("=", "after \""+name+"\" in the constraint")
		e := p.binary(precAdd) // no comparisons: '>' ends the constraint
		set := func(dst *Expr, kind ConsKind) {
			if c.Kind != ConsNone && c.Kind != kind {
				p.failAt(pos, "A declaration cannot have both lower/upper bounds and an offset/multiplier.")
			}
			if *dst != nil {
				p.failAt(pos, fmt.Sprintf("The constraint %q is given twice.", name))
			}
			c.Kind = kind
			*dst = e
		}
		switch name {
		case "lower":
			set(&c.Lower, ConsBounds)
		case "upper":
			set(&c.Upper, ConsBounds)
		case "offset":
			set(&c.Offset, ConsAffine)
		case "multiplier":
			set(&c.Multiplier, ConsAffine)
		default:
			p.failAt(pos, fmt.Sprintf("Expected \"lower\", \"upper\", \"offset\" or \"multiplier\" in the constraint but found %q.", name))
		}
		if p.isPunct(",") {
			p.advance()
			continue
		}
		break
	}
	p.expect(">", "to close the constraint")
	return c
}

// reserved are the words that cannot name a variable or function.
var reserved = map[string]bool{
	"for": true, "in": true, "while": true, "repeat": true, "until": true, "if": true, "then": true,
	"else": true, "true": true, "false": true, "target": true, "functions": true, "model": true,
	"data": true, "parameters": true, "quantities": true, "transformed": true, "generated": true,
	"int": true, "real": true, "vector": true, "row_vector": true, "matrix": true, "array": true,
	"simplex": true, "ordered": true, "positive_ordered": true, "unit_vector": true,
	"cholesky_factor_corr": true, "cholesky_factor_cov": true, "corr_matrix": true, "cov_matrix": true,
	"complex": true, "tuple": true, "void": true, "return": true, "break": true, "continue": true,
	"print": true, "reject": true, "fatal_error": true, "lower": false, "upper": false,
	"offset": false, "multiplier": false, "profile": true, "get_lp": true,
}

// checkNewName reports a reserved word used as a new identifier.
func (p *parser) checkNewName(t token) {
	if t.kind == tIdent && reserved[t.text] {
		p.failAt(t.pos, fmt.Sprintf("Expected a new identifier but found reserved keyword '%s'.", t.text))
	}
	if t.kind == tIdent && strings.HasSuffix(t.text, "__") {
		p.failAt(t.pos, fmt.Sprintf("Identifier '%s' ends in __, which is reserved for the compiler.", t.text))
	}
}

// ---------------------------------------------------------------------------------------------
// Statements

func (p *parser) blockStmt(block BlockKind) *BlockStmt {
	b := &BlockStmt{Pos: p.tok.pos}
	p.expect("{", "")
	p.enter()
	defer p.leave()
	for !p.isPunct("}") {
		if p.tok.kind == tEOF {
			p.fail("Expected \"}\" to close the block but found end of file.")
		}
		p.recoverTo(func() {
			if p.isDeclStart() {
				b.Stmts = append(b.Stmts, p.varDecl(block, LocalVar)...)
				return
			}
			if s := p.statement(block); s != nil {
				b.Stmts = append(b.Stmts, s)
			}
		})
	}
	p.advance()
	return b
}

// statement parses one statement (nil for an empty statement ";").
func (p *parser) statement(block BlockKind) Stmt {
	p.enter()
	defer p.leave()
	pos := p.tok.pos
	if p.tok.kind == tPunct {
		switch p.tok.text {
		case "{":
			return p.blockStmt(block)
		case ";":
			p.advance()
			return nil
		}
	}
	if p.tok.kind == tIdent {
		switch p.tok.text {
		case "if":
			p.advance()
			p.expect("(", "after \"if\"")
			s := &If{Pos: pos, Cond: p.expr()}
			p.expect(")", "after the if condition")
			s.Then = p.subStatement(block)
			if p.is("else") {
				p.advance()
				s.Else = p.subStatement(block)
			}
			return s
		case "while":
			p.advance()
			p.expect("(", "after \"while\"")
			s := &While{Pos: pos, Cond: p.expr()}
			p.expect(")", "after the while condition")
			s.Body = p.subStatement(block)
			return s
		case "for":
			return p.forStmt(block)
		case "break", "continue":
			word := p.tok.text
			p.advance()
			p.expect(";", "after \""+word+"\"")
			if word == "break" {
				return &Break{Pos: pos}
			}
			return &Continue{Pos: pos}
		case "return":
			p.advance()
			s := &Return{Pos: pos}
			if !p.isPunct(";") {
				s.Value = p.expr()
			}
			p.expect(";", "after return statement")
			return s
		case "print", "reject", "fatal_error":
			word := p.tok.text
			p.advance()
			p.expect("(", "after \""+word+"\"")
			s := &Print{Pos: pos}
			switch word {
			case "reject":
				s.Kind = RejectStmt
			case "fatal_error":
				s.Kind = FatalErrorStmt
			}
			for !p.isPunct(")") {
				if len(s.Args) > 0 {
					p.expect(",", "between the arguments of "+word)
				}
				if p.tok.kind == tString {
					s.Args = append(s.Args, &StringLit{ExprInfo: ExprInfo{Pos: p.tok.pos}, Value: p.tok.text})
					p.advance()
				} else {
					s.Args = append(s.Args, p.expr())
				}
			}
			p.advance()
			if len(s.Args) == 0 {
				p.failAt(pos, fmt.Sprintf("%s requires at least one argument.", word))
			}
			p.expect(";", "after "+word+"(...)")
			return s
		case "target":
			if nx := p.lookahead(1); nx.kind == tPunct && nx.text == "+=" {
				p.advance()
				p.advance()
				s := &TargetPlus{Pos: pos, Expr: p.expr()}
				p.expect(";", "after \"target +=\" statement")
				return s
			}
		case "increment_log_prob":
			if nx := p.lookahead(1); nx.kind == tPunct && nx.text == "(" {
				p.d.warn(pos, "increment_log_prob(...) is deprecated; use target += ...; instead.")
				p.advance()
				p.advance()
				s := &TargetPlus{Pos: pos, Expr: p.expr()}
				p.expect(")", "after the argument of increment_log_prob")
				p.expect(";", "after increment_log_prob(...)")
				return s
			}
		case "profile":
			if nx := p.lookahead(1); nx.kind == tPunct && nx.text == "(" {
				p.advance()
				p.advance()
				if p.tok.kind != tString {
					p.fail("Expected a string literal naming the profile.")
				}
				p.advance()
				p.expect(")", "after the profile name")
				return p.blockStmt(block)
			}
		case "else":
			p.fail("Found \"else\" without a matching \"if\".")
		}
	}
	lhs := p.expr()
	if p.tok.kind == tPunct {
		switch p.tok.text {
		case "=", "+=", "-=", "*=", "/=", ".*=", "./=":
			op := p.tok.text
			p.advance()
			s := &Assign{Pos: pos, LHS: lhs, Op: op, RHS: p.expr()}
			p.expect(";", "after assignment")
			return s
		case "~":
			return p.tilde(pos, lhs)
		case ";":
			c, ok := lhs.(*Call)
			if !ok {
				p.failAt(pos, "Ill-formed phrase. Found an expression where a statement was expected (an expression statement must be a call of a void function).")
			}
			p.advance()
			return &ExprStmt{Pos: pos, Call: c}
		}
	}
	p.fail(fmt.Sprintf("Expected \"=\", \"~\" or \";\" after the expression but found %s.", p.describe()))
	return nil
}

// subStatement parses the body of if/else/for/while; a declaration is not allowed there.
func (p *parser) subStatement(block BlockKind) Stmt {
	if p.isDeclStart() {
		p.fail("A variable declaration is not allowed as the body of a control statement; put it in a block { }.")
	}
	s := p.statement(block)
	if s == nil {
		return &BlockStmt{Pos: p.tok.pos}
	}
	return s
}

func (p *parser) forStmt(block BlockKind) Stmt {
	pos := p.tok.pos
	p.advance()
	p.expect("(", "after \"for\"")
	if p.tok.kind != tIdent {
		p.fail(fmt.Sprintf("Expected a loop variable after \"for (\" but found %s.", p.describe()))
	}
	p.checkNewName(p.tok)
	v := &VarDecl{Pos: p.tok.pos, Name: p.tok.text, Kind: LoopVar, Block: block}
	p.advance()
	if !p.is("in") {
		p.fail(fmt.Sprintf("Expected \"in\" after the loop variable but found %s.", p.describe()))
	}
	p.advance()
	lo := p.expr()
	if p.isPunct(":") {
		p.advance()
		hi := p.expr()
		p.expect(")", "after the for loop's range")
		v.Type = TInt
		return &For{Pos: pos, Var: v, Lo: lo, Hi: hi, Body: p.subStatement(block)}
	}
	p.expect(")", "after the foreach loop's container")
	return &ForEach{Pos: pos, Var: v, Over: lo, Body: p.subStatement(block)}
}

func (p *parser) tilde(pos Pos, lhs Expr) Stmt {
	p.advance() // ~
	if p.tok.kind != tIdent {
		p.fail(fmt.Sprintf("Expected a distribution name after \"~\" but found %s.", p.describe()))
	}
	s := &Tilde{Pos: pos, LHS: lhs, Dist: p.tok.text}
	p.advance()
	p.expect("(", "after the distribution name")
	s.Args = p.exprList(")", "distribution arguments")
	p.advance()
	if p.is("T") {
		if nx := p.lookahead(1); nx.kind == tPunct && nx.text == "[" {
			tr := &Truncation{Pos: p.tok.pos}
			p.advance()
			p.advance()
			if !p.isPunct(",") {
				tr.Lo = p.expr()
			}
			p.expect(",", "in truncation T[L, U]")
			if !p.isPunct("]") {
				tr.Hi = p.expr()
			}
			p.expect("]", "to close the truncation")
			s.Trunc = tr
		}
	}
	p.expect(";", "after \"~\" statement")
	return s
}

// exprList parses comma-separated expressions up to (not past) the closing punctuation.
func (p *parser) exprList(closer, what string) []Expr {
	var out []Expr
	for !p.isPunct(closer) {
		if len(out) > 0 {
			p.expect(",", "or \""+closer+"\" between "+what)
		}
		out = append(out, p.expr())
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// Expressions

// Binary operator precedence levels, loosest first (Stan Reference Manual, "Operator
// precedence and associativity").
const (
	precOr = iota
	precAnd
	precEq
	precCmp
	precAdd
	precMul
	precLDiv
	precElt
	precUnary
)

var binOps = [...][]string{
	precOr:   {"||"},
	precAnd:  {"&&"},
	precEq:   {"==", "!="},
	precCmp:  {"<", "<=", ">", ">="},
	precAdd:  {"+", "-"},
	precMul:  {"*", "/", "%", "%/%"},
	precLDiv: {"\\"},
	precElt:  {".*", "./"},
}

// opNames maps the binary operators to the built-in names they resolve to.
var opNames = map[string]string{
	"||": "logical_or", "&&": "logical_and", "==": "logical_eq", "!=": "logical_neq",
	"<": "logical_lt", "<=": "logical_lte", ">": "logical_gt", ">=": "logical_gte",
	"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "%": "modulus",
	"%/%": "int_divide", "\\": "mdivide_left", ".*": "elt_multiply", "./": "elt_divide",
	"^": "pow", ".^": "pow",
}

// expr parses a full expression (ternary level).
func (p *parser) expr() Expr {
	p.enter()
	defer p.leave()
	c := p.binary(precOr)
	if p.isPunct("?") {
		pos := c.Position()
		p.advance()
		th := p.expr()
		p.expect(":", "in the conditional expression ? :")
		el := p.expr()
		return &Ternary{ExprInfo: ExprInfo{Pos: pos}, Cond: c, Then: th, Else: el}
	}
	return c
}

func (p *parser) binary(level int) Expr {
	if level == precUnary {
		return p.unary()
	}
	l := p.binary(level + 1)
	chain := 0 // a long chain a + b + c … nests the tree as deeply as parentheses would
	defer func() { p.depth -= chain }()
	for p.tok.kind == tPunct {
		op := ""
		for _, o := range binOps[level] {
			if p.tok.text == o {
				op = o
			}
		}
		if op == "" {
			break
		}
		p.advance()
		p.enter()
		chain++
		r := p.binary(level + 1)
		l = &Binary{ExprInfo: ExprInfo{Pos: l.Position()}, Op: op, Name: opNames[op], L: l, R: r}
	}
	return l
}

func (p *parser) unary() Expr {
	p.enter()
	defer p.leave()
	if p.tok.kind == tPunct {
		switch p.tok.text {
		case "-", "!", "+":
			pos := p.tok.pos
			op := p.tok.text
			p.advance()
			x := p.unary()
			name := map[string]string{"-": "minus", "!": "logical_negation", "+": "plus"}[op]
			return &Unary{ExprInfo: ExprInfo{Pos: pos}, Op: op, Name: name, X: x}
		}
	}
	x := p.postfix()
	if p.isPunct("^") || p.isPunct(".^") {
		op := p.tok.text
		p.advance()
		r := p.unary() // right associative; binds tighter than unary minus on its left
		return &Binary{ExprInfo: ExprInfo{Pos: x.Position()}, Op: op, Name: opNames[op], L: x, R: r}
	}
	return x
}

func (p *parser) postfix() Expr {
	x := p.primary()
	chain := 0
	defer func() { p.depth -= chain }()
	for p.tok.kind == tPunct {
		p.enter()
		chain++
		switch p.tok.text {
		case "[":
			x = p.indexing(x)
			continue
		case "'":
			pos := p.tok.pos
			p.advance()
			x = &Unary{ExprInfo: ExprInfo{Pos: pos}, Op: "'", Name: "transpose", X: x}
			continue
		}
		break
	}
	return x
}

func (p *parser) indexing(x Expr) Expr {
	p.advance() // [
	ie := &IndexExpr{ExprInfo: ExprInfo{Pos: x.Position()}, X: x}
	for {
		ix := &Index{Pos: p.tok.pos}
		switch {
		case p.isPunct(",") || p.isPunct("]"):
			ix.Kind = IndexRange // x[, 1]: an omitted index is all of that dimension
		case p.isPunct(":"):
			ix.Kind = IndexRange
			p.advance()
			if !p.isPunct(",") && !p.isPunct("]") {
				ix.Hi = p.expr()
			}
		default:
			ix.Lo = p.expr()
			if p.isPunct(":") {
				ix.Kind = IndexRange
				p.advance()
				if !p.isPunct(",") && !p.isPunct("]") {
					ix.Hi = p.expr()
				}
			}
		}
		ie.Indices = append(ie.Indices, ix)
		if p.isPunct(",") {
			p.advance()
			continue
		}
		break
	}
	p.expect("]", "to close the indexes")
	return ie
}

func (p *parser) primary() Expr {
	t := p.tok
	info := ExprInfo{Pos: t.pos}
	switch t.kind {
	case tInt:
		p.advance()
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil || v > math.MaxInt32 {
			p.failAt(t.pos, fmt.Sprintf("Integer literal %s is too large (Stan's int is 32-bit).", t.text))
		}
		return &IntLit{ExprInfo: info, Value: int(v), Text: t.text}
	case tReal:
		p.advance()
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil && !math.IsInf(v, 0) {
			p.failAt(t.pos, fmt.Sprintf("Invalid real literal %s.", t.text))
		}
		return &RealLit{ExprInfo: info, Value: v, Text: t.text}
	case tString:
		p.failAt(t.pos, "String literals are allowed only in print, reject and fatal_error.")
	case tIdent:
		if reserved[t.text] && t.text != "target" && t.text != "get_lp" {
			p.failAt(t.pos, fmt.Sprintf("Expected an expression but found reserved keyword '%s'.", t.text))
		}
		p.advance()
		if !p.isPunct("(") {
			if t.text == "target" {
				p.failAt(t.pos, "Expected \"(\" after \"target\": the log density so far is target().")
			}
			return &Ident{ExprInfo: info, Name: t.text}
		}
		p.advance()
		if t.text == "target" || t.text == "get_lp" {
			p.expect(")", "after \""+t.text+"(\"")
			if t.text == "get_lp" {
				p.d.warn(t.pos, "get_lp() is deprecated; use target() instead.")
			}
			return &TargetExpr{ExprInfo: info}
		}
		c := &Call{ExprInfo: info, Name: t.text}
		for !p.isPunct(")") {
			if len(c.Args) > 0 {
				if p.isPunct("|") {
					if len(c.Args) != 1 || c.Bar {
						p.fail("The conditional bar \"|\" must come right after the first argument.")
					}
					c.Bar = true
					p.advance()
				} else {
					p.expect(",", "or \")\" between function arguments")
				}
			}
			c.Args = append(c.Args, p.expr())
		}
		if c.Bar && len(c.Args) < 2 {
			p.fail("Expected an argument after the conditional bar \"|\".")
		}
		p.advance()
		return c
	case tPunct:
		switch t.text {
		case "(":
			p.advance()
			x := p.expr()
			p.expect(")", "to close the parenthesis")
			return &Paren{ExprInfo: info, X: x}
		case "{":
			p.advance()
			a := &ArrayExpr{ExprInfo: info, Elems: p.exprList("}", "array expression elements")}
			p.advance()
			if len(a.Elems) == 0 {
				p.failAt(t.pos, "An array expression { } must have at least one element.")
			}
			return a
		case "[":
			p.advance()
			r := &RowVectorExpr{ExprInfo: info, Elems: p.exprList("]", "row vector expression elements")}
			p.advance()
			return r
		}
	}
	p.fail(fmt.Sprintf("Expected an expression but found %s.", p.describe()))
	return nil
}
