package stan

// The abstract syntax tree of a Stan program. Parse builds it; Check fills the fields marked
// "set by Check" (every expression's type and data-ness, every call's resolved signature or
// user-defined function, every identifier's declaration); the compiler reads the checked tree.
//
// Every node carries the position of its first token. Variables are identified by their
// *VarDecl: block variables, local variables, function parameters and loop variables all have
// one, and every Ident that names a variable points at it.

// BlockKind names a program block.
type BlockKind uint8

// The program blocks, in the order Stan requires them.
const (
	FunctionsBlock BlockKind = iota
	DataBlock
	TransformedDataBlock
	ParametersBlock
	TransformedParametersBlock
	ModelBlock
	GeneratedQuantitiesBlock
)

var blockNames = [...]string{
	FunctionsBlock:             "functions",
	DataBlock:                  "data",
	TransformedDataBlock:       "transformed data",
	ParametersBlock:            "parameters",
	TransformedParametersBlock: "transformed parameters",
	ModelBlock:                 "model",
	GeneratedQuantitiesBlock:   "generated quantities",
}

// String returns the block's Stan name, e.g. "transformed data".
func (k BlockKind) String() string {
	if int(k) < len(blockNames) {
		return blockNames[k]
	}
	return "?"
}

// Program is a parsed Stan program.
type Program struct {
	File string
	Src  []byte
	// Functions lists the functions block's declarations and definitions in source order (a
	// forward declaration has Body == nil and, after Check, Def set to its definition).
	Functions []*FunDef
	// The blocks; nil when absent. A block's Stmts hold its declarations (*VarDecl with Kind
	// GlobalVar) and statements in source order.
	Data, TransformedData, Parameters, TransformedParameters, Model, GeneratedQuantities *Block
	// Warnings are non-fatal diagnostics (deprecated syntax, …) from Parse and Check.
	Warnings []*Error
	// Checked is set by a successful Check.
	Checked bool
}

// Blocks returns the program's blocks other than functions, in order, skipping absent ones.
func (p *Program) Blocks() []*Block {
	var out []*Block
	for _, b := range []*Block{p.Data, p.TransformedData, p.Parameters, p.TransformedParameters, p.Model, p.GeneratedQuantities} {
		if b != nil {
			out = append(out, b)
		}
	}
	return out
}

// Block is one program block (not functions).
type Block struct {
	Pos   Pos
	Kind  BlockKind
	Stmts []Stmt
}

// Node is any syntax tree node.
type Node interface {
	Position() Pos
}

// ---------------------------------------------------------------------------------------------
// Declarations

// DeclKind says where a variable is declared.
type DeclKind uint8

// Variable kinds.
const (
	GlobalVar DeclKind = iota // declared at the top level of a program block (data, parameters, …)
	LocalVar                  // declared in a nested block, a model block or a function body
	ParamVar                  // a function's parameter
	LoopVar                   // a for or foreach loop's variable
)

// ConsKind is the kind of a declared constraint.
type ConsKind uint8

// Constraint kinds.
const (
	ConsNone            ConsKind = iota
	ConsBounds                   // <lower=L, upper=U>, either bound may be nil
	ConsAffine                   // <offset=O, multiplier=M>, either may be nil
	ConsSimplex                  // simplex[K]
	ConsOrdered                  // ordered[K]
	ConsPositiveOrdered          // positive_ordered[K]
	ConsUnitVector               // unit_vector[K]
	ConsCholeskyCorr             // cholesky_factor_corr[K]
	ConsCholeskyCov              // cholesky_factor_cov[M] or cholesky_factor_cov[M, N]
	ConsCorr                     // corr_matrix[K]
	ConsCov                      // cov_matrix[K]
)

var consNames = [...]string{
	ConsNone: "", ConsBounds: "bounds", ConsAffine: "offset/multiplier", ConsSimplex: "simplex",
	ConsOrdered: "ordered", ConsPositiveOrdered: "positive_ordered", ConsUnitVector: "unit_vector",
	ConsCholeskyCorr: "cholesky_factor_corr", ConsCholeskyCov: "cholesky_factor_cov",
	ConsCorr: "corr_matrix", ConsCov: "cov_matrix",
}

