package main

import (
	"bytes"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestZooListsModelsAndEvaluatesEightSchools(t *testing.T) {
	out, err := run(t, "zoo")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diamonds", "hmm_example", "eight_schools", "log density (with Jacobian)", "theta_trans[8]", "tau"} {
		if !strings.Contains(out, want) {
			t.Errorf("vigo zoo output lacks %q:\n%s", want, out)
		}
	}
}

func TestZooUnknownModelErrorNamesIt(t *testing.T) {
	_, err := run(t, "zoo", "no_such_model", "--posteriordb", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no_such_model") {
		t.Fatalf("error = %v, want one naming the model", err)
	}
}
