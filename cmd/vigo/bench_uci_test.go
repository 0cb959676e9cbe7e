package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

func uciDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(datadir.SharedOrSkip(t), "data", "uci")
	if _, err := os.Stat(filepath.Join(dir, "yacht", "data.txt")); err != nil {
		t.Skip("../shared/data/uci/yacht not found: the UCI data are needed")
	}
	return dir
}

// TestBenchUCIYacht runs two short fits per method on yacht (a second in all) and checks the
// tables' rows and columns and that the fits learned something (test LL far above the
// untrained network's ≈ −4.5 on yacht).
func TestBenchUCIYacht(t *testing.T) {
	dir := uciDir(t)
	file := filepath.Join(t.TempDir(), "uci.md")
	log, err := run(t, "bench", "uci", "--data", dir, "--datasets", "yacht", "--splits", "2",
		"--methods", "vbp,mfvi,dvi,vardrop", "--min-steps", "300", "--samples", "10", "--out", file)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		"- command: `vigo ", "- commit: ", "load average",
		"| data set | splits | vbp | mfvi | dvi | vardrop | PBP | dDVI | hoDVI | VI |",
		"| yacht | 2 | ", "-1.63 ± 0.02 | -0.47 ± 0.03 | -1.41 ± 0.03 | -3.43 ± 0.16 |",
		"| data set | vbp | mfvi | dvi | vardrop | PBP | VI |", "| 1.02 ± 0.05 | 6.89 ± 0.67 |",
		"| yacht | 277 | 100 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Failed fits") {
		t.Errorf("a fit failed:\n%s", out)
	}
	for _, m := range []string{"vbp", "mfvi", "dvi", "vardrop"} {
		if !strings.Contains(log, "yacht split 1 "+m+": test LL -") {
			t.Errorf("progress lacks %s split 1:\n%s", m, log)
		}
	}
	// Every method's mean test LL: a trained network on yacht is above −3 (PBP −1.63).
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| yacht | 2 | ") {
			cells := strings.Split(line, "|")
			for _, c := range cells[3:7] {
				var m float64
				if _, err := fmt.Sscan(strings.TrimSpace(c), &m); err != nil || m < -3 {
					t.Errorf("test LL cell %q: want a mean above −3", c)
				}
			}
		}
	}
}

func TestBenchUCISpeedWithoutPeer(t *testing.T) {
	dir := uciDir(t)
	out, err := run(t, "bench", "uci", "--speed", "--data", dir, "--datasets", "yacht", "--speed-epochs", "2", "--speed-batch", "64")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"| yacht | 277 | 50 | vbp | 64 | ", "| yacht | 277 | 50 | mfvi | 64 | ", "| — | — | — |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchUCIErrors(t *testing.T) {
	if _, err := run(t, "bench", "uci", "--methods", "nosuch", "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown method: error %v, want one naming it", err)
	}
	if _, err := run(t, "bench", "uci", "--datasets", "nosuch", "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("unknown data set: error %v, want one naming it", err)
	}
	if _, err := run(t, "bench", "uci", "--datasets", "yacht", "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "data.txt") {
		t.Errorf("missing files: error %v, want one naming data.txt", err)
	}
}

func TestBenchUCISemi(t *testing.T) {
	dir := uciDir(t)
	if _, err := os.Stat(filepath.Join(dir, "bostonHousing", "data.txt")); err != nil {
		t.Skip("../shared/data/uci/bostonHousing not found")
	}
	svg := filepath.Join(t.TempDir(), "semi.svg")
	out, err := run(t, "bench", "uci-semi", "--data", dir, "--epochs", "20", "--svg", svg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"| Gaussian (affine flow) | 5 | ", "| Bernstein flow, M = 10 | 12 | ", "| posterior | test log-likelihood | test RMSE |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(b), "<polyline") || !strings.HasSuffix(string(b), "</svg>\n") {
		t.Errorf("svg not written or incomplete (err %v)", err)
	}
	if _, err := run(t, "bench", "uci-semi", "--data", dir, "--linear", "13"); err == nil {
		t.Error("the target column as --linear: want an error")
	}
}
