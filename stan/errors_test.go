package stan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeTable is a small built-in table for the checker's tests, independent of the library's
// signatures (their Fn is nil: these tests never run a program).
func fakeTable() *Table {
	r := Arg{Class: Reals}
	i := Arg{Class: Ints}
	ex := func(t Type) Arg { return Arg{Class: Exact, Type: t} }
	tb := &Table{byName: map[string][]Sig{}}
	add := func(s Sig) { tb.byName[s.Name] = append(tb.byName[s.Name], s) }
	for _, op := range []string{"add", "subtract", "multiply", "divide", "elt_multiply", "elt_divide"} {
		add(Sig{Name: op, Args: []Arg{ex(TInt), ex(TInt)}, Ret: TInt})
		add(Sig{Name: op, Args: []Arg{ex(TReal), ex(TReal)}, Ret: TReal})
		add(Sig{Name: op, Args: []Arg{ex(TVector), ex(TVector)}, Ret: TVector})
		add(Sig{Name: op, Args: []Arg{ex(TVector), ex(TReal)}, Ret: TVector})
		add(Sig{Name: op, Args: []Arg{ex(TReal), ex(TVector)}, Ret: TVector})
	}
	add(Sig{Name: "multiply", Args: []Arg{ex(TMatrix), ex(TVector)}, Ret: TVector})
	add(Sig{Name: "modulus", Args: []Arg{ex(TInt), ex(TInt)}, Ret: TInt})
	add(Sig{Name: "minus", Args: []Arg{ex(TInt)}, Ret: TInt})
	add(Sig{Name: "minus", Args: []Arg{ex(TReal)}, Ret: TReal})
	add(Sig{Name: "minus", Args: []Arg{ex(TVector)}, Ret: TVector})
	add(Sig{Name: "transpose", Args: []Arg{ex(TVector)}, Ret: TRowVector})
	add(Sig{Name: "transpose", Args: []Arg{ex(TMatrix)}, Ret: TMatrix})
	add(Sig{Name: "pow", Args: []Arg{ex(TReal), ex(TReal)}, Ret: TReal})
	for _, op := range []string{"logical_lt", "logical_gt", "logical_lte", "logical_gte", "logical_eq", "logical_neq", "logical_and", "logical_or"} {
		add(Sig{Name: op, Args: []Arg{ex(TInt), ex(TInt)}, Ret: TInt})
		add(Sig{Name: op, Args: []Arg{ex(TReal), ex(TReal)}, Ret: TInt})
	}
	add(Sig{Name: "logical_negation", Args: []Arg{ex(TInt)}, Ret: TInt})
	for _, n := range []string{"normal_lpdf", "normal_lupdf", "normal_lcdf", "normal_lccdf"} {
		add(Sig{Name: n, Args: []Arg{r, r, r}, Ret: TReal})
	}
	add(Sig{Name: "poisson_lpmf", Args: []Arg{i, r}, Ret: TReal})
	add(Sig{Name: "poisson_lupmf", Args: []Arg{i, r}, Ret: TReal})
	add(Sig{Name: "normal_rng", Args: []Arg{ex(TReal), ex(TReal)}, Ret: TReal})
	add(Sig{Name: "exp", Args: []Arg{r}, RetOf: func(a []Type) Type {
		if a[0].Base == Int {
			return Type{Base: Real, Array: a[0].Array}
		}
		return a[0]
	}})
	add(Sig{Name: "sum", Args: []Arg{ex(TVector)}, Ret: TReal})
	add(Sig{Name: "sum", Args: []Arg{ex(Type{Base: Int, Array: 1})}, Ret: TInt})
	add(Sig{Name: "rep_vector", Args: []Arg{ex(TReal), ex(TInt)}, Ret: TVector})
	add(Sig{Name: "size", Args: []Arg{{Class: Any}}, Ret: TInt})
	return tb
}

// checkSrc parses and checks src against fakeTable.
func checkSrc(src string) (*Program, error) {
	p, err := Parse("m.stan", []byte(src))
	if err != nil {
		return p, err
	}
	return p, p.Check(fakeTable())
}