// String returns the Stan keyword of the constraint ("bounds" and "offset/multiplier" for
// the two bracketed kinds).
func (k ConsKind) String() string {
	if int(k) < len(consNames) {
		return consNames[k]
	}
	return "?"
}

// Constraint is a declared constraint. Lower/Upper are set for ConsBounds, Offset/Multiplier
// for ConsAffine (nil where not given). A bounded or affine vector or matrix may have bounds
// that are containers of its own type (Check verifies the types; sizes are run-time).
type Constraint struct {
	Kind                             ConsKind
	Lower, Upper, Offset, Multiplier Expr
}

// VarDecl declares a variable: a block variable, a local, a function parameter or a loop
// variable.
type VarDecl struct {
	Pos  Pos
	Name string
	// Type is the unsized type (base and array dimensions); for a loop variable it is set by
	// Check.
	Type Type
	// Dims are the array sizes, outermost first (len(Dims) == Type.Array); nil for function
	// parameters and loop variables.
	Dims []Expr
	// Sizes are the container's sizes: vector[N], simplex[N], cov_matrix[N] … → [N];
	// matrix[R, C] and cholesky_factor_cov[M, N] → [R, C] / [M, N]; none for int and real.
	Sizes []Expr
	Cons  Constraint
	// Init is the initial value (`real x = 1;`), or nil.
	Init  Expr
	Kind  DeclKind
	Block BlockKind // the block it is declared in (FunctionsBlock for parameters and locals of functions)
	// DataOnly is the `data` qualifier of a function parameter; for a foreach loop's
	// variable, Check sets it when the container is data.
	DataOnly bool
	// OldSyntax marks a declaration in the pre-2.33 form `real x[N];`.
	OldSyntax bool
}

// Position returns the declaration's position.
func (d *VarDecl) Position() Pos { return d.Pos }
func (*VarDecl) stmtNode()       {}

// FunDef is a user-defined function (a definition, or a forward declaration when Body is nil).
type FunDef struct {
	Pos    Pos
	Name   string
	Ret    Type // Void for a void function
	Params []*VarDecl
	Body   *BlockStmt
	// Def is the definition a forward declaration refers to (set by Check; for a definition,
	// itself).
	Def *FunDef
}

// Position returns the function's position.
func (f *FunDef) Position() Pos { return f.Pos }

// Suffix returns the function name's special suffix: "_lpdf", "_lpmf", "_lcdf", "_lccdf",
// "_rng", "_lp", or "".
func (f *FunDef) Suffix() string { return nameSuffix(f.Name) }

// ---------------------------------------------------------------------------------------------
// Expressions

// ExprInfo is the part every expression has: its position and what Check infers.
type ExprInfo struct {
	Pos Pos
	// Type is the expression's type (set by Check).
	Type Type
	// Data reports that the value does not depend on parameters (set by Check): literals,
	// data and transformed data, and expressions of them only.
	Data bool
}

// Info returns the expression's common fields.
func (e *ExprInfo) Info() *ExprInfo { return e }

// Position returns the expression's position.
func (e *ExprInfo) Position() Pos { return e.Pos }

// Expr is an expression node: *IntLit, *RealLit, *StringLit, *Ident, *Call, *Binary, *Unary,
// *Ternary, *IndexExpr, *ArrayExpr, *RowVectorExpr, *TargetExpr, *Paren.
type Expr interface {
	Node
	Info() *ExprInfo
}

// IntLit is an integer literal.
type IntLit struct {
	ExprInfo
	Value int
	Text  string
}

// RealLit is a real literal (1.5, .5, 1e-3, 2.).
type RealLit struct {
	ExprInfo
	Value float64
	Text  string
}

// StringLit is a string literal (print, reject and fatal_error arguments only). Value is
// the text between the quotes, escapes kept as written.
type StringLit struct {
	ExprInfo
	Value string
}

// Ident is a variable reference, or the name of a user-defined function passed to a
// higher-order built-in (then Fun is set and Type is {Func, 0}).
type Ident struct {
	ExprInfo
	Name string
	Decl *VarDecl // set by Check
	Fun  *FunDef  // set by Check when the identifier names a function
}

