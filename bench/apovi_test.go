package bench

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/cnp"
	"github.com/vigo-bayes/vigo/internal/resultmd"
)

func TestRunAPOVIBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  APOVIConfig
		want string
	}{
		{APOVIConfig{Parts: []string{"e4"}}, `part="e4"`},
		{APOVIConfig{Parts: []string{"e1"}, E1Reps: -1}, "E1Reps"},
		{APOVIConfig{Parts: []string{"e3"}, E3Large: -2}, "E3Large"},
		{APOVIConfig{Parts: []string{"e3"}, Quick: true}, "MNIST"},
	} {
		if _, err := RunAPOVI(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}

// TestAPOVIMarkdownClaims: the E1 table states our numbers beside the thesis's and judges the
// Done-when claims from the means.
func TestAPOVIMarkdownClaims(t *testing.T) {
	e := &E1Result{Reps: 2, Iters: 10, TestSets: 1, TestN: []int{20},
		ELBO:     map[string][]float64{"POVI": {1, 2}, "0": {3, 4}, "1": {-1, 0}, "2": {0, 1}, "5": {2, 2}, "10": {2.5, 3}},
		PerSet:   map[string][][]float64{"POVI": {{1}, {2}}, "0": {{3}, {4}}, "1": {{-1}, {0}}, "2": {{0}, {1}}, "5": {{2}, {2}}, "10": {{2.5}, {3}}},
		RunIters: map[string][]int{}, Wall: map[string]time.Duration{}}
	var b bytes.Buffer
	r := &APOVIReport{Cfg: APOVIConfig{Parts: []string{"e1"}}, E1: e, Elapsed: map[string]time.Duration{}}
	if err := r.Markdown(&b, resultmd.New("vigo bench apovi", "abc")); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"| ours | 1.50 ± 0.71 | 3.50 ± 0.71 |", "| thesis | 3.13 ± 0.37 | 5.38 ± 0.59 |",
		"beats POVI: 3.50 vs 1.50 → **holds**", "rises with |Ξ| (1 → 2 → 5 → 10): -0.50, 0.50, 2.00, 2.75 → **holds**"} {
		if !strings.Contains(s, want) {
			t.Errorf("markdown lacks %q:\n%s", want, s)
		}
	}
	e.ELBO["10"] = []float64{1, 1}
	b.Reset()
	if err := r.Markdown(&b, resultmd.New("vigo bench apovi", "abc")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2.00, 1.00 → **does not hold**") {
		t.Errorf("a dip from 5 to 10 not flagged:\n%s", b.String())
	}
}

