package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func TestClassScores(t *testing.T) {
	probs := []float64{0.7, 0.2, 0.1, 0.1, 0.3, 0.6}
	e, ll := classScores(probs, []int{0, 1}, 3)
	// Row 0 right (p = 0.7), row 1 wrong (arg-max 2, p_true = 0.3).
	if e != 0.5 || math.Abs(ll-(math.Log(0.7)+math.Log(0.3))/2) > 1e-15 {
		t.Errorf("error %g, LL %g", e, ll)
	}
}

// TestRunFMNISTTiny runs the whole benchmark on a tiny net and subset and checks the report.
func TestRunFMNISTTiny(t *testing.T) {
	cfg := FMNISTConfig{Dir: datadir.FashionMNISTOrSkip(t), Methods: []bnn.Method{bnn.VBP, bnn.VarDrop},
		Epochs: 1, Batch: 50, Train: 200, Test: 100, Samples: 2, MomentSamples: 10,
		Seed: 1, Conv1: 2, Conv2: 3, Hidden: 8}
	rep, err := RunFMNIST(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train != 200 || rep.Test != 100 || len(rep.Runs) != 2 {
		t.Fatalf("train %d, test %d, runs %d", rep.Train, rep.Test, len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if r.Err != nil || r.TestErr < 0 || r.TestErr > 1 || !(r.TestLL < 0) {
			t.Errorf("%s: %+v", r.Method, r)
		}
	}
	var b strings.Builder
	if err := rep.Markdown(&b, testHeader); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| vbp |", "| vardrop |", "NOT FOUND", "200 training images", "first 100 test images",
		"Adam step 0.001, prior N(0, 1/100)", "Conv(1→2, 5×5, s2) → Conv(2→3, 5×5, s2)", "one goroutine", "- command: `vigo bench x`"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRunFMNISTErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  FMNISTConfig
		want string
	}{
		{FMNISTConfig{}, "Dir is empty"},
		{FMNISTConfig{Dir: "x", Epochs: -1}, "Epochs=-1"},
		{FMNISTConfig{Dir: "x", LR: math.NaN()}, "LR=NaN"},
		{FMNISTConfig{Dir: "x", Methods: []bnn.Method{}}, "Methods is empty"},
		{FMNISTConfig{Dir: t.TempDir()}, "dataset-fashion-mnist"},
	} {
		if _, err := RunFMNIST(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
}
