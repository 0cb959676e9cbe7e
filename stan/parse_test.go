package stan

import (
	"fmt"
	"strings"
	"testing"
)

// sexpr prints an expression tree with explicit structure, for precedence tests.
func sexpr(e Expr) string {
	switch e := e.(type) {
	case *IntLit:
		return e.Text
	case *RealLit:
		return e.Text
	case *Ident:
		return e.Name
	case *Paren:
		return sexpr(e.X)
	case *Binary:
		return "(" + e.Op + " " + sexpr(e.L) + " " + sexpr(e.R) + ")"
	case *Unary:
		return "(" + e.Op + " " + sexpr(e.X) + ")"
	case *Ternary:
		return "(? " + sexpr(e.Cond) + " " + sexpr(e.Then) + " " + sexpr(e.Else) + ")"
	case *Call:
		parts := []string{e.Name}
		for i, a := range e.Args {
			if i == 1 && e.Bar {
				parts = append(parts, "|")
			}
			parts = append(parts, sexpr(a))
		}
		return "(call " + strings.Join(parts, " ") + ")"
	case *IndexExpr:
		parts := []string{sexpr(e.X)}
		for _, ix := range e.Indices {
			s := ""
			if ix.Lo != nil {
				s = sexpr(ix.Lo)
			}
			if ix.Kind == IndexRange {
				s += ":"
				if ix.Hi != nil {
					s += sexpr(ix.Hi)
				}
			}
			parts = append(parts, s)
		}
		return "(idx " + strings.Join(parts, " ") + ")"
	case *ArrayExpr:
		var parts []string
		for _, x := range e.Elems {
			parts = append(parts, sexpr(x))
		}
		return "{" + strings.Join(parts, " ") + "}"
	case *RowVectorExpr:
		var parts []string
		for _, x := range e.Elems {
			parts = append(parts, sexpr(x))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case *TargetExpr:
		return "target()"
	}
	return fmt.Sprintf("%T", e)
}

// parseExpr parses src as the right-hand side of an assignment in a model block.
func parseExpr(t *testing.T, src string) Expr {
	t.Helper()
	p, err := Parse("e.stan", []byte("model {\n  x = "+src+";\n}\n"))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return p.Model.Stmts[0].(*Assign).RHS
}

// TestPrecedence checks Stan's operator precedence and associativity (Reference Manual,
// "Operator precedence and associativity").
func TestPrecedence(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"a + b * c", "(+ a (* b c))"},
		{"a - b - c", "(- (- a b) c)"},
		{"a * b .* c", "(* a (.* b c))"},
		{"a \\ b * c", "(* (\\ a b) c)"},
		{"a .* b \\ c", "(\\ (.* a b) c)"},
		{"-a ^ b", "(- (^ a b))"},
		{"a ^ b ^ c", "(^ a (^ b c))"},
		{"a ^ -b", "(^ a (- b))"},
		{"a' * b", "(* (' a) b)"},
		{"x[1]'", "(' (idx x 1))"},
		{"!a && b || c", "(|| (&& (! a) b) c)"},
		{"a < b == c > d", "(== (< a b) (> c d))"},
		{"a || b ? c : d ? e : f", "(? (|| a b) c (? d e f))"},
		{"a %/% b % c", "(% (%/% a b) c)"},
		{"a ./ b .* c", "(.* (./ a b) c)"},
		{"2 * (a + b)", "(* 2 (+ a b))"},
		{"x[1:3, :]", "(idx x 1:3 :)"},
		{"x[:n, m:]", "(idx x :n m:)"},
		{"x[, 1]", "(idx x : 1)"},
		{"x[i][j]", "(idx (idx x i) j)"},
		{"normal_lpdf(y | mu, s)", "(call normal_lpdf y | mu s)"},
		{"{1, 2}", "{1 2}"},
		{"[1, 2]'", "(' [1 2])"},
		{"[[1, 2], [3, 4]]", "[[1 2] [3 4]]"},
		{"1e-3 + .5 + 2. + 3E+2", "(+ (+ (+ 1e-3 .5) 2.) 3E+2)"},
		{"target()", "target()"},
		{"a.*b", "(.* a b)"},
		{"2.*b", "(* 2. b)"},
	} {
		if got := sexpr(parseExpr(t, c.src)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.src, got, c.want)
		}
	}
}

