package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitStanProgram runs vigo fit and vigo sample on a Stan program with CmdStan JSON data and
// --init, end to end: the draws carry Stan's names for parameters, transformed parameters and
// generated quantities.
func TestFitStanProgram(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "normal.stan")
	data := filepath.Join(dir, "normal.json")
	init := filepath.Join(dir, "init.json")
	for _, f := range []struct{ path, text string }{
		{prog, `data { int<lower=0> N; vector[N] y; }
parameters { real mu; real<lower=0> sigma; }
transformed parameters { real<lower=0> s2 = square(sigma); }
model { mu ~ normal(0, 10); sigma ~ lognormal(0, 1); y ~ normal(mu, sigma); }
generated quantities { array[2] real yrep = normal_rng(rep_vector(mu, 2), sigma); }
`},
		{data, `{"N": 5, "y": [1.2, 0.4, 2.2, 1.0, 1.7]}`},
		{init, `{"mu": 1, "sigma": 1}`},
	} {
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	fitDir := filepath.Join(dir, "fit")
	if rc := Run(context.Background(), []string{"fit", prog, "--data", data, "--init", init, "--out", fitDir, "--iter", "2000"}, &out, &errb); rc != 0 {
		t.Fatalf("vigo fit: exit %d: %s", rc, errb.String())
	}
	b, err := os.ReadFile(filepath.Join(fitDir, "draws.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var header string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "#") {
			header = l
			break
		}
	}
	if !strings.HasSuffix(header, "mu,sigma,s2,yrep.1,yrep.2") {
		t.Errorf("draws.csv header %q, want Stan's names ending mu,sigma,s2,yrep.1,yrep.2", header)
	}
	out.Reset()
	errb.Reset()
	// Exit 3 is "done, R-hat above 1.01", which 100 draws of one chain may give.
	if rc := Run(context.Background(), []string{"sample", prog, "--data", data, "--out", filepath.Join(dir, "nuts"), "--chains", "1", "--warmup", "100", "--draws", "100"}, &out, &errb); rc != 0 && rc != 3 {
		t.Fatalf("vigo sample: exit %d: %s", rc, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "nuts", "normal-1.csv")); err != nil {
		t.Errorf("vigo sample wrote no draws: %v", err)
	}
}
