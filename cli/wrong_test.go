package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitNonFiniteFlagsFailUpFront: --tol and --lr of Inf or NaN are rejected before any work
// and the error names the flag (they used to run the whole fit and fail at the end with
// "json: unsupported value: +Inf", naming no flag), for one family and for --family auto.
func TestFitNonFiniteFlagsFailUpFront(t *testing.T) {
	for _, fam := range []string{"fullrank", "auto"} {
		for _, c := range [][2]string{{"--tol", "Inf"}, {"--tol", "NaN"}, {"--lr", "Inf"}, {"--lr", "NaN"}, {"--tol", "-Inf"}} {
			dir := t.TempDir()
			_, err := run(t, quick(dir, "--family", fam, c[0], c[1])...)
			if err == nil || !strings.Contains(err.Error(), c[0]) {
				t.Errorf("--family %s %s %s: error %v, want one naming %s", fam, c[0], c[1], err, c[0])
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("--family %s %s %s: wrote %d files before failing", fam, c[0], c[1], len(ents))
			}
		}
	}
}

// TestSummaryWithoutHeaderFails: vigo summary on draws without a header line used to take the
// first draw for the column names and summarise the rest; it must fail naming file and line.
func TestSummaryWithoutHeaderFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "noheader.csv")
	if err := os.WriteFile(p, []byte("-7.1,0.25,1.5\n-7.3,0.3,1.2\n-6.9,0.2,1.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "summary", p)
	if err == nil || !strings.Contains(err.Error(), p+": line 1") || !strings.Contains(err.Error(), "no header line") {
		t.Errorf("error %v, want one naming %s, line 1 and the missing header; output:\n%s", err, p, out)
	}
}

// TestFitSingleDrawReferenceFailsUpFront: a reference of one draw has no sd, and every
// distance to it was NaN, printed as a number after the whole fit. It now fails before the
// fit, naming the file and its draw count.
func TestFitSingleDrawReferenceFailsUpFront(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(ref, []byte(`[{"mu": [1.5], "tau": [2.5]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err := run(t, quick(dir, "--reference", ref)...)
	if err == nil || !strings.Contains(err.Error(), "--reference: "+ref) || !strings.Contains(err.Error(), "1 draw(s)") {
		t.Errorf("error %v, want one naming --reference, %s and its 1 draw", err, ref)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("wrote %d files before failing", len(ents))
	}
}

// TestSummaryEscapesControlCharacters: column names and comment lines are the file author's
// text; vigo summary printed the names raw, so an ESC sequence in a header drove the reader's
// terminal. Every format must show them escaped, and the same names read cleanly otherwise.
func TestSummaryEscapesControlCharacters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "evil.csv")
	csv := "# \x1b]0;owned\x07 method = sample\n" +
		"lp__,\x1b[2Jtheta,b\u009b31m,\u202eabc\n" +
		"-1,0.1,1,5\n-2,0.3,2,6\n-3,0.2,4,7\n-1.5,0.5,3,8\n"
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "csv", "json"} {
		out, err := run(t, "summary", "--format", format, p)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if i := strings.IndexFunc(out, func(r rune) bool {
			return r == 0x1b || r == 0x07 || r >= 0x80 && r <= 0x9f || r == 0x202e
		}); i >= 0 {
			t.Errorf("%s: raw control character %q at byte %d of:\n%q", format, out[i:i+1], i, out)
		}
		for _, name := range []string{`\x1b[2Jtheta`, `b\u009b31m`, `\u202eabc`} {
			if format == "json" { // JSON doubles the escape's backslash
				name = strings.ReplaceAll(name, `\`, `\\`)
			}
			if !strings.Contains(out, name) {
				t.Errorf("%s: name %s not shown escaped:\n%s", format, name, out)
			}
		}
	}
}
