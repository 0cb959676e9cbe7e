package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchAPOVIBadFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "apovi.md")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--parts", "e9"}, `part="e9"`},
		{[]string{"--parts", ","}, "--parts: no parts"},
		{[]string{"--e3-hidden", "20,0"}, "--e3-hidden"},
		{[]string{"--e3-inference-hidden", "x"}, "--e3-inference-hidden"},
		{[]string{"--e1-reps", "-1"}, "e1-reps"},
		{[]string{"--e3-stop", "never"}, `E3Stop="never"`},
		{[]string{"--summary"}, "apovi_e1.md"}, // the temporary directory has no part files
	} {
		_, err := run(t, append([]string{"bench", "apovi", "--out", out}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := run(t, "bench", "apovi", "--summary", "--out", "-"); err == nil || !strings.Contains(err.Error(), "--summary") {
		t.Errorf("--summary to stdout: %v, want an error naming --summary", err)
	}
}
