package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/internal/resultmd"
)

func TestFlowCostMarkdown(t *testing.T) {
	rep := &FlowCostReport{Rows: []FlowCostRow{
		{Posterior: "p", Kind: "bernstein", Dim: 10, Params: 100, S: 32, Estimator: "elbo", Batched: true,
			Family: 6 * time.Microsecond, Model: 2 * time.Microsecond, Step: 8 * time.Microsecond, Iters: 10, GradEvals: 1000, FitCPU: time.Second / 2, FitWall: time.Second},
		{Posterior: "q", Kind: "maf", Dim: 3, Err: "bad | thing"},
	}}
	var b strings.Builder
	if err := rep.Markdown(&b, resultmd.Header{Command: "vigo bench flowcost"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| p | bernstein | 10 | 100 | 32 | elbo, batched | 6.00 | 2.00 | 8.00 | 25% | 10 | 1000 | 0.0 | 0.5 | 1.0 |",
		"error: bad \\| thing |", "- command: `vigo bench flowcost`",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFlowCostKinds(t *testing.T) {
	if _, err := RunFlowCost(context.Background(), FlowCostConfig{Kinds: []string{"fullrank"}}); err == nil || !strings.Contains(err.Error(), `"fullrank" is not a flow kind`) {
		t.Errorf("err = %v, want a not-a-flow-kind error", err)
	}
}
