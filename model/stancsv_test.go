package model

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

// TestReadStanCSVCmdStan reads a file in CmdStan 2.36's layout (save_warmup on, comments
// before the header, between warmup and draws, and after the draws).
func TestReadStanCSVCmdStan(t *testing.T) {
	s, err := LoadStanCSV("testdata/cmdstan_bernoulli.csv")
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__", "theta", "z[1]", "z[2]"}
	if !slices.Equal(s.Names, wantNames) {
		t.Errorf("names %v", s.Names)
	}
	if got := len(s.Warmup) / len(s.Names); got != 3 {
		t.Errorf("%d warmup rows, want 3", got)
	}
	if s.NumDraws() != 4 {
		t.Errorf("%d draws, want 4", s.NumDraws())
	}
	if len(s.Adaptation) != 4 || s.Adaptation[1] != "Step size = 0.893542" {
		t.Errorf("adaptation %q", s.Adaptation)
	}
	if len(s.Trailer) != 5 || !strings.Contains(s.Trailer[1], "Elapsed Time") {
		t.Errorf("trailer %q", s.Trailer)
	}
	for key, want := range map[string]string{"seed": "1234", "num_warmup": "3", "engaged": "true", "method": "sample", "metric": "diag_e", "stancflags": ""} {
		if v, ok := s.ConfigValue(key); !ok || v != want {
			t.Errorf("config %s = %q, %v; want %q", key, v, ok, want)
		}
	}
	if !sameFloats(s.Column("z.2"), []float64{2, math.Inf(1), math.Inf(-1), 2}) {
		t.Errorf("z.2 = %v", s.Column("z.2"))
	}
	if c := s.Column("theta"); !sameFloats(c, []float64{0.228612, 0.25, 0.35, 0.3}) {
		t.Errorf("theta = %v", c)
	}
	if !math.IsNaN(s.Column("z[1]")[2]) || s.Column("nope") != nil {
		t.Error("Column: NaN or missing column")
	}
}

// TestStanCSVRoundTrip writes and reads back a file: every field, every bit, and the bytes of
// a second write equal the first.
func TestStanCSVRoundTrip(t *testing.T) {
	s := &StanCSV{
		Config:     []string{"method = sample", "  sample", "    num_warmup = 2", "    save_warmup = 1"},
		Names:      []string{"lp__", "mu", "L[2,1]", "theta[10]"},
		Warmup:     []float64{-1, 0.1, 1e-300, 5, -2, 0.2, math.Pi, 6},
		Adaptation: []string{"Adaptation terminated", "Step size = 0.5", "Diagonal elements of inverse mass matrix:", "1, 2, 3"},
		Draws:      []float64{-3.25, 1.0 / 3, math.NaN(), math.Inf(1), -4, -1e-17, 2.5e300, math.Inf(-1)},
		Trailer:    []string{"", " Elapsed Time: 0.1 seconds (Warm-up)"},
	}
	var b bytes.Buffer
	if err := WriteStanCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nlp__,mu,L.2.1,theta.10\n") {
		t.Errorf("header not dotted:\n%s", b.String())
	}
	got, err := ReadStanCSV("roundtrip", bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Config, s.Config) || !slices.Equal(got.Names, s.Names) || !slices.Equal(got.Adaptation, s.Adaptation) ||
		!slices.Equal(got.Trailer, s.Trailer) || !sameFloats(got.Warmup, s.Warmup) || !sameFloats(got.Draws, s.Draws) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
	}
	var b2 bytes.Buffer
	if err := WriteStanCSV(&b2, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Error("second write differs from the first")
	}
}

