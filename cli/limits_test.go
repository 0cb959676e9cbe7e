package cli

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Every size flag of vigo fit and vigo draw is bounded with an error naming the flag and the
// limit, before anything is fitted or allocated. Before, vigo fit --draws 2^62
// --psis-resample overflowed 4·draws into the 1000-draw minimum, and vigo draw --draws 1e12
// tried to allocate the draws.
func TestSizeFlagsAreBounded(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--draws", "100000000"}, "--draws: 100000000, want at most 16777216"},
		{[]string{"--draws", "4611686018427387904", "--psis-resample"}, "--draws: 4611686018427387904, want at most 4194304"},
		{[]string{"--samples", "100000"}, "--samples: fit: Recipe: objective.samples = 100000, want 1 to 65536"},
		{[]string{"--estimator", "iwelbo", "--k", "1000000"}, "--k: fit: Recipe: objective.k = 1000000"},
		{[]string{"--iter", "1000000000000"}, "--iter: fit: Recipe: max_iter = 1000000000000"},
		{[]string{"--family", "maf", "--hidden", "16384,16384,16384,16384"}, "--hidden (--family maf)"},
	} {
		_, err := run(t, quick(filepath.Join(dir, "out"), c.args...)...)
		if err == nil || errors.Is(err, errNotConverged) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := run(t, quick(dir)...); !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	for _, c := range []struct {
		draws, want string
	}{
		{"1000000000000", "--draws: 1000000000000, want at most 268435456 for 1 values per draw"},
		{"100000000", "--draws: 100000000, want at most "},
	} {
		_, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", c.draws)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("draw --draws %s: error %v, want %q", c.draws, err, c.want)
		}
	}
}
