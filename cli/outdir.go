package cli

import (
	"os"
	"path/filepath"
)

// cancelledSubdir is the subdirectory of --out that a cancelled run writes its partial outputs
// to when --out holds an earlier run's outputs.
const cancelledSubdir = "cancelled"

// outputDir returns the directory a run's outputs go to: out, or — for a cancelled run when out
// already holds an earlier run's outputs (its file marker exists) — out/cancelled, so that
// partial results never replace a finished run's (a converged fit.json survives Ctrl-C on a
// rerun). kept reports the latter; a later cancelled run replaces out/cancelled's files.
func outputDir(out, marker string, cancelled bool) (dir string, kept bool) {
	if !cancelled {
		return out, false
	}
	if _, err := os.Lstat(filepath.Join(out, marker)); err != nil {
		return out, false
	}
	return filepath.Join(out, cancelledSubdir), true
}
