package cli

import (
	"strings"
	"testing"
)

func TestBenchFlowCostErrors(t *testing.T) {
	if _, err := run(t, "bench", "flowcost", "--kinds", "fullrank"); err == nil || !strings.Contains(err.Error(), `"fullrank" is not a flow kind`) {
		t.Errorf("flowcost --kinds fullrank: err = %v", err)
	}
	if _, err := run(t, "bench", "ad", "--stan", "/no/such/ad_grad.R"); err == nil || !strings.Contains(err.Error(), "Stan: stat /no/such/ad_grad.R") {
		t.Errorf("ad --stan: err = %v", err)
	}
}
