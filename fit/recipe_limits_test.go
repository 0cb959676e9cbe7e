package fit

import (
	"context"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/model"
)

// Every size a Recipe can request is bounded, with an error naming the field and the limit;
// the flow structure is counted before NewFlowFamily builds it. Before, hidden sizes of
// 16384 in eight layers made Validate (and so fit.Read of a fit.json carrying the recipe)
// build a flow of 1.9e9 weights, and the other sizes were unbounded.
func TestRecipeSizesAreBounded(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(r *Recipe)
		want string
	}{
		{"samples", func(r *Recipe) { r.Objective.Samples = MaxSamples + 1 }, "objective.samples = 65537, want 1 to 65536 (fit.MaxSamples"},
		{"k", func(r *Recipe) { r.Objective.Estimator, r.Objective.K = EstIWELBO, 1<<40 }, "objective.k = 1099511627776, want 1 to 65536"},
		{"samples×k", func(r *Recipe) { r.Objective.Estimator, r.Objective.K = EstIWELBO, MaxSamples }, "objective.k = 65536, want at most 8192 with objective.samples = 8"},
		{"eval_samples", func(r *Recipe) { r.Stop.EvalSamples = 1 << 40 }, "stop.eval_samples = 1099511627776, want 1 to 1048576"},
		{"diag_draws", func(r *Recipe) { r.DiagDraws = 1 << 40 }, "diag_draws = 1099511627776, want 2 to 16777216 (fit.MaxDiagDraws"},
		{"max_iter", func(r *Recipe) { r.MaxIter = 1 << 40 }, "max_iter = 1099511627776, want at most 104857600 with stop.eval_every = 100"},
		{"flow hidden", func(r *Recipe) {
			*r = DefaultRecipe(KindMAF)
			r.Family.Flow.Hidden = []int{16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384}
		}, "family.flow.hidden = [16384 16384 16384 16384 16384 16384 16384 16384], want at most 67108864 weights"},
	} {
		r := DefaultRecipe(KindMeanField)
		c.edit(&r)
		var err error
		n := allocated(func() { err = r.Validate() })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if n > 1<<20 {
			t.Errorf("%s: Validate allocated %d bytes", c.name, n)
		}
	}
	// The defaults and a large but sane flow pass.
	for _, k := range Kinds() {
		r := DefaultRecipe(k)
		if err := r.Validate(); err != nil {
			t.Errorf("DefaultRecipe(%s): %v", k, err)
		}
		if err := r.ValidateFor(1000); err != nil {
			t.Errorf("DefaultRecipe(%s) in d=1000: %v", k, err)
		}
	}
	r := DefaultRecipe(KindBernstein)
	r.Family.Flow.Degree, r.Family.Flow.Layers, r.Family.Flow.Hidden = 49, 4, []int{256, 256}
	if err := r.ValidateFor(100); err != nil {
		t.Errorf("bernstein degree 49, 4 layers, hidden 256,256 in d=100: %v", err)
	}
}

// Run checks the sizes times the target's dimension before it allocates anything.
func TestRunBoundsSizesTimesDimension(t *testing.T) {
	r := DefaultRecipe(KindMeanField)
	r.DiagDraws = MaxDiagDraws // 2²⁴ draws × 20 values > 2²⁸
	g20 := model.GradFunc{N: 20, F: func(x, grad []float64) float64 { panic("not reached: Run checks the sizes first") }}
	if _, err := Run(context.Background(), g20, r); err == nil || !strings.Contains(err.Error(), "diag_draws = 16777216, want at most 13421772 for the target's dimension 20") {
		t.Errorf("diag_draws × d: error %v", err)
	}
	if err := r.ValidateFor(4); err != nil {
		t.Errorf("diag_draws %d in d=4: %v", r.DiagDraws, err)
	}
	r = DefaultRecipe(KindMAF)
	r.Family.Flow.Hidden = []int{4096}
	if err := r.ValidateFor(10000); err == nil || !strings.Contains(err.Error(), "family.flow.hidden = [4096]: about") {
		t.Errorf("maf hidden 4096 in d=10000: error %v", err)
	}
}