// TestAPOVISpeedQuick runs the speed part's predict-against-POVI timing (no peer) and checks
// the table it writes; it asserts nothing about the times.
func TestAPOVISpeedQuick(t *testing.T) {
	rep, err := RunAPOVI(context.Background(), APOVIConfig{Parts: []string{"speed"}, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Speed
	if s.POVIStep <= 0 || s.Predict[5] <= 0 || s.Predict[100] <= 0 || !strings.Contains(s.LayerNote, "skipped") {
		t.Fatalf("speed result %+v", s)
	}
	var b bytes.Buffer
	if err := rep.Markdown(&b, resultmd.New("vigo bench apovi --quick", "abc")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one POVI training step (S = 5)", "vigo predict: Load + forward pass, S = 100", "skipped"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestAPOVISummaryRoundTrip: the summary reads back, from part files written by the real
// Markdown methods, every Table 2 number (APOVI per regime, the ConvCNP summary rows, linear
// interpolation), copies E1, E2 and the speed section, and judges the Done-when claims.
func TestAPOVISummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	h := resultmd.New("vigo bench apovi --parts x", "0123456789abcdef0123456789abcdef01234567")
	write := func(name string, r interface {
		Markdown(w io.Writer, h resultmd.Header) error
	}) {
		var b bytes.Buffer
		if err := r.Markdown(&b, h); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e1 := &E1Result{Reps: 1, Iters: 10, TestSets: 1, TestN: []int{20},
		ELBO:   map[string][]float64{"POVI": {1}, "0": {3}, "1": {-1}, "2": {0}, "5": {2}, "10": {2.5}},
		PerSet: map[string][][]float64{"POVI": {{1}}, "0": {{3}}, "1": {{-1}}, "2": {{0}}, "5": {{2}}, "10": {{2.5}}}, RunIters: map[string][]int{}, Wall: map[string]time.Duration{}}
	write(APOVISummaryFiles.E1, &APOVIReport{Cfg: APOVIConfig{Parts: []string{"e1"}}, E1: e1, Elapsed: map[string]time.Duration{}})
	e2 := &E2Result{}
	write(APOVISummaryFiles.E2, &APOVIReport{Cfg: APOVIConfig{Parts: []string{"e2"}}, E2: e2, Elapsed: map[string]time.Duration{}})
	sp := &SpeedResult{Rounds: 1, Predict: map[int]time.Duration{5: 1, 100: 2}, PredictData: map[int]time.Duration{5: 1, 100: 2}, PredictOnly: map[int]time.Duration{5: 1, 100: 2}, Samples: []int{5, 100}, POVIStep: 4, LayerNote: "skipped"}
	write(APOVISummaryFiles.Speed, &APOVIReport{Cfg: APOVIConfig{Parts: []string{"speed"}}, Speed: sp, Elapsed: map[string]time.Duration{}})
	ten := make([]float64, 10)
	fill := func(v float64) []float64 {
		out := make([]float64, 10)
		for i := range out {
			out[i] = v
		}
		return out
	}
	e3 := &E3Result{Dataset: "MNIST-10k", Hidden: []int{2}, InferenceHidden: []int{3}, Iters: 50, LR: 1e-3, Stop: "thesis", Pool: 40,
		LinInterp: fill(50), LinNaN: make([]int, 10), Regimes: []E3Regime{{Name: "10", Images: 10, Iters: 50, SqErr: fill(20)}, {Name: "large", Images: 40, Iters: 30, Early: true, SqErr: fill(25)}}}
	write(APOVISummaryFiles.E3, &APOVIReport{Cfg: APOVIConfig{Parts: []string{"e3"}}, E3: e3, Elapsed: map[string]time.Duration{}})
	bl := &APOVIBaselinesReport{Budget: "tiny", Image: &ImageBaselinesResult{Config: ImageBaselinesConfig{Dataset: "MNIST-10k"}, Pool: 40, LinearPer: fill(50), LinearMean: 50,
		LinearNaN: make([]int, 10), ContextSizes: make([]int, 10), Model: cnp.GridConfig{Channels: 4},
		Runs: []ImageRun{{Size: 10, Rep: 0, Mean: 30, PerImage: ten}, {Size: 10, Rep: 1, Mean: 40, PerImage: ten}, {Size: 40, Rep: 0, Mean: 45, PerImage: ten}}}}
	write(APOVISummaryFiles.Baselines, bl)

	s, err := APOVISummaryRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.Markdown(&b, h); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| MNIST-10k | APOVI (thesis's stopping rule) | 10 | 20.00 | 0.40 | 23.5 ± 4.0 | 0.46 | 1 | 50 | apovi_e3.md |",
		"| MNIST-10k | APOVI (thesis's stopping rule) | 40 | 25.00 | 0.50 |",
		"| MNIST-10k | ConvCNP (grid) | 10 | 35.00 ± 7.07 | 0.70 | 67.2 ± 8.8 | 1.30 | 2 |",
		"| MNIST-10k | ConvCNP (grid) | 40 | 45.00 | 0.90 |",
		"| MNIST-10k | linear interpolation | – | 50.00 | 1 |",
		"below the ConvCNP **holds** (20.00 vs 35.00); ratio 0.400 (thesis 0.456) within the thesis's ≈ 0.40–0.46 or better **holds**",
		"ratio 0.500 (thesis 0.400) within the thesis's ≈ 0.40–0.46 or better **does not hold**",
		"## E1 — Table 1", "| thesis | 3.13 ± 0.37 |", "## vigo predict against one POVI training step",
		"| apovi_e1.md | `vigo bench apovi --parts x` | 0123456789ab |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if err := os.Remove(filepath.Join(dir, APOVISummaryFiles.E1)); err != nil {
		t.Fatal(err)
	}
	if _, err := APOVISummaryRun(dir); err == nil || !strings.Contains(err.Error(), "apovi_e1.md") {
		t.Fatalf("missing E1 file: err %v", err)
	}
}
