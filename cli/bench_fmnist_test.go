package cli

import (
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// TestBenchFMNISTFlags: the flags reach bench.RunFMNIST (a tiny net on a tiny subset).
func TestBenchFMNISTFlags(t *testing.T) {
	datadir.FashionMNISTOrSkip(t)
	out, err := run(t, "bench", "fmnist", "--methods", "vardrop", "--epochs", "1", "--train", "100", "--test", "50", "--batch", "50",
		"--conv1", "2", "--conv2", "3", "--hidden", "8", "--samples", "2", "--lr", "0.002", "--prior-prec", "50")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"| vardrop | ", "100 training images", "1 epochs, minibatch 50, Adam step 0.002, prior N(0, 1/50)", "first 50 test images", "Conv(1→2, 5×5, s2) → Conv(2→3, 5×5, s2) → FC(48→8)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| vbp |") {
		t.Errorf("--methods vardrop also fitted vbp:\n%s", out)
	}
}
