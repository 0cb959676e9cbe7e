package cli

import (
	"strings"
	"testing"
)

// TestBenchMISELBOFlags: --parts and --quick reach bench.RunMISELBO; an unknown part is an
// error naming it.
func TestBenchMISELBOFlags(t *testing.T) {
	out, err := run(t, "bench", "miselbo", "--parts", "delta", "--quick", "--out", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"## §5.1.2", "**quick run**", "L=1000: 10;", "## §5.3", "- command: `vigo "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "## §5.2") {
		t.Errorf("--parts delta ran the VAE:\n%s", out)
	}
	if _, err := run(t, "bench", "miselbo", "--parts", "nosuch", "--out", "-"); err == nil || !strings.Contains(err.Error(), `part="nosuch"`) {
		t.Errorf("unknown part: error %v, want one naming it", err)
	}
}