// Call is a function call. A distribution function called with the conditional bar,
// foo_lpdf(y | mu), has Bar set and Args [y, mu].
type Call struct {
	ExprInfo
	Name string
	Args []Expr
	Bar  bool
	// Exactly one of Sig (a built-in) and Fun (a user-defined function's definition) is set
	// by Check.
	Sig *Sig
	Fun *FunDef
}

// Binary is a binary operator expression. Op is the source spelling ("+", ".*", "&&", …);
// Name is the built-in's name it resolves to (see opNames: "add", "elt_multiply",
// "logical_and", …; "int_divide" for int / int). Sig is set by Check (for && and || too:
// the compiler evaluates those short-circuit).
type Binary struct {
	ExprInfo
	Op   string
	Name string
	L, R Expr
	Sig  *Sig
}

// Unary is a prefix operator ("-", "!", "+") or the postfix transpose ("'"). Name is
// "minus", "logical_negation", "plus" or "transpose". Sig is set by Check (nil for "+", which
// is the identity on its operand).
type Unary struct {
	ExprInfo
	Op   string
	Name string
	X    Expr
	Sig  *Sig
}

// Ternary is cond ? then : else. Type is the promoted common type of Then and Else.
type Ternary struct {
	ExprInfo
	Cond, Then, Else Expr
}

// IndexKind is the kind of one index.
type IndexKind uint8

// Index kinds.
const (
	IndexSingle IndexKind = iota // x[i], i an int
	IndexMulti                   // x[idxs], idxs an array[] int (set by Check from the type)
	IndexRange                   // x[a:b], x[a:], x[:b], x[:] (Lo / Hi nil where omitted)
)

// Index is one index inside brackets. For IndexSingle and IndexMulti the index expression
// is Lo.
type Index struct {
	Pos    Pos
	Kind   IndexKind
	Lo, Hi Expr
}

// IndexExpr is X[indices]. Type is the type after indexing (set by Check).
type IndexExpr struct {
	ExprInfo
	X       Expr
	Indices []*Index
}

// ArrayExpr is an array expression { a, b, c }.
type ArrayExpr struct {
	ExprInfo
	Elems []Expr
}

// RowVectorExpr is [a, b, c]: a row_vector of scalars, or a matrix when the elements are row
// vectors.
type RowVectorExpr struct {
	ExprInfo
	Elems []Expr
}

// TargetExpr is target() (and the deprecated get_lp()): the log density accumulated so far.
type TargetExpr struct {
	ExprInfo
}

// Paren is a parenthesised expression (kept so that positions and error messages follow the
// source; its type is X's).
type Paren struct {
	ExprInfo
	X Expr
}

// ---------------------------------------------------------------------------------------------
// Statements

// Stmt is a statement: *VarDecl, *Assign, *Tilde, *TargetPlus, *For, *ForEach, *While, *If,
// *Break, *Continue, *Return, *BlockStmt, *Print, *ExprStmt.
type Stmt interface {
	Node
	stmtNode()
}

// Assign is LHS Op RHS with Op "=" or a compound "+=", "-=", "*=", "/=", ".*=", "./=". LHS is
// an *Ident or an *IndexExpr whose innermost X is an *Ident (indexes may be nested: x[i][j]).
type Assign struct {
	Pos Pos
	LHS Expr
	Op  string
	RHS Expr
	// Var is the assigned variable (set by Check).
	Var *VarDecl
	// OpName and Sig are the compound operator's built-in ("add" for +=, …) and its resolved
	// signature on (LHS type, RHS type); empty for "=".
	OpName string
	Sig    *Sig
}

// Truncation is T[Lo, Hi] on a ~ statement; Lo or Hi is nil where the bound is empty.
type Truncation struct {
	Pos    Pos
	Lo, Hi Expr
	// The distribution's CDFs the truncation needs (set by Check): LCDF for Hi (and for Lo
	// when both are given), LCCDF for Lo alone. Each is a built-in Sig or a user function.
	LCDF, LCCDF       *Sig
	LCDFFun, LCCDFFun *FunDef
}