// TestReadStanCSVWarmupByConfig splits saved warmup by the config when adaptation was off.
func TestReadStanCSVWarmupByConfig(t *testing.T) {
	in := "# num_warmup = 3\n# save_warmup = 1\n# thin = 2\na,b\n1,2\n3,4\n5,6\n7,8\n"
	s, err := ReadStanCSV("x", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	// ⌈3/2⌉ = 2 warmup rows.
	if !slices.Equal(s.Warmup, []float64{1, 2, 3, 4}) || !slices.Equal(s.Draws, []float64{5, 6, 7, 8}) {
		t.Errorf("warmup %v draws %v", s.Warmup, s.Draws)
	}
}

func TestReadStanCSVErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"# only comments\n", "no header"},
		{"a,b\n1,2\n3\n", "line 3: 1 fields, the header has 2"},
		{"a,b\n1,x\n", `line 2: column b: "x" is not a number`},
		{"a,,b\n", "column 2 of the header has no name"},
	} {
		_, err := ReadStanCSV("f.csv", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	if err := WriteStanCSV(&bytes.Buffer{}, &StanCSV{Names: []string{"a", "b"}, Draws: []float64{1}}); err == nil {
		t.Error("WriteStanCSV: ragged draws accepted")
	}
}

func TestStanCSVNames(t *testing.T) {
	for dotted, bracket := range map[string]string{"theta.1": "theta[1]", "L.2.10": "L[2,10]", "lp__": "lp__", "a.b": "a.b", "x.": "x.", "y.1.z": "y.1.z"} {
		if got := BracketName(dotted); got != bracket {
			t.Errorf("BracketName(%q) = %q, want %q", dotted, got, bracket)
		}
		if bracket != dotted {
			if got := DottedName(bracket); got != dotted {
				t.Errorf("DottedName(%q) = %q, want %q", bracket, got, dotted)
			}
		}
	}
}

func FuzzReadStanCSV(f *testing.F) {
	f.Add("# x\na,b.1\n1,2\nnan,-inf\n")
	f.Add("a\n\n1\n")
	f.Add(",\n")
	f.Add("# save_warmup = 1\n# num_warmup = 2\nlp__,x\n1,2\n3,4\n# Adaptation terminated\n5,6\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ReadStanCSV("fuzz", strings.NewReader(s))
		if err != nil {
			return
		}
		if n := len(c.Names); n > 0 && (len(c.Draws)%n != 0 || len(c.Warmup)%n != 0) {
			t.Fatalf("%d draws and %d warmup values for %d names", len(c.Draws), len(c.Warmup), n)
		}
	})
}

// TestReadStanCSVWithoutHeader: a file whose first non-comment line is a draw has no header;
// it used to be read with that draw's numbers as the column names (and one draw fewer). The
// error names the file and the line. Names that merely spell nan or inf are still names.
func TestReadStanCSVWithoutHeader(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"draws.csv", "# method = sample\n-7.1,0.9,0.25\n-7.3,0.8,0.3\n", "draws.csv: line 2: the header's column 1 is the number \"-7.1\""},
		{"nan.csv", "nan,inf,Infinity\n1,2,3\n", "nan.csv: line 1: the header line is all numbers"},
		{"mixed.csv", "lp__,1.5,theta\n1,2,3\n", "mixed.csv: line 1: the header's column 2 is the number \"1.5\""},
		{"dot.csv", "lp__,.5\n1,2\n", "column 2 is the number \".5\""},
	} {
		_, err := ReadStanCSV(c.name, strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "no header line") {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	s, err := ReadStanCSV("names.csv", strings.NewReader("lp__,nan,inf,theta.1\n1,2,3,4\n"))
	if err != nil || !slices.Equal(s.Names, []string{"lp__", "nan", "inf", "theta[1]"}) || s.NumDraws() != 1 {
		t.Fatalf("names spelling nan and inf: %v, %v", s, err)
	}
}

// TestReadStanCSVErrorEscapesColumnName: a column name that is not a Stan name is refused,
// naming it; a terminal escape in it is shown escaped, not sent to the terminal. Names the
// writer could not write back (found by FuzzStanCSVSamplerColumns: " #0", "[.0") are refused
// too, and Stan's own spellings are accepted.
func TestReadStanCSVErrorEscapesColumnName(t *testing.T) {
	_, err := ReadStanCSV("evil.csv", strings.NewReader("lp__,\x1b[2Jx\n1,2\n"))
	if err == nil || strings.ContainsRune(err.Error(), 0x1b) || !strings.Contains(err.Error(), `column 2 is "\x1b[2Jx", not a Stan name`) {
		t.Errorf("error %q, want the column name escaped", err)
	}
	for _, bad := range []string{" #0", "[.0", "theta.", "theta[1", "theta.1a", "1x_", "_x", "a-b"} {
		if _, err := ReadStanCSV("bad.csv", strings.NewReader("lp__,"+bad+"\n1,2\n")); err == nil || !strings.Contains(err.Error(), "not a Stan name") {
			t.Errorf("header name %q: error %v", bad, err)
		}
	}
	for _, ok := range []string{"theta", "theta.1", "L.2.10", "theta[1]", "accept_stat__", "x_1"} {
		if _, err := ReadStanCSV("ok.csv", strings.NewReader("lp__,"+ok+"\n1,2\n")); err != nil {
			t.Errorf("header name %q: %v", ok, err)
		}
	}
}
