package fit

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestAutoStopsAtTheFirstGoodFamily: on a correlated Gaussian the mean-field fit has k̂ far
// above 0.7 (it cannot represent ρ = −0.9) and the full-rank fit is exact, so Auto stops after
// two stages, chooses fullrank and says why, one line per stage.
func TestAutoStopsAtTheFirstGoodFamily(t *testing.T) {
	var lines []string
	cfg := AutoConfig{Stages: testStages(2, 2000, 0, nil)}
	a, err := Auto(context.Background(), target(), cfg, WithProgress(func(p Progress) {
		if p.Line != "" {
			lines = append(lines, p.Line)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Stages) != 2 || a.Stages[a.Chosen].Family != KindFullRank {
		for _, s := range a.Stages {
			t.Log(s.Line)
		}
		t.Fatalf("%d stages, chose %s", len(a.Stages), a.Stages[a.Chosen].Family)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "meanfield: k̂") || !strings.Contains(lines[0], "try fullrank") ||
		!strings.Contains(lines[1], "good enough") {
		t.Errorf("lines %q", lines)
	}
	// The default threshold is the stage's own min(1 − 1/log₁₀ 1000, 0.7) = 0.67.
	if !strings.Contains(a.Reason, "fullrank has k̂") || !strings.Contains(a.Reason, "below 0.67") || !strings.Contains(a.Reason, "meanfield had k̂") {
		t.Errorf("reason %q", a.Reason)
	}
	if a.Best() != a.Stages[1].Result {
		t.Error("Best is not the chosen stage's fit")
	}
}

// TestAutoPrefersFullRankWhenMeanFieldPassesWithALowerELBO: on a Gaussian with ρ = 0.5 the
// mean-field fit can pass the k̂ threshold, yet KL(q_MF‖p) = −½ log(1 − ρ²) = 0.144 nats,
// far above the ELBO's Monte Carlo error (≈ 0.01 with 1000 draws), while full-rank is exact.
// Auto must run the full-rank stage anyway and choose it on its ELBO.
func TestAutoPrefersFullRankWhenMeanFieldPassesWithALowerELBO(t *testing.T) {
	g := gauss2{m: [2]float64{1, 2}, sd: [2]float64{1, 3}, rho: 0.5}
	var lines []string
	cfg := AutoConfig{Stages: testStages(3, 3000, 0, nil), Threshold: 0.99}
	a, err := Auto(context.Background(), g, cfg, WithProgress(func(p Progress) {
		if p.Line != "" {
			lines = append(lines, p.Line)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range a.Stages {
		t.Log(s.Line)
	}
	if len(a.Stages) != 2 || a.Stages[a.Chosen].Family != KindFullRank {
		t.Fatalf("%d stages, chose %s: %s", len(a.Stages), a.Stages[a.Chosen].Family, a.Reason)
	}
	if mf := a.Stages[0].Result; !(mf.KHat < 0.99) {
		t.Fatalf("mean-field k̂ %v: the test needs it below the threshold", mf.KHat)
	}
	if gap := a.Stages[1].Result.ELBO - a.Stages[0].Result.ELBO; math.Abs(gap-0.144) > 0.05 {
		// 0.05: 5× the combined MCSE of the two ELBO estimates (≈ 0.01 each).
		t.Errorf("ELBO gap %v, want KL(q_MF‖p) = 0.144", gap)
	}
	// Mean field is not good although its k̂ is below 0.99: its KL shows in the importance
	// sampling gap (Assess: Rough), so its line just says to try full rank.
	if !Assess(a.Stages[0].Result).Rough || !strings.HasSuffix(lines[0], ": try fullrank") || !strings.Contains(a.Reason, "fullrank has k̂") {
		t.Errorf("line %q, reason %q", lines[0], a.Reason)
	}
}

// TestAutoTriesTheFlowsAndChoosesByELBO: with a threshold nothing can reach, every stage
// runs — the flow warm-started from the full-rank fit — and the choice is the ELBO leader
// (issue 14: not the lowest k̂), with a warning: no stage's ELBO beats the chosen one's by
// more than twice their combined Monte Carlo standard error.
func TestAutoTriesTheFlowsAndChoosesByELBO(t *testing.T) {
	maf := DefaultRecipe(KindMAF)
	maf.Family.Flow = &FlowOptions{Hidden: []int{4}}
	maf.WarmStart = WarmFullRank // as AutoStages sets it (DefaultRecipe's flows start at the Laplace fit since issue 17)
	cfg := AutoConfig{Stages: testStages(2, 300, 200, []Recipe{maf}), Threshold: -1e-9}
	if _, err := Auto(context.Background(), target(), cfg); err == nil {
		t.Error("negative threshold: no error")
	}
	cfg.Threshold = 1e-9
	a, err := Auto(context.Background(), target(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Stages) != 3 || a.Stages[2].Family != KindMAF || !strings.Contains(a.Stages[2].Line, "warm start from the full-rank fit") {
		t.Fatalf("stages %+v", a.Stages)
	}
	best := a.Stages[a.Chosen].Result
	for _, s := range a.Stages {
		if s.Result.ELBO-best.ELBO > 2*math.Hypot(s.Result.ELBOSE, best.ELBOSE) {
			t.Errorf("chose ELBO %v ± %v, %s has %v ± %v", best.ELBO, best.ELBOSE, s.Family, s.Result.ELBO, s.Result.ELBOSE)
		}
	}
	if a.Stages[a.Chosen].Family == KindMeanField {
		t.Errorf("chose mean field, whose ELBO is KL(q_MF‖p) = 0.72 nats below full rank's")
	}
	if !strings.Contains(a.Reason, "no family reached") || !strings.Contains(a.Reason, "highest ELBO") {
		t.Errorf("reason %q", a.Reason)
	}
}

// TestAutoBudget: a spent budget stops the search; the stages not run are listed.
func TestAutoBudget(t *testing.T) {
	// The plateau window is longer than the test: only the budget can stop the first stage.
	stages := testStages(2, 1e7, 0, nil)
	for i := range stages {
		stages[i].Stop.Window = 1e5
	}
	cfg := AutoConfig{Stages: stages, Threshold: 1e-9, Budget: 1}
	a, err := Auto(context.Background(), target(), cfg)
	if err == nil {
		t.Fatalf("1 ns budget: chose %+v", a.Stages[a.Chosen])
	}
	cfg.Budget = 50e6 // 50 ms: mean-field runs (cut short), nothing after it
	cfg.Stages = stages[:2]
	a, err = Auto(context.Background(), target(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Stages[0].Result == nil || a.Stages[0].Result.Status != Cancelled || !strings.Contains(a.Stages[0].Line, "budget ran out") {
		t.Errorf("first stage %q", a.Stages[0].Line)
	}
	if last := a.Stages[len(a.Stages)-1]; !strings.Contains(last.Line, "not run") && last.Result.Status != Cancelled {
		t.Errorf("last stage %q", last.Line)
	}
}

// The reason names the real ELBO leader when the chosen family only ties with it (within 2
// MCSE), instead of calling the chosen one's ELBO the highest.
func TestAutoReasonOnATie(t *testing.T) {
	stage := func(fam string, elbo, se float64) AutoStage {
		return AutoStage{Family: fam, Result: &Result{ELBO: elbo, ELBOSE: se, KHat: 0.4, KHatThreshold: 0.67}}
	}
	a := &AutoResult{Stages: []AutoStage{stage(KindMeanField, -32.256, 0.022), stage(KindFullRank, -32.206, 0.021)}}
	if err := a.choose(0); err != nil {
		t.Fatal(err)
	}
	if a.Stages[a.Chosen].Family != KindMeanField || !strings.Contains(a.Reason, "within 2 MCSE of the highest, fullrank's -32.206") || strings.Contains(a.Reason, "the highest ELBO (") {
		t.Errorf("chose %s: %s", a.Stages[a.Chosen].Family, a.Reason)
	}
	a = &AutoResult{Stages: []AutoStage{stage(KindMeanField, -32.256, 0.001), stage(KindFullRank, -32.206, 0.001)}}
	if err := a.choose(0); err != nil {
		t.Fatal(err)
	}
	if a.Stages[a.Chosen].Family != KindFullRank || !strings.Contains(a.Reason, "the highest ELBO (-32.206) of the 2 families") {
		t.Errorf("chose %s: %s", a.Stages[a.Chosen].Family, a.Reason)
	}
}

// testStages are the mean-field and full-rank DefaultRecipes followed by flows (nil: the
// default bernstein and maf stages), with the seed, the iteration cap and (when not 0) the
// diagnostic draws set in every stage.
func testStages(seed uint64, maxIter, diagDraws int, flows []Recipe) []Recipe {
	st := AutoStages(FlowOptions{})
	if flows != nil {
		st = append(st[:2], flows...)
	}
	for i := range st {
		st[i].Seed, st[i].MaxIter = seed, maxIter
		if diagDraws > 0 {
			st[i].DiagDraws = diagDraws
		}
	}
	return st
}
