package cli

import (
	"bytes"
	"github.com/spf13/cobra"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// mustRoot is NewRoot with no models of the caller's.
func mustRoot(t *testing.T, models ...Model) *cobra.Command {
	t.Helper()
	root, err := NewRoot(models...)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := mustRoot(t)
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

// TestPosteriorDBHelp checks that every command with --posteriordb says in --help where the
// directory comes from otherwise.
func TestPosteriorDBHelp(t *testing.T) {
	for _, args := range [][]string{{"fit"}, {"sample"}, {"zoo"}, {"bench", "posteriordb"}, {"bench", "nuts"}, {"bench", "bfvi"}} {
		out, err := run(t, append(args, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		for _, want := range []string{"--posteriordb", "$" + datadir.PosteriorDBEnv, "vigo checkout"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v --help lacks %q", args, want)
			}
		}
	}
}

// TestPosteriorDBOutsideCheckout runs the commands from a directory outside any checkout:
// without the flag or the variable they fail naming both, the embedded model still works,
// and the variable alone is enough.
func TestPosteriorDBOutsideCheckout(t *testing.T) {
	db := datadir.PosteriorDBOrSkip(t) // resolved before leaving the checkout
	t.Setenv(datadir.PosteriorDBEnv, "")
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"zoo", "kidiq"}, {"fit", "kidiq"}, {"sample", "kidiq"}, {"bench", "posteriordb", "--posteriors", "kidiq"}, {"bench", "nuts", "--posteriors", "kidiq"}} {
		_, err := run(t, args...)
		if err == nil {
			t.Errorf("%v outside a checkout: no error", args)
			continue
		}
		for _, want := range []string{"--posteriordb", datadir.PosteriorDBEnv} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q does not name %s", args, err, want)
			}
		}
	}
	out, err := run(t, "zoo")
	if err != nil || !strings.Contains(out, "needs posteriordb") || !strings.Contains(out, "z = 0") {
		t.Errorf("vigo zoo outside a checkout: %v\n%s", err, out)
	}
	t.Setenv(datadir.PosteriorDBEnv, db)
	out, err = run(t, "zoo", "kidiq")
	if err != nil || !strings.Contains(out, "first posteriordb reference draw") {
		t.Errorf("vigo zoo kidiq with $%s: %v\n%s", datadir.PosteriorDBEnv, err, out)
	}
}
