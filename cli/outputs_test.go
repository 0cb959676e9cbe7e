package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unwritableDir returns an existing directory in which files cannot be created, also for root
// (who ignores directory permissions): /proc/self as root, a 0555 directory otherwise.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		if st, err := os.Stat("/proc/self"); err != nil || !st.IsDir() {
			t.Skip("running as root without /proc: no unwritable directory to test with")
		}
		return "/proc/self"
	}
	d := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(d, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	return d
}

// victim is a file outside the output directory that a symlink inside it points at.
func victim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkVictim(t *testing.T, p string) {
	t.Helper()
	if b, _ := os.ReadFile(p); string(b) != "precious\n" {
		t.Errorf("a symlink's target was overwritten: %.60q", b)
	}
}

// An unwritable --out fails before the work starts (no progress line), naming --out, for fit,
// sample, draw and bench.
func TestUnwritableOutFailsBeforeTheWork(t *testing.T) {
	ro := unwritableDir(t)
	saved := filepath.Join(t.TempDir(), "fit")
	if _, err := run(t, quick(saved)...); err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"fit", "--iter", "300", "--out", ro},
		{"sample", "--warmup", "50", "--draws", "50", "--out", ro},
		{"draw", filepath.Join(saved, "fit.json"), "--out", filepath.Join(ro, "d.csv")},
		{"bench", "ad", "--rounds", "1", "--out", filepath.Join(ro, "ad.md")},
	} {
		out, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "--out "+ro) {
			t.Errorf("vigo %s: error %v, want one naming --out %s", strings.Join(args, " "), err, ro)
		}
		if strings.Contains(out, "iter ") || strings.Contains(out, "chain 1:") {
			t.Errorf("vigo %s: the work ran before the check:\n%s", strings.Join(args, " "), out)
		}
	}
}

// A cancelled rerun keeps the earlier (converged) fit.json and writes its partial result to
// --out/cancelled, and says so.
func TestFitCancelledRerunKeepsTheEarlierFit(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, "fit", "-q", "--out", dir); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := mustRoot(t)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"fit", "-q", "--seed", "9", "--out", dir})
	err = root.ExecuteContext(ctx)
	sub := filepath.Join(dir, cancelledSubdir)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "written to "+sub) || !strings.Contains(err.Error(), "earlier fit in "+dir+" is kept") {
		t.Fatalf("error %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "fit.json")); !bytes.Equal(after, before) {
		t.Error("the cancelled rerun replaced the earlier fit.json")
	}
	if _, err := os.Stat(filepath.Join(sub, "fit.json")); err != nil {
		t.Errorf("the cancelled run's partial fit: %v", err)
	}
}

// Symlinks inside --out are replaced, not followed, by fit, sample and draw; bench's writeFile too.
func TestOutputsDoNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	v := victim(t)
	for _, n := range []string{"draws.csv", "fit.json", "eight_schools-1.csv", "draw.csv", "table.md"} {
		if err := os.Symlink(v, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := run(t, quick(dir)...); err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	checkVictim(t, v)
	// fit.json is a fit now: draw from it.
	if _, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "10", "--out", filepath.Join(dir, "draw.csv")); err != nil {
		t.Fatal(err)
	}
	checkVictim(t, v)
	if _, err := run(t, "sample", "--chains", "1", "--warmup", "50", "--draws", "20", "--quiet", "--out", dir); err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	checkVictim(t, v)
	if err := writeFile(filepath.Join(dir, "table.md"), func(w io.Writer) error { _, err := io.WriteString(w, "| a |\n"); return err }); err != nil {
		t.Fatal(err)
	}
	checkVictim(t, v)
}

// A rerun with fewer chains removes the earlier run's extra chain files and says so.
func TestSampleRemovesStaleChainFiles(t *testing.T) {
	dir := t.TempDir()
	args := func(chains string) []string {
		return []string{"sample", "--chains", chains, "--warmup", "50", "--draws", "20", "--quiet", "--out", dir}
	}
	if _, err := run(t, args("3")...); err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "eight_schools-7b.csv") // not a chain file: kept
	os.WriteFile(other, nil, 0o644)
	out, err := run(t, args("2")...)
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "eight_schools-3.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("eight_schools-3.csv of the 3-chain run is still there (%v)", err)
	}
	if !strings.Contains(out, "removed eight_schools-3.csv") {
		t.Errorf("no word of the removal:\n%s", out)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a chain file was removed: %v", err)
	}
}

// A cancelled sample rerun keeps the earlier chain files and writes its draws to --out/cancelled.
func TestSampleCancelledRerunKeepsTheEarlierChains(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, "sample", "--chains", "2", "--warmup", "50", "--draws", "20", "--quiet", "--out", dir); err != nil && !errors.Is(err, errNotConverged) {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "eight_schools-1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := mustRoot(t)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"sample", "--chains", "2", "--seed", "9", "--quiet", "--out", dir})
	if err := root.ExecuteContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v\n%s", err, out.String())
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "eight_schools-1.csv")); !bytes.Equal(after, before) {
		t.Error("the cancelled rerun replaced the earlier chain file")
	}
	sub := filepath.Join(dir, cancelledSubdir)
	if _, err := os.Stat(filepath.Join(sub, "eight_schools-1.csv")); err != nil || !strings.Contains(out.String(), "earlier run's chain files in "+dir+" are kept") {
		t.Errorf("%v\n%s", err, out.String())
	}
}
