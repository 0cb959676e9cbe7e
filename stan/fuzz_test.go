package stan

import (
	"strings"
	"testing"
)

// FuzzParse runs the lexer, parser and type checker on arbitrary input: they must never
// panic, and every diagnostic must name the file and a position inside it. The seed corpus
// (testdata/fuzz/FuzzParse) holds posteriordb's 120 programs; run it with
//
//	go test ./stan -run '^$' -fuzz FuzzParse -fuzztime 10m
func FuzzParse(f *testing.F) {
	f.Add([]byte("data { int N; } parameters { real mu; } model { mu ~ normal(0, 1); }"))
	tb := Builtins()
	f.Fuzz(func(t *testing.T, src []byte) {
		prog, err := Parse("f.stan", src)
		if prog == nil {
			t.Fatal("Parse returned a nil program")
		}
		cerr := prog.Check(tb)
		lines := strings.Count(string(src), "\n") + 1
		for _, e := range []error{err, cerr} {
			es, _ := e.(Errors)
			if e != nil && len(es) == 0 {
				t.Fatalf("error is not a non-empty Errors: %v", e)
			}
			for _, d := range es {
				if d.Pos.File != "f.stan" || d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1 {
					t.Fatalf("diagnostic at an impossible position %+v: %v", d.Pos, d)
				}
				_ = d.Error()
			}
		}
		for _, w := range prog.Warnings {
			_ = w.Error()
		}
	})
}
