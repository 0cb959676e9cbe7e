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
	} {
		_, err := run(t, append([]string{"bench", "apovi", "--out", out}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
