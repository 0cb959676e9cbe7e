package bench

import (
	"context"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func uciTestDir(t *testing.T) string {
	t.Helper()
	d := datadir.SharedOrSkip(t)
	dir := filepath.Join(d, "data", "uci")
	if _, err := os.Stat(filepath.Join(dir, "yacht", "data.txt")); err != nil {
		t.Skip("../shared/data/uci/yacht not found: the UCI data are needed")
	}
	return dir
}

var testHeader = resultmd.Header{Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "vigo bench x", Commit: "abc", LoadStart: "1 1 1", LoadEnd: "2 2 2", Wall: time.Second}

// TestRunUCIYacht runs two short fits per method on yacht (a second in all) and checks the
// tables' rows and columns and that the fits learned something (test LL far above the
// untrained network's ≈ −4.5 on yacht).
func TestRunUCIYacht(t *testing.T) {
	var log strings.Builder
	rep, err := RunUCI(context.Background(), UCIConfig{Dir: uciTestDir(t), Datasets: []string{"yacht"}, Splits: 2, MinSteps: 300, Samples: 10, Seed: 1, Progress: &log})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Markdown(&b, testHeader); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# UCI regression", "- command: `vigo bench x`", "- commit: abc", "load average", "fits in parallel",
		"| data set | splits | vbp | mfvi | dvi | vardrop | PBP | dDVI | hoDVI | VI |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
		"| yacht | 2 | ", "-1.63 ± 0.02 | -0.47 ± 0.03 | -1.41 ± 0.03 | -3.43 ± 0.16 |",
		"| data set | vbp | mfvi | dvi | vardrop | PBP | VI |\n|---|---:|---:|---:|---:|---:|---:|\n", "| 1.02 ± 0.05 | 6.89 ± 0.67 |",
		"| data set | train rows | epochs | vbp | mfvi | dvi | vardrop |\n|---|---:|---:|---:|---:|---:|---:|\n",
		"| yacht | 277 | 100 |", "raised to reach 300 Adam steps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Failed fits") {
		t.Errorf("a fit failed:\n%s", out)
	}
	for _, m := range []string{"vbp", "mfvi", "dvi", "vardrop"} {
		if !strings.Contains(log.String(), "yacht split 1 "+m+": test LL -") {
			t.Errorf("progress lacks %s split 1:\n%s", m, log.String())
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

func TestRunUCISpeedWithoutPeer(t *testing.T) {
	rep, err := RunUCISpeed(context.Background(), UCISpeedConfig{Dir: uciTestDir(t), Datasets: []string{"yacht"}, Epochs: 2, Batches: []int{64}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Markdown(&b, testHeader); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| yacht | 277 | 50 | vbp | 64 | ", "| yacht | 277 | 50 | mfvi | 64 | ", "| — | — | — |", "median of epochs 2..2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRunUCIErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"unknown data set", func() error {
			_, err := RunUCI(ctx, UCIConfig{Dir: t.TempDir(), Datasets: []string{"nosuch"}})
			return err
		}, `name="nosuch"`},
		{"missing files", func() error {
			_, err := RunUCI(ctx, UCIConfig{Dir: t.TempDir(), Datasets: []string{"yacht"}})
			return err
		}, "data.txt"},
		{"no dir", func() error { _, err := RunUCI(ctx, UCIConfig{}); return err }, "Dir is empty"},
		{"negative splits", func() error { _, err := RunUCI(ctx, UCIConfig{Dir: "x", Splits: -1}); return err }, "Splits=-1"},
		{"no methods", func() error { _, err := RunUCI(ctx, UCIConfig{Dir: "x", Methods: []bnn.Method{}}); return err }, "Methods is empty"},
		{"speed epochs", func() error { _, err := RunUCISpeed(ctx, UCISpeedConfig{Dir: "x", Epochs: 1}); return err }, "Epochs=1"},
		{"speed batch", func() error { _, err := RunUCISpeed(ctx, UCISpeedConfig{Dir: "x", Batches: []int{0}}); return err }, "Batches=[0]"},
		{"semi split", func() error {
			_, err := RunUCISemi(ctx, UCISemiConfig{Dir: uciTestDir(t), Dataset: "yacht", Linear: []int{0}, Split: 99})
			return err
		}, "Split=99"},
		{"semi target column", func() error {
			_, err := RunUCISemi(ctx, UCISemiConfig{Dir: uciTestDir(t), Dataset: "yacht", Linear: []int{6}})
			return err
		}, "column 6 is not a feature column"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestRunUCISemi(t *testing.T) {
	dir := uciTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "bostonHousing", "data.txt")); err != nil {
		t.Skip("../shared/data/uci/bostonHousing not found")
	}
	rep, err := RunUCISemi(context.Background(), UCISemiConfig{Dir: dir, Epochs: 20, Seed: 1, SVGName: "semi.svg"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.Markdown(&b, testHeader); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Semi-structured regression on boston", "| Gaussian (affine flow) | 5 | ", "| Bernstein flow, M = 10 | 12 | ",
		"| multivariate Bernstein flow, M = 10, MADE 10×10 | 12 | ", "| posterior | test log-likelihood | test RMSE | γ_5 mean | γ_12 mean |",
		"20 epochs", "Posterior densities (split 0): `semi.svg`."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	var svg strings.Builder
	if err := rep.SVG(&svg); err != nil {
		t.Fatal(err)
	}
	if s := svg.String(); strings.Count(s, "<polyline") != 6 || !strings.HasSuffix(s, "</svg>\n") || !strings.Contains(s, "boston: coefficient of column 12") {
		t.Errorf("svg lacks the 2 × 3 density curves or the panel titles:\n%.500s", s)
	}
}