// Tilde is LHS ~ Dist(Args) [T[Lo, Hi]]. Check resolves Dist to its _lupdf / _lupmf (or
// _lpdf / _lpmf) built-in, Sig, or to a user-defined _lpdf / _lpmf function, Fun; the
// compiler adds Sig(LHS | Args) to target (dropping constants, as Stan does).
type Tilde struct {
	Pos   Pos
	LHS   Expr
	Dist  string
	Args  []Expr
	Trunc *Truncation
	Sig   *Sig
	Fun   *FunDef
	// FullName is the resolved function's name, e.g. "normal_lupdf" (set by Check).
	FullName string
}

// TargetPlus is `target += Expr;` (and the deprecated increment_log_prob(Expr)).
type TargetPlus struct {
	Pos  Pos
	Expr Expr
}

// For is for (Var in Lo:Hi) Body.
type For struct {
	Pos    Pos
	Var    *VarDecl
	Lo, Hi Expr
	Body   Stmt
}

// ForEach is for (Var in Over) Body over the elements of an array (or the scalars of a
// vector, row_vector or matrix, in column-major order for a matrix).
type ForEach struct {
	Pos  Pos
	Var  *VarDecl
	Over Expr
	Body Stmt
}

// While is while (Cond) Body.
type While struct {
	Pos  Pos
	Cond Expr
	Body Stmt
}

// If is if (Cond) Then [else Else]; Else is nil when absent.
type If struct {
	Pos        Pos
	Cond       Expr
	Then, Else Stmt
}

// Break is break;.
type Break struct{ Pos Pos }

// Continue is continue;.
type Continue struct{ Pos Pos }

// Return is return [Value]; Value is nil in a void function.
type Return struct {
	Pos   Pos
	Value Expr
}

// BlockStmt is { Stmts } (also a profile("name") { } block).
type BlockStmt struct {
	Pos   Pos
	Stmts []Stmt
}

// PrintKind distinguishes print, reject and fatal_error.
type PrintKind uint8

// Print kinds.
const (
	PrintStmt PrintKind = iota
	RejectStmt
	FatalErrorStmt
)

// Print is print(...), reject(...) or fatal_error(...); Args are *StringLit or expressions.
type Print struct {
	Pos  Pos
	Kind PrintKind
	Args []Expr
}

// ExprStmt is a call to a void function as a statement.
type ExprStmt struct {
	Pos  Pos
	Call *Call
}

// Position methods.
func (s *Assign) Position() Pos     { return s.Pos }
func (s *Tilde) Position() Pos      { return s.Pos }
func (s *TargetPlus) Position() Pos { return s.Pos }
func (s *For) Position() Pos        { return s.Pos }
func (s *ForEach) Position() Pos    { return s.Pos }
func (s *While) Position() Pos      { return s.Pos }
func (s *If) Position() Pos         { return s.Pos }
func (s *Break) Position() Pos      { return s.Pos }
func (s *Continue) Position() Pos   { return s.Pos }
func (s *Return) Position() Pos     { return s.Pos }
func (s *BlockStmt) Position() Pos  { return s.Pos }
func (s *Print) Position() Pos      { return s.Pos }
func (s *ExprStmt) Position() Pos   { return s.Pos }

func (*Assign) stmtNode()     {}
func (*Tilde) stmtNode()      {}
func (*TargetPlus) stmtNode() {}
func (*For) stmtNode()        {}
func (*ForEach) stmtNode()    {}
func (*While) stmtNode()      {}
func (*If) stmtNode()         {}
func (*Break) stmtNode()      {}
func (*Continue) stmtNode()   {}
func (*Return) stmtNode()     {}
func (*BlockStmt) stmtNode()  {}
func (*Print) stmtNode()      {}
func (*ExprStmt) stmtNode()   {}

// nameSuffix returns the special suffix of a function name ("_lpdf", "_lupdf", "_lpmf",
// "_lupmf", "_lcdf", "_lccdf", "_rng", "_lp") or "".
func nameSuffix(name string) string {
	for _, s := range []string{"_lpdf", "_lupdf", "_lpmf", "_lupmf", "_lcdf", "_lccdf", "_rng", "_lp"} {
		if len(name) > len(s) && name[len(name)-len(s):] == s {
			return s
		}
	}
	return ""
}
