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
// terminal. A header name with control characters is not a Stan name: the error names it
// escaped. Comment lines with them are shown escaped, in every format.
func TestSummaryEscapesControlCharacters(t *testing.T) {
	raw := func(r rune) bool { return r == 0x1b || r == 0x07 || r >= 0x80 && r <= 0x9f || r == 0x202e }
	dir := t.TempDir()
	bad := filepath.Join(dir, "evil_names.csv")
	csv := "lp__,\x1b[2Jtheta,b\u009b31m,\u202eabc\n-1,0.1,1,5\n-2,0.3,2,6\n-3,0.2,4,7\n-1.5,0.5,3,8\n"
	if err := os.WriteFile(bad, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, "summary", bad)
	if err == nil || strings.IndexFunc(err.Error(), raw) >= 0 || !strings.Contains(err.Error(), `\x1b[2Jtheta`) {
		t.Errorf("names with control characters: error %q, want the name escaped", err)
	}
	p := filepath.Join(dir, "evil_comment.csv")
	csv = "# \x1b]0;owned\x07 method = sample\nlp__,theta,b\n-1,0.1,1\n-2,0.3,2\n-3,0.2,4\n-1.5,0.5,3\n"
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "csv", "json"} {
		out, err := run(t, "summary", "--format", format, p)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if i := strings.IndexFunc(out, raw); i >= 0 {
			t.Errorf("%s: raw control character %q at byte %d of:\n%q", format, out[i:i+1], i, out)
		}
		if !strings.Contains(out, "theta") {
			t.Errorf("%s: no theta row:\n%s", format, out)
		}
	}
}
