package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/vigo-bayes/vigo/bench"
)

// TestTrustFitFlagsDefaults keeps trustFitFlags in step with vigo fit's flag defaults: every
// flag of newFitCmd whose default is not its type's zero must be one trustFitFlags sets, to
// the same value. A new flag with a non-zero default fails here until the trust benchmark
// sets it too (so the benchmark keeps measuring what `vigo fit` does).
func TestTrustFitFlagsDefaults(t *testing.T) {
	f := trustFitFlags("meanfield", 1)
	set := map[string]string{ // flag → trustFitFlags's value, as pflag prints a default
		"family": f.family, "seed": "1", "draws": "1000", "out": f.out,
	}
	if f.draws != 1000 || f.warm || f.seed != 1 {
		t.Fatalf("trustFitFlags = %+v", f)
	}
	zero := map[string]bool{"": true, "0": true, "false": true, "[]": true, "0s": true}
	newFitCmd(nil).Flags().VisitAll(func(fl *pflag.Flag) {
		want, ok := set[fl.Name]
		switch {
		case ok && fl.DefValue != want:
			t.Errorf("vigo fit --%s defaults to %q, trustFitFlags has %q", fl.Name, fl.DefValue, want)
		case !ok && !zero[fl.DefValue]:
			t.Errorf("vigo fit --%s defaults to %q, which trustFitFlags does not set", fl.Name, fl.DefValue)
		}
	})
}

// TestBenchTrustSmoke runs vigo bench trust on one synthetic posterior with one seed (both
// methods, ≈ 1 s) and reads back its JSON and markdown.
func TestBenchTrustSmoke(t *testing.T) {
	dir := t.TempDir()
	js, md := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.md")
	if out, err := run(t, "bench", "trust", "--posteriors", "gmix-d2", "--seeds", "1", "--label", "before", "--json", js, "--out", md); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	set, err := bench.LoadTrustSet(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Runs) != 2 || set.Label != "before" || set.Runs[0].Method != "default" || set.Runs[1].Method != "auto" {
		t.Fatalf("runs %+v", set.Runs)
	}
	for _, r := range set.Runs {
		if r.Err != "" || r.Verdict == "" || r.GradEvals == 0 || !(float64(r.W1SD) >= 0) {
			t.Errorf("%s: %+v", r.Method, r)
		}
	}
	out, err := run(t, "bench", "trust", "--posteriors", "gmix-d2", "--seeds", "1", "--label", "after", "--compare", js, "--out", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"| before | default | 1 |", "| after | default | 1 |", "| gmix-d2 | 2 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "- command: `vigo") {
		t.Errorf("markdown file: %v, no header", err)
	}
	if _, err := run(t, "bench", "trust", "--posteriors", "nosuch"); err == nil || !strings.Contains(err.Error(), `unknown posterior "nosuch"`) {
		t.Errorf("unknown posterior: error %v", err)
	}
}
