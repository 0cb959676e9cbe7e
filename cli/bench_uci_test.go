package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipWithoutUCI skips when the command could not find ../shared/data/uci by itself.
func skipWithoutUCI(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "not found") {
		t.Skipf("../shared/data/uci not found beside the repository: %v", err)
	}
}

// TestBenchUCIFlags: the flags reach bench.RunUCI (one method, one split, --epochs, --batch)
// and the table goes to --out.
func TestBenchUCIFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "uci.md")
	log, err := run(t, "bench", "uci", "--datasets", "yacht", "--splits", "1", "--methods", "dvi",
		"--epochs", "3", "--batch", "64", "--samples", "5", "--out", file)
	skipWithoutUCI(t, err)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- command: `vigo ", "minibatch 64, epochs: 3;", "| data set | splits | dvi | PBP |", "| yacht | 1 | ", "| yacht | 277 | 3 |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("table lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(log, "yacht split 0 dvi: test LL") || !strings.Contains(log, "wrote "+file) {
		t.Errorf("progress lacks the fit or the file:\n%s", log)
	}
	if _, err := run(t, "bench", "uci", "--methods", "nosuch", "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown method: error %v, want one naming it", err)
	}
}

// TestBenchUCISpeedFlags: --speed with --methods, --speed-batch and --speed-epochs.
func TestBenchUCISpeedFlags(t *testing.T) {
	out, err := run(t, "bench", "uci", "--speed", "--datasets", "yacht", "--methods", "mfvi", "--speed-epochs", "2", "--speed-batch", "64")
	skipWithoutUCI(t, err)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "| yacht | 277 | 50 | mfvi | 64 | ") || strings.Contains(out, "| vbp |") || !strings.Contains(out, "median of epochs 2..2") {
		t.Errorf("want one mfvi row at batch 64 over 2 epochs:\n%s", out)
	}
	if _, err := run(t, "bench", "uci", "--speed", "--data", t.TempDir(), "--speed-batch", "x"); err == nil || !strings.Contains(err.Error(), "--speed-batch") {
		t.Errorf("bad --speed-batch: error %v", err)
	}
}

// TestBenchUCISemiFlags: --linear, --epochs, --degree and --svg reach bench.RunUCISemi.
func TestBenchUCISemiFlags(t *testing.T) {
	dir := t.TempDir()
	svg, md := filepath.Join(dir, "semi.svg"), filepath.Join(dir, "semi.md")
	log, err := run(t, "bench", "uci-semi", "--epochs", "3", "--linear", "5", "--degree", "4", "--svg", svg, "--out", md)
	skipWithoutUCI(t, err)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Gaussian (affine flow) | 5 | ", "| Bernstein flow, M = 4 | 5 | ", "3 epochs", "`semi.svg`"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "| multivariate") {
		t.Errorf("one --linear column fitted the multivariate flow:\n%s", b)
	}
	if s, err := os.ReadFile(svg); err != nil || !strings.HasSuffix(string(s), "</svg>\n") {
		t.Errorf("svg not written or incomplete (err %v)", err)
	}
	if _, err := run(t, "bench", "uci-semi", "--linear", "13"); err == nil || !strings.Contains(err.Error(), "13") {
		t.Errorf("the target column as --linear: error %v, want one naming it", err)
	}
}
