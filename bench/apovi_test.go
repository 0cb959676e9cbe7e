package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

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
