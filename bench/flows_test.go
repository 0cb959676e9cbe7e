package bench

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
)

// TestFlowsGoals: the bar of vigo bench flows on made-up runs — the medians, the pooled
// seed-to-seed noise and both verdicts, and the markdown's tables.
func TestFlowsGoals(t *testing.T) {
	cfg := FlowsConfig{Kinds: []string{"maf"}, Before: true}
	methods, err := flowsMethods(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep := &FlowsReport{Posteriors: []string{"p"}, Methods: methods, Kinds: cfg.Kinds, Seeds: 3, Before: true}
	add := func(m string, evals int, w1 ...float64) {
		for i, w := range w1 {
			rep.Results = append(rep.Results, SeedResult{Posterior: "p", Method: m, Seed: uint64(i + 1), Wall: time.Duration(evals) * time.Microsecond,
				GradEvals: evals, Metrics: Metrics{W1SD: w}, Converged: true})
		}
	}
	add("fullrank", 30000, 0.07, 0.07, 0.07)
	add("maf", 40000, 0.05, 0.07, 0.06)         // median 0.06, sd 0.01
	add("maf-before", 500000, 0.04, 0.05, 0.03) // median 0.04, sd 0.01
	add("nuts", 80000, 0.03, 0.03, 0.03)
	g := rep.Goals()
	if len(g) != 1 {
		t.Fatalf("%d goals", len(g))
	}
	// noise = √((0.01² + 0.01²)/2) = 0.01; the bar 0.04 + 2·0.01 sits at the after median
	// 0.06 itself, so only the noise, medians and evaluations are checked here.
	if math.Abs(g[0].Noise-0.01) > 1e-12 || g[0].AfterW1SD != 0.06 || g[0].BeforeW1SD != 0.04 || !g[0].TenthEvals {
		t.Errorf("goal %+v", g[0])
	}
	if g[0].NUTSWall != 0.08 || g[0].AfterWall != 0.04 || !math.IsNaN(g[0].StanNUTSWall) {
		t.Errorf("walls %v %v %v", g[0].AfterWall, g[0].NUTSWall, g[0].StanNUTSWall)
	}
	// After 0.04, 0.06, 0.05 (median 0.05, sd 0.01): below the bar 0.04 + 2·0.01, with 0.08
	// of the evaluations — the goal is reached.
	rep.Results[3].W1SD, rep.Results[4].W1SD, rep.Results[5].W1SD = 0.04, 0.06, 0.05
	if g := rep.Goals(); !g[0].Reached() {
		t.Errorf("after 0.05 vs before 0.04 + 2·0.01 with 0.08 of the evaluations: goal not reached (%+v)", g[0])
	}
	var b0 strings.Builder
	if err := rep.Markdown(&b0, resultmd.Header{Command: "vigo bench flows"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| **yes** | **yes** | **reached** | 0.5 | — |", "Goal reached on 1 of 1 posterior × flow pairs."} {
		if !strings.Contains(b0.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, b0.String())
		}
	}
	rep.Results[3].W1SD, rep.Results[4].W1SD, rep.Results[5].W1SD = 0.09, 0.07, 0.06 // median 0.07 > 0.04 + 2·0.0129
	if g := rep.Goals(); g[0].SameAnswer {
		t.Errorf("after 0.07 vs before 0.04 ± noise %v: same answer", g[0].Noise)
	}
	// One seed on each side: the noise is unknown; an after below the before is the same answer,
	// one above it is not.
	one := &FlowsReport{Posteriors: rep.Posteriors, Methods: methods, Kinds: cfg.Kinds, Seeds: 1, Before: true}
	for _, r := range rep.Results {
		if r.Seed == 1 {
			one.Results = append(one.Results, r)
		}
	}
	one.Results[1].W1SD, one.Results[2].W1SD = 0.035, 0.04 // maf after, maf-before
	if g := one.Goals(); !math.IsNaN(g[0].Noise) || !g[0].SameAnswer || !g[0].Reached() {
		t.Errorf("one seed each, after 0.035 vs before 0.04: %+v", g[0])
	}
	one.Results[1].W1SD = 0.045
	if g := one.Goals(); g[0].SameAnswer {
		t.Errorf("one seed each, after 0.045 vs before 0.04 with unknown noise: same answer (%+v)", g[0])
	}
	var b strings.Builder
	if err := rep.Markdown(&b, resultmd.Header{Command: "vigo bench flows"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## The bar", "| p | maf | 500000 | 40000 | 0.08 |", "| no | **yes** | not reached | 0.5 | — |", "Goal reached on 0 of 1", "## Medians over seeds", "| p | maf | 3 | 3 | 0.04 | 0.5 |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("markdown lacks %q:\n%s", s, b.String())
		}
	}
}

// TestReadChainCSV: the Stan NUTS draws file of bench/stan/flows_nuts.R, two chains.
func TestReadChainCSV(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(p, []byte("chain,mu,theta[1]\n1,0.5,1\n1,0.25,2\n2,1,3\n2,2,4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := readChainCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Chains) != 2 || d.Names[1] != "theta[1]" || d.Chains[1][2] != 2 || d.Chains[0][3] != 2 {
		t.Errorf("draws %+v", d)
	}
	if err := os.WriteFile(p, []byte("x,mu\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readChainCSV(p); err == nil || !strings.Contains(err.Error(), "want chain") {
		t.Errorf("no chain column: %v", err)
	}
}

// TestPatchRecipe: a patch changes the named fields only, nested objects merge, and a field the
// Recipe lacks, a non-object patch or an invalid value is an error naming it.
func TestPatchRecipe(t *testing.T) {
	base := fit.DefaultRecipe(fit.KindBernstein)
	r, err := PatchRecipe(base, `{"stop":{"window":7},"objective":{"samples":16},"family":{"flow":{"degree":10}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.Stop.Window, want.Objective.Samples = 7, 16
	want.Family.Flow = &fit.FlowOptions{Degree: 10, Affine: fit.AffineLast}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("patched %+v\nwant %+v", r, want)
	}
	if base.Stop.Window != fit.FlowWindow || base.Family.Flow.Degree != 0 {
		t.Errorf("the patch changed its input: %+v", base)
	}
	for _, c := range []struct{ patch, want string }{
		{`{"stop":{"windw":7}}`, "windw"},
		{`[1]`, "not a JSON object"},
		{`{"stop":{"window":1}}`, "stop.window"},
	} {
		if _, err := PatchRecipe(base, c.patch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("patch %s: %v, want an error naming %q", c.patch, err, c.want)
		}
	}
	cfg := FlowsConfig{Kinds: []string{fit.KindBernstein}, Patch: `{"stop":{"window":7}}`}
	ms, err := flowsMethods(cfg)
	if err != nil || len(ms) != 3 || !strings.Contains(ms[1].About, `patched with {"stop":{"window":7}} (noise rule over 7 estimates)`) {
		t.Errorf("methods %+v, %v", ms, err)
	}
}
