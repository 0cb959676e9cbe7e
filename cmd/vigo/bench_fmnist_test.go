package main

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/bench"
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

// TestBenchFMNISTTiny runs the whole benchmark on a tiny net and subset and checks the report.
func TestBenchFMNISTTiny(t *testing.T) {
	cfg := fmnistConfig{dir: datadir.FashionMNISTOrSkip(t), methods: []bnn.Method{bnn.VBP, bnn.VarDrop},
		epochs: 1, batch: 50, train: 200, test: 100, lr: 0.001, prior: 100, samples: 2, momentSamples: 10,
		seed: 1, progress: io.Discard, conv1: 2, conv2: 3, hidden: 8, classes: 10}
	runs, ntr, nte, err := runFMNIST(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ntr != 200 || nte != 100 || len(runs) != 2 {
		t.Fatalf("train %d, test %d, runs %d", ntr, nte, len(runs))
	}
	for _, r := range runs {
		if r.err != nil || r.testErr < 0 || r.testErr > 1 || !(r.testLL < 0) {
			t.Errorf("%s: %+v", r.method, r)
		}
	}
	var b strings.Builder
	writeFMNISTMarkdown(&b, bench.Header{Date: time.Now(), Command: "vigo bench fmnist", Commit: "x"}, cfg, runs, ntr, nte, time.Second)
	for _, want := range []string{"| vbp |", "| vardrop |", "NOT FOUND", "200 training images", "first 100 test images"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