// TestCheckTypes checks the types Check infers, promotion and resolution.
func TestCheckTypes(t *testing.T) {
	decls := "data {\n  int N;\n  array[N] int k;\n  vector[N] v;\n  row_vector[N] r;\n  matrix[N, N] M;\n  array[N, 2] vector[N] av;\n}\nmodel {\n"
	for _, c := range []struct{ src, want string }{
		{"1", "int"},
		{"1.5", "real"},
		{"v[1]", "real"},
		{"v[k]", "vector"},
		{"v[2:3]", "vector"},
		{"r[1]", "real"},
		{"M[1]", "row_vector"},
		{"M[1, 2]", "real"},
		{"M[:, 2]", "vector"},
		{"M[1, :]", "row_vector"},
		{"M[k, k]", "matrix"},
		{"M[k]", "matrix"},
		{"av[1]", "array[] vector"},
		{"av[1, 2]", "vector"},
		{"av[1, 2, 3]", "real"},
		{"av[:, 1]", "array[] vector"},
		{"av[k, :, 1]", "array[,] real"},
		{"k[1]", "int"},
		{"k[2:N]", "array[] int"},
		{"v'", "row_vector"},
		{"M * v", "vector"},
		{"1 + 2", "int"},
		{"1 + 2.0", "real"},
		{"1 ? 2 : 3.0", "real"},
		{"{1, 2.0}", "array[] real"},
		{"{v, v}", "array[] vector"},
		{"[1, 2]", "row_vector"},
		{"[r, r]", "matrix"},
		{"exp(k)", "array[] real"},
		{"exp(v)", "vector"},
		{"sum(k)", "int"},
		{"N < 2", "int"},
		{"normal_lpdf(v | 0, 1)", "real"},
		{"target()", "real"},
	} {
		p, err := Parse("t.stan", []byte(decls+"  print("+c.src+");\n}\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if err := p.Check(fakeTable()); err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		pr := p.Model.Stmts[0].(*Print)
		if got := pr.Args[0].Info().Type.String(); got != c.want {
			t.Errorf("%s: type %s, want %s", c.src, got, c.want)
		}
	}
}

// TestCheckResolution checks what Check records for the compiler: declarations of identifiers,
// signatures of calls, ~ statements, user functions (forward declarations, recursion, the
// _lupdf call of a user _lpdf), data-ness.
func TestCheckResolution(t *testing.T) {
	src := `functions {
  real fact(int n);
  real fact(int n) {
    if (n <= 1) return 1;
    return n * fact(n - 1);
  }
  real my_lpdf(real y, real mu) {
    return normal_lpdf(y | mu, 1);
  }
}
data {
  int N;
  vector[N] y;
}
parameters {
  real mu;
  real<lower=0> sigma;
}
model {
  y ~ normal(mu, sigma);
  mu ~ my(0);
  target += my_lupdf(mu | fact(3));
  for (i in 1:N) {
    target += y[i];
  }
}
`
	p, err := Parse("r.stan", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(fakeTable()); err != nil {
		t.Fatal(err)
	}
	def := p.Functions[1]
	if p.Functions[0].Def != def || def.Def != def {
		t.Errorf("forward declaration not linked to its definition")
	}
	ret := def.Body.Stmts[1].(*Return).Value.(*Binary)
	if ret.R.(*Call).Fun != def {
		t.Errorf("recursive call not resolved to the definition")
	}
	m := p.Model.Stmts
	t0 := m[0].(*Tilde)
	if t0.Sig == nil || t0.FullName != "normal_lupdf" {
		t.Errorf("y ~ normal: FullName %q Sig %v", t0.FullName, t0.Sig)
	}
	if id := t0.LHS.(*Ident); id.Decl == nil || id.Decl.Block != DataBlock || !id.Data {
		t.Errorf("y: decl %+v data %v", id.Decl, id.Data)
	}
	if id := t0.Args[0].(*Ident); id.Decl == nil || id.Decl.Block != ParametersBlock || id.Data {
		t.Errorf("mu: decl %+v data %v", id.Decl, id.Data)
	}
	if t1 := m[1].(*Tilde); t1.Fun != p.Functions[2] || t1.FullName != "my_lpdf" {
		t.Errorf("mu ~ my: Fun %v FullName %q", t1.Fun, t1.FullName)
	}
	if c := m[2].(*TargetPlus).Expr.(*Call); c.Fun != p.Functions[2] || !c.Bar {
		t.Errorf("my_lupdf call: Fun %v", c.Fun)
	}
	loop := m[3].(*For)
	ix := loop.Body.(*BlockStmt).Stmts[0].(*TargetPlus).Expr.(*IndexExpr)
	if ix.Indices[0].Lo.(*Ident).Decl != loop.Var || loop.Var.Kind != LoopVar || !ix.Data {
		t.Errorf("loop variable not resolved")
	}
}

// TestCheckAccepts lists programs that must type-check (rules that are easy to get too strict).
func TestCheckAccepts(t *testing.T) {
	for _, src := range []string{
		// int → real promotion in assignment, function arguments and returns
		"functions {\n  real f(real x) { return 1; }\n}\ntransformed data {\n  real x = 1;\n  array[2] real a = {1, 2};\n  real y = f(2);\n}\n",
		// foreach over arrays and vectors, while, break, continue
		"transformed data {\n  vector[3] v;\n  array[2] int k = {1, 2};\n  real s = 0;\n  for (x in v) s += x;\n  for (i in k) { if (i > 1) break; else continue; }\n  while (s < 10) s += 1;\n}\n",
		// void functions, _lp functions, _rng functions
		"functions {\n  void p(real x) { print(x); }\n  void f_lp(real x) { target += x; }\n  real g_rng() { return normal_rng(0, 1); }\n}\nparameters {\n  real mu;\n}\nmodel {\n  p(mu);\n  f_lp(mu);\n}\ngenerated quantities {\n  real z = g_rng();\n}\n",
		// truncation with either side empty
		"data {\n  real y;\n}\nparameters {\n  real mu;\n}\nmodel {\n  y ~ normal(mu, 1) T[0, ];\n  y ~ normal(mu, 1) T[, 10];\n  y ~ normal(mu, 1) T[0, 10];\n}\n",
		// constraints with expressions, offset/multiplier, every constrained type
		"data {\n  int<lower=1> K;\n  vector[K] lo;\n}\nparameters {\n  real<lower=0, upper=K + 1> a;\n  vector<lower=lo>[K] b;\n  real<offset=1, multiplier=2> c;\n  simplex[K] s;\n  ordered[K] o;\n  positive_ordered[K] po;\n  unit_vector[K] u;\n  cholesky_factor_corr[K] L;\n  cholesky_factor_cov[K, 2] Lc;\n  corr_matrix[K] R;\n  cov_matrix[K] S;\n}\n",
		// reject, fatal_error, print with strings; compound assignment; multi-index assignment
		"transformed data {\n  vector[3] v;\n  array[2] int k = {1, 2};\n  v[k] = v[k] * 2;\n  v[1:2] += v[2:3];\n  v .*= v;\n  if (v[1] < 0) reject(\"negative: \", v[1]);\n  if (v[1] > 1e9) fatal_error(\"too big\");\n}\n",
		// data-only function arguments with data
		"functions {\n  real f(data real x) { return x; }\n}\ndata {\n  real y;\n}\ntransformed data {\n  real z = f(y);\n}\n",
		// local scopes may reuse a name after the scope ends
		"transformed data {\n  {\n    real t = 1;\n  }\n  {\n    real t = 2;\n  }\n}\n",
	} {
		if _, err := checkSrc(src); err != nil {
			t.Errorf("%v\nin\n%s", err, src)
		}
	}
}

// TestCheckRejects lists programs that must not type-check, with the expected message.
func TestCheckRejects(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{"functions {\n  real f(data real x) { return x; }\n}\nparameters {\n  real mu;\n}\nmodel {\n  target += f(mu);\n}\n", "to be data only"},
		{"functions {\n  real f(real x) { x = 1; return x; }\n}\n", "Cannot assign to function argument or loop identifier 'x'."},
		{"transformed data {\n  for (i in 1:3) i = 2;\n}\n", "Cannot assign to function argument or loop identifier 'i'."},
		{"transformed data {\n  real x;\n  {\n    real x;\n  }\n}\n", "Identifier 'x' is already in use."},
		{"transformed data {\n  real x = 1.5 ? 1 : 2;\n  vector[2] v;\n  real y = 1 ? v : 2;\n}\n", "Type mismatch in ternary expression"},
		{"model {\n  real<lower=0> x;\n}\n", "Local variables cannot have constraints"},
		{"functions {\n  real f();\n}\n", "Function 'f' is declared but not defined."},
		{"functions {\n  int f_lpdf(real y) { return 1; }\n}\n", "Real return type required for probability functions ending in _lpdf"},
		{"functions {\n  real f_lpmf(real y) { return 1; }\n}\n", "Probability mass functions require integer variates"},
		{"transformed data {\n  real x = normal_lpdf(1, 0, 1);\n}\n", "require a vertical bar (|) between the first two arguments."},
		{"transformed data {\n  real x = normal_lupdf(1 | 0, 1);\n}\n", "Functions with names ending in _lupdf and _lupmf can only be used in the model block"},
		{"parameters {\n  real mu;\n}\nmodel {\n  mu ~ normal_lpdf(0, 1);\n}\n", "~ statement should refer to a distribution without its \"_lpdf\" suffix."},
		{"data {\n  int N;\n}\nparameters {\n  real mu;\n}\nmodel {\n  N ~ poisson(mu);\n  mu ~ poisson(1);\n}\n", "No distribution 'poisson' was found with the correct signature"},
		{"parameters {\n  real mu;\n  vector[mu] v;\n}\n", "Size declarations must be of type int."},
		{"parameters {\n  real mu;\n}\ntransformed parameters {\n  array[2] real a;\n  real b = a;\n}\n", "Ill-typed arguments supplied to assignment operator ="},
		{"transformed data {\n  return 1;\n}\n", "Expression return statements may only be used inside returning function definitions."},
		{"functions {\n  void f() { return 1; }\n}\n", "Expression return statements may only be used inside returning function definitions"},
		{"transformed data {\n  vector[2] v;\n  real x = v[1, 2];\n}\n", "Too many indexes, expression dimensions=1, indexes found=2."},
		{"data {\n  real x = 1;\n}\n", "Cannot assign to variables in the data block"},
		{"functions {\n  void f() { }\n}\ntransformed data {\n  real x = f();\n}\n", "A returning function was expected but a non-returning function 'f' was supplied."},
		{"functions {\n  real f() { return 1; }\n}\ntransformed data {\n  f();\n}\n", "A non-returning function was expected but a returning function 'f' was supplied."},
		{"functions {\n  real f(vector v) { return 1; }\n}\ntransformed data {\n  real x = f(1);\n}\n", "Ill-typed arguments supplied to function 'f':\n(int)\nAvailable signatures:\n(vector) => real"},
		{"parameters {\n  real mu;\n}\ngenerated quantities {\n  mu ~ normal(0, 1);\n}\n", "Target can only be accessed in the model block"},
		{"functions {\n  void f_lp() { }\n}\ngenerated quantities {\n  f_lp();\n}\n", "Functions with names ending in _lp may only be called"},
		{"transformed data {\n  array[2] int k;\n  array[2] int j = -k;\n}\n", "Ill-typed arguments supplied to prefix operator -."},
		{"data {\n  vector[2] y;\n}\nparameters {\n  real mu;\n}\nmodel {\n  y ~ normal(mu, 1) T[0, ];\n}\n", "Truncation is only defined if the left hand side of '~' is univariate"},
		{"transformed data {\n  if (1) real x = 1;\n}\n", "A variable declaration is not allowed as the body of a control statement"},
		{"transformed data {\n  else x = 1;\n}\n", "Found \"else\" without a matching \"if\"."},
		{"transformed data {\n  real x = " + strings.Repeat("(", 2000) + "1" + strings.Repeat(")", 2000) + ";\n}\n", "Program nested too deeply."},
		{"transformed data {\n  vector[2] v;\n  if (v) print(1);\n}\n", "Condition in conditional must be of type int or real. Instead found type vector."},
		{"transformed data {\n  for (i in 1:2.5) print(i);\n}\n", "Upper bound of for-loop must be of type int. Instead found type real."},
		{"transformed data {\n  real x;\n  for (i in x) print(i);\n}\n", "Foreach-loop must be over array, vector, row_vector or matrix."},
		{"data {\n  int<lower=0.5> n;\n}\n", "Bounds of integer variable must be of type int."},
		{"data {\n  vector<lower={1, 2}>[2] v;\n}\n", "The lower bound of 'v' must be an int, a real or of the variable's type vector."},
		{"functions {\n  real f(real x) { return x; }\n  real f(real y) { return y; }\n}\n", "Function 'f' has already been defined with these argument types."},
		{"transformed data {\n  real x = {1, 2} ? 1 : 2;\n}\n", "Condition in ternary expression must be of type int or real."},
		{"transformed data {\n  matrix[2, 2] m = [[1, 2], 3];\n}\n", "Row_vector expression must have all int and real entries or all row_vector entries"},
		{"transformed data {\n  array[2] real a = {1, [1]};\n}\n", "Array expression must have entries of consistent type"},
		{"transformed data {\n  real x = 3000000000;\n}\n", "Integer literal 3000000000 is too large"},
		{"transformed data {\n  print();\n}\n", "print requires at least one argument."},
		{"functions {\n  real f(real x) { return x; }\n}\ntransformed data {\n  real x = size(1 ? f : f);\n}\n", "A conditional expression cannot choose between functions"},
		{"functions {\n  real f(real x) { return x; }\n}\ntransformed data {\n  int n = size(f);\n}\n", "Ill-typed arguments supplied to function 'size':\n(function)"},
	} {
		_, err := checkSrc(c.src)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("want an error containing %q, got %v\nin\n%s", c.msg, err, c.src)
		}
	}
}

// TestOldSyntax checks the pre-2.33 forms: they parse to the same tree as the current syntax,
// with a deprecation warning each.
func TestOldSyntax(t *testing.T) {
	src := "functions {\n  real[] f(real[] x, int[,] k) { return x; }\n}\ndata {\n  int N; # size\n  int<lower=0> y[N, 2];\n}\n"
	p, err := Parse("old.stan", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := p.Functions[0]
	if f.Ret != (Type{Base: Real, Array: 1}) || f.Params[0].Type != (Type{Base: Real, Array: 1}) || f.Params[1].Type != (Type{Base: Int, Array: 2}) {
		t.Errorf("function types: %v %v %v", f.Ret, f.Params[0].Type, f.Params[1].Type)
	}
	y := p.Data.Stmts[1].(*VarDecl)
	if y.Type != (Type{Base: Int, Array: 2}) || len(y.Dims) != 2 || !y.OldSyntax || y.Cons.Kind != ConsBounds {
		t.Errorf("y: %+v", y)
	}
	var msgs []string
	for _, w := range p.Warnings {
		msgs = append(msgs, w.Msg)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"use array[] real instead", "use array[,] int instead", "Comments beginning with # are deprecated", "write array[N, 2] int<lower=0> y instead"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
	if err := p.Check(fakeTable()); err != nil {
		t.Error(err)
	}
}

// TestSuggestionsAndWarnings checks the "Did you mean" hint and the Jacobian warning on ~.
func TestSuggestionsAndWarnings(t *testing.T) {
	_, err := checkSrc("parameters {\n  real sigma;\n}\nmodel {\n  target += sigmaa;\n}\n")
	if err == nil || !strings.Contains(err.Error(), "Identifier 'sigmaa' not in scope. Did you mean 'sigma'?") {
		t.Errorf("got %v", err)
	}
	_, err = checkSrc("model {\n  target += nromal_lpdf(1 | 0, 1);\n}\n")
	if err == nil || !strings.Contains(err.Error(), "Did you mean 'normal_lpdf'?") {
		t.Errorf("got %v", err)
	}
	p, err := checkSrc("transformed data {\n  real a = normal_log(1, 0, 1);\n  real b = normal_cdf_log(1, 0, 1);\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 2 || !strings.Contains(p.Warnings[0].Msg, "use normal_lpdf") || !strings.Contains(p.Warnings[1].Msg, "use normal_lcdf") {
		t.Errorf("old density names: warnings %v", p.Warnings)
	}
	p, err = checkSrc("data {\n  vector[2] y;\n}\nparameters {\n  vector[2] z;\n}\nmodel {\n  exp(z) ~ normal(0, 1);\n  z ~ normal(0, 1);\n  exp(y) ~ normal(z, 1);\n  (z - 1) ~ normal(0, 1);\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	var jac []int
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "Jacobian") {
			jac = append(jac, w.Pos.Line)
		}
	}
	if len(jac) != 1 || jac[0] != 8 {
		t.Errorf("Jacobian warnings on lines %v, want [8]", jac)
	}
}
