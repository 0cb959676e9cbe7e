package cli

import (
	"os"
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
