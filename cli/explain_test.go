package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuntimeErrorShown checks that a Stan program's run-time error (Stan's wording, with the
// statement's file:line:col) reaches the user of vigo fit when starts are rejected, and of
// vigo sample when no initial point is finite — rather than a silent NaN.
func TestRuntimeErrorShown(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "bad.stan")
	data := filepath.Join(dir, "bad.json")
	for _, f := range []struct{ path, text string }{
		// The scale s − 5 is negative for s < 5: the starts near z = 0 are rejected.
		{prog, "data { int N; vector[N] y; }\nparameters { real mu; real<lower=0> s; }\nmodel {\n  y ~ normal(mu, s - 5);\n}\n"},
		{data, `{"N": 3, "y": [1, 2, 3]}`},
	} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const want = "bad.stan:4:3: normal_lpdf: Scale parameter is"
	var out, errb bytes.Buffer
	rc := Run(context.Background(), []string{"fit", prog, "--data", data, "--out", filepath.Join(dir, "fit"), "--iter", "300"}, &out, &errb)
	// Exit 3 is "done, but not converged or not reliable", which a 300-step cap may give.
	if rc != 0 && rc != 3 {
		t.Fatalf("vigo fit: exit %d: %s", rc, errb.String())
	}
	if o := out.String(); !strings.Contains(o, "failed; the first: log density is not finite at the start point: ") || !strings.Contains(o, want) {
		t.Errorf("vigo fit output does not say why starts failed:\n%s", out.String())
	}
	// A scale that is negative everywhere: vigo sample cannot start and says why.
	if err := os.WriteFile(prog, []byte("data { int N; vector[N] y; }\nparameters { real mu; }\nmodel {\n  y ~ normal(mu, -1);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	rc = Run(context.Background(), []string{"sample", prog, "--data", data, "--out", filepath.Join(dir, "nuts"), "--chains", "1", "--warmup", "10", "--draws", "10"}, &out, &errb)
	if rc == 0 || !strings.Contains(errb.String(), "bad.stan:4:3: normal_lpdf: Scale parameter is -1, but must be positive!") {
		t.Errorf("vigo sample: exit %d, stderr %q: want a failure naming the statement and Stan's message", rc, errb.String())
	}
}