// TestErrorMessages checks the position, wording, source line and caret of a dozen typical
// mistakes.
func TestErrorMessages(t *testing.T) {
	cases := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"missing semicolon", "data {\n  int N\n}\n", 2, 8,
			`Expected ";" after variable declaration but found "}".`},
		{"missing semicolon after ~", "parameters {\n  real mu;\n}\nmodel {\n  mu ~ normal(0, 1)\n  target += mu;\n}\n", 5, 20,
			`Expected ";" after "~" statement but found "target".`},
		{"not in scope", "parameters {\n  real mu;\n}\nmodel {\n  mu ~ normal(0, sigmaa);\n}\n", 5, 18,
			"Identifier 'sigmaa' not in scope."},
		{"ill-typed call", "parameters {\n  real mu;\n}\nmodel {\n  matrix[2, 2] S;\n  target += normal_lpdf(mu | 0, S);\n}\n", 6, 13,
			"Ill-typed arguments supplied to function 'normal_lpdf':\n(real, int, matrix)"},
		{"assign to data", "data {\n  real y;\n}\nmodel {\n  y = 1;\n}\n", 5, 3,
			"Cannot assign to global variable 'y' declared in previous blocks."},
		{"assign type", "transformed data {\n  real x;\n  vector[3] v;\n  x = v;\n}\n", 4, 3,
			"Ill-typed arguments supplied to assignment operator =: lhs has type real and rhs has type vector."},
		{"rng in model", "parameters {\n  real mu;\n}\nmodel {\n  real z = normal_rng(0, 1);\n}\n", 5, 12,
			"Random number generators are only allowed in the transformed data block, the generated quantities block or user-defined functions with names ending in _rng."},
		{"target in gq", "generated quantities {\n  target += 1;\n}\n", 2, 3,
			"Target can only be accessed in the model block or in definitions of functions with the suffix _lp."},
		{"int parameter", "parameters {\n  int k;\n}\n", 2, 7,
			"(Transformed) Parameters cannot be integers (variable 'k')."},
		{"real size", "data {\n  vector[2.5] v;\n}\n", 2, 10,
			"Size declarations must be of type int. Instead found type real."},
		{"redeclared", "data {\n  int N;\n  real N;\n}\n", 3, 8,
			"Identifier 'N' is already in use."},
		{"unterminated comment", "data {\n  int N; /* no end\n}\n", 2, 10,
			"Comment not terminated."},
		{"block order", "model {\n}\nparameters {\n  real mu;\n}\n", 3, 1,
			`Block "parameters" must come after the "model" block`},
		{"duplicate block", "model {\n}\nmodel {\n}\n", 3, 1,
			"The model block appears twice; each block may appear at most once."},
		{"real index", "data {\n  vector[3] v;\n}\ntransformed data {\n  real x = v[1.5];\n}\n", 5, 14,
			"Index must be of type int or array[] int or must be a range. Instead found type real."},
		{"break outside loop", "transformed data {\n  break;\n}\n", 2, 3,
			"Break and continue statements are only allowed in the body of a for-loop or while-loop."},
		{"missing return", "functions {\n  real f(real x) {\n    if (x > 0) return x;\n  }\n}\n", 2, 3,
			"Function bodies must contain a return statement of correct type in every branch"},
		{"lupdf outside model", "parameters {\n  real mu;\n}\ntransformed parameters {\n  real lp = normal_lupdf(mu | 0, 1);\n}\n", 5, 13,
			"Functions with names ending in _lupdf and _lupmf can only be used in the model block"},
		{"bar on non-density", "transformed data {\n  real x = exp(1 | 2);\n}\n", 2, 12,
			"Only functions with names ending in _lpdf, _lupdf, _lpmf, _lupmf, _cdf, _lcdf, _lccdf can make use of conditional notation."},
		{"statement in data", "data {\n  int N;\n  N = 3;\n}\n", 3, 3,
			"Expected a variable declaration in the data block but found \"N\""},
		{"undeclared function", "transformed data {\n  real x = foo(1);\n}\n", 2, 12,
			"A returning function was expected but an undeclared identifier 'foo' was supplied."},
		{"no distribution", "parameters {\n  real mu;\n}\nmodel {\n  mu ~ nomral(0, 1);\n}\n", 5, 3,
			"Ill-typed arguments to '~' statement. No distribution 'nomral' was found. Did you mean 'normal'?"},
		{"bad operator", "parameters {\n  vector[2] a;\n  matrix[2, 2] B;\n}\nmodel {\n  target += sum(a + B);\n}\n", 6, 17,
			"Ill-typed arguments supplied to infix operator +. Available signatures:"},
		{"missing paren", "model {\n  target += (1 + 2;\n}\n", 2, 19,
			`Expected ")" to close the parenthesis but found ";".`},
		{"reserved word", "data {\n  real for;\n}\n", 2, 8,
			"Expected a new identifier but found reserved keyword 'for'."},
		{"include", "#include other.stan\ndata {\n}\n", 1, 1,
			"#include is not supported"},
		{"bad character", "data {\n  int N; @\n}\n", 2, 10,
			"Invalid character found: '@'."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkSrc(c.src)
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("want an Errors, got %v", err)
			}
			e := es[0]
			if e.Pos.Line != c.line || e.Pos.Col != c.col {
				t.Errorf("position %d:%d, want %d:%d (%v)", e.Pos.Line, e.Pos.Col, c.line, c.col, e)
			}
			if !strings.Contains(e.Msg, c.msg) {
				t.Errorf("message %q, want it to contain %q", e.Msg, c.msg)
			}
			text := e.Error()
			prefix := fmt.Sprintf("m.stan:%d:%d: ", c.line, c.col)
			if !strings.HasPrefix(text, prefix) {
				t.Errorf("error text %q does not start with %q", text, prefix)
			}
			lines := strings.Split(text, "\n")
			srcLine := strings.Split(c.src, "\n")[c.line-1]
			gutter := fmt.Sprintf(" %d | ", c.line)
			caret := strings.Repeat(" ", len(gutter)-3) + " | " + strings.Repeat(" ", c.col-1) + "^"
			if len(lines) < 3 || lines[len(lines)-2] != gutter+srcLine || lines[len(lines)-1] != caret {
				t.Errorf("source line and caret:\n%s\nwant:\n%s\n%s", text, gutter+srcLine, caret)
			}
		})
	}
}

// TestSeveralErrors checks that errors in separate statements are all reported, and that a
// syntax error does not hide a later one.
func TestSeveralErrors(t *testing.T) {
	src := "data {\n  int N\n  real x;\n}\nmodel {\n  x ~ normal(0 1);\n  target += y;\n}\n"
	_, err := checkSrc(src)
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	if len(es) < 2 {
		t.Fatalf("want at least 2 syntax errors, got %d: %v", len(es), err)
	}
	if es[0].Pos.Line != 2 || es[1].Pos.Line != 6 {
		t.Errorf("lines %d and %d, want 2 and 6: %v", es[0].Pos.Line, es[1].Pos.Line, err)
	}
	src = "data {\n  real x;\n}\nmodel {\n  target += y;\n  x = 2;\n}\n"
	_, err = checkSrc(src)
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want 2 type errors, got %v", err)
	}
}
