package bench

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/apovi"
	"github.com/vigo-bayes/vigo/cnp"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/internal/resultmd"
)

func TestImageBaselinesSmoke(t *testing.T) {
	dir := filepath.Join(datadir.SharedOrSkip(t), "data", "mnist-10k")
	cfg := ImageBaselinesConfig{Dir: dir, Reps: 2, MaxIter: 2, Model: cnp.GridConfig{Channels: 4, MLPWidth: 4, Blocks: 1}}
	res, err := RunImageBaselines(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.LinearPer) != 10 || res.Pool != 9990 || len(res.Runs) != 2 {
		t.Fatalf("linear %d, pool %d, runs %d", len(res.LinearPer), res.Pool, len(res.Runs))
	}
	// Linear interpolation is deterministic: a second run gives the same number.
	again, err := RunImageBaselines(context.Background(), ImageBaselinesConfig{Dir: dir, SkipConvCNP: true})
	if err != nil {
		t.Fatal(err)
	}
	if again.LinearMean != res.LinearMean {
		t.Fatalf("linear interpolation %v then %v", res.LinearMean, again.LinearMean)
	}
	for k, e := range res.LinearPer {
		// Each NaN pixel adds exactly 1, the others at most 1 each.
		if e < float64(res.LinearNaN[k]) || e > 784 {
			t.Fatalf("digit %d: error %v with %d NaN pixels", k, e, res.LinearNaN[k])
		}
	}
	var b strings.Builder
	rep := &APOVIBaselinesReport{Image: res}
	if err := rep.Markdown(&b, resultmd.New("test", "x")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "51.5 ± 0.0") || !strings.Contains(b.String(), "67.2 ± 8.8") {
		t.Fatalf("report lacks the thesis's numbers:\n%s", b.String())
	}
	if _, err := RunImageBaselines(context.Background(), ImageBaselinesConfig{Dir: dir, Sizes: []int{10000}, MaxIter: 1}); err == nil {
		t.Fatal("|Ξ| larger than the pool accepted")
	}
	if _, err := RunImageBaselines(context.Background(), ImageBaselinesConfig{}); err == nil {
		t.Fatal("empty Dir accepted")
	}
}

func TestConvCNP1DSmoke(t *testing.T) {
	cfg := ConvCNP1DConfig{Sizes: []int{2}, MaxIter: 2, HeldOut: 2, Grid: []float64{-1, 0, 1},
		ES: apovi.EarlyStop{Min: -1}, Model: cnp.OffGridConfig{EmbedDim: 4, Channels: []int{3}, Kernel: 3, Granularity: 20}}
	res, err := RunConvCNP1D(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) != 1 || len(res.Fits[0].Curves) != 2 {
		t.Fatalf("fits %d", len(res.Fits))
	}
	for _, c := range res.Fits[0].Curves {
		if len(c.Mean) != 3 || len(c.Std) != 3 || math.IsNaN(c.InSampleLL) {
			t.Fatalf("%s curve: %d means, %d stds, in-sample %v", c.Test, len(c.Mean), len(c.Std), c.InSampleLL)
		}
	}
	if c := res.Fits[0].Curves[1]; len(c.X) != 100 {
		t.Fatalf("cubic set has %d points, want 100", len(c.X))
	}
	if _, err := RunConvCNP1D(context.Background(), ConvCNP1DConfig{Sizes: []int{0}}); err == nil {
		t.Fatal("|Ξ| = 0 accepted")
	}
}

func TestImageBaselinesMarkdownLeavesOutFailedRuns(t *testing.T) {
	im := &ImageBaselinesResult{
		Pool: 5, LinearPer: make([]float64, 10), LinearNaN: make([]int, 10), ContextSizes: make([]int, 10), LinearMean: 50,
		Model: cnp.GridConfig{Channels: 8},
		Runs:  []ImageRun{{Size: 10, Rep: 0, Mean: 40}, {Size: 10, Rep: 1, Mean: 300, Err: "loss is NaN"}, {Size: 10, Rep: 2, Mean: 60}},
	}
	var b strings.Builder
	if err := (&APOVIBaselinesReport{Image: im}).Markdown(&b, resultmd.New("test", "x")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "50.00 ± 14.14 (2 repetitions; 1 more failed in training") {
		t.Fatalf("summary should average the two finished runs:\n%s", b.String())
	}
}
