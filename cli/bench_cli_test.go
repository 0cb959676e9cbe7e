package cli

import (
	"strings"
	"testing"
)

// TestBenchDNCPFlags: the DBN's shape, the sampler's lengths and --sigmas reach bench.RunDNCP.
func TestBenchDNCPFlags(t *testing.T) {
	out, err := run(t, "bench", "dncp", "--sigmas", "0.5", "--T", "2", "--K", "1", "--P", "2", "--warmup", "20", "--draws", "20", "--chains", "1", "--out", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"T = 2 time steps, K = 1 latents and P = 2", "during 20 burn-in iterations, then 20 kept; 1 chains", "| 0.5 | ", "- command: `vigo "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchNUTSFlags: the sampler's lengths reach bench.RunNUTSBench; --metric is checked.
func TestBenchNUTSFlags(t *testing.T) {
	out, err := run(t, "bench", "nuts", "--posteriors", "eight_schools", "--chains", "1", "--warmup", "30", "--draws", "30", "--metric", "diag_e")
	if err != nil {
		if strings.Contains(err.Error(), "posteriordb") {
			t.Skipf("posteriordb not found: %v", err)
		}
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "1 chains × (30 warmup + 30 draws), metric diag_e") {
		t.Errorf("report lacks the sampler settings:\n%s", out)
	}
	if _, err := run(t, "bench", "nuts", "--metric", "nosuch"); err == nil || !strings.Contains(err.Error(), "--metric") {
		t.Errorf("bad --metric: error %v, want one naming the flag", err)
	}
}

// TestBenchADFlags: a missing --torch script is refused before any timing.
func TestBenchADFlags(t *testing.T) {
	if _, err := run(t, "bench", "ad", "--torch", "/no/such/torch_grad.py"); err == nil || !strings.Contains(err.Error(), "Torch: stat /no/such/torch_grad.py") {
		t.Errorf("missing --torch: error %v, want one naming the flag", err)
	}
}
