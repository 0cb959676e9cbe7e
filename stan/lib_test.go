package stan

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestBuiltinsUsedAreRegistered fails if a function that a posteriordb program calls (the list
// made by testdata/builtins_used.py, see its header) has no signature in Builtins.
func TestBuiltinsUsedAreRegistered(t *testing.T) {
	f, err := os.Open("testdata/builtins_used.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb := Builtins()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("bad line %q", sc.Text())
		}
		n++
		if len(tb.Lookup(fields[1])) == 0 {
			t.Errorf("%s (used by %s programs) has no signature", fields[1], fields[0])
		}
	}
	if n < 50 {
		t.Fatalf("only %d names in builtins_used.txt", n)
	}
}

// TestSignaturesWellFormed checks every signature: a name, an Impl, a return type or RetOf.
func TestSignaturesWellFormed(t *testing.T) {
	tb := Builtins()
	for _, name := range tb.Names() {
		for i, s := range tb.Lookup(name) {
			if s.Fn == nil {
				t.Errorf("%s #%d: nil Fn", name, i)
			}
			if s.RetOf == nil && s.Ret == TVoid {
				t.Errorf("%s #%d: no return type", name, i)
			}
			for j, a := range s.Args {
				if a.Class == Exact && a.Type == TVoid {
					t.Errorf("%s #%d: argument %d has no type", name, i, j)
				}
			}
		}
	}
}
