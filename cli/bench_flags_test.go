package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/resultmd"
)

// TestBenchNumericFlagsRejectedUpFront: a negative, zero or NaN value of a bench subcommand's
// numeric flag fails before any run with an error naming the flag (dncp --sigmas -1 panicked,
// --K -1 failed only after the toy study, posteriordb --draws -5 aborted every run and exited
// 0). Every case would otherwise start a long benchmark, so each must fail at once; the
// package's test timeout bounds a regression.
func TestBenchNumericFlagsRejectedUpFront(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"dncp", "--sigmas", "-1"}, "--sigmas"},
		{[]string{"dncp", "--sigmas", "0.1,0"}, "--sigmas"},
		{[]string{"dncp", "--sigmas", "NaN"}, "--sigmas"},
		{[]string{"dncp", "--K", "-1"}, "--K"},
		{[]string{"dncp", "--T", "0"}, "--T"},
		{[]string{"dncp", "--chains", "0"}, "--chains"},
		{[]string{"dncp", "--accept", "1"}, "--accept"},
		{[]string{"dncp", "--prob", "NaN"}, "--prob"},
		{[]string{"posteriordb", "--draws", "-5"}, "--draws"},
		{[]string{"posteriordb", "--seeds", "0"}, "--seeds"},
		{[]string{"posteriordb", "--max-iter", "-1"}, "--max-iter"},
		{[]string{"flows", "--seeds", "0"}, "--seeds"},
		{[]string{"flows", "--before-seeds", "-1"}, "--before-seeds"},
		{[]string{"nuts", "--chains", "-1"}, "--chains"},
		{[]string{"nuts", "--warmup", "0"}, "--warmup"},
		{[]string{"ad", "--rounds", "0"}, "--rounds"},
		{[]string{"bfvi", "--restarts", "-1"}, "--restarts"},
		{[]string{"bfvi", "--hidden", "10,0"}, "--hidden"},
		{[]string{"bfvi", "--base-df", "NaN"}, "--base-df"},
		{[]string{"bfvi", "--base-df", "-1"}, "--base-df"},
		{[]string{"fmnist", "--lr", "NaN"}, "--lr"},
		{[]string{"fmnist", "--lr", "Inf"}, "--lr"},
		{[]string{"fmnist", "--batch", "0"}, "--batch"},
		{[]string{"uci", "--batch", "0"}, "--batch"},
		{[]string{"uci", "--speed-epochs", "1"}, "--speed-epochs"},
		{[]string{"uci", "--speed-batch", "-32"}, "--speed-batch"},
		{[]string{"uci-semi", "--splits", "0"}, "--splits"},
		{[]string{"uci-semi", "--degree", "-1"}, "--degree"},
	} {
		args := append([]string{"bench"}, c.args...)
		args = append(args, "--out", "-")
		out, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), c.flag+" must be") {
			t.Errorf("vigo %s: error %v, want one naming %s\n%s", strings.Join(args, " "), err, c.flag, out)
		}
	}
}

// TestBenchOutputCheckedBeforeTheRun: bench dncp's default --out (bench/results/dncp.md) is
// relative; started outside the repository, the run used to finish and then fail to write its
// table. Now the directory is checked first, with a message saying what to do.
func TestBenchOutputCheckedBeforeTheRun(t *testing.T) {
	t.Chdir(t.TempDir())
	small := []string{"--sigmas", "0.5", "--T", "2", "--K", "1", "--P", "2", "--warmup", "20", "--draws", "20", "--chains", "1"}
	_, err := run(t, append([]string{"bench", "dncp"}, small...)...)
	if err == nil || !strings.Contains(err.Error(), "--out bench/results/dncp.md: directory bench/results does not exist") ||
		!strings.Contains(err.Error(), "- for standard output") {
		t.Errorf("default --out outside the repository: error %v, want the directory check", err)
	}
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if f, err := os.CreateTemp(ro, "x"); err == nil { // running as root: permissions do not bind
		f.Close()
	} else {
		_, err := run(t, "bench", "bfvi", "--exp", "e1", "--out", filepath.Join(ro, "bfvi.md"))
		if err == nil || !strings.Contains(err.Error(), "is not writable") {
			t.Errorf("unwritable --out: error %v, want the writability check", err)
		}
	}
	if _, err := run(t, "bench", "ad", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("--out a directory: error %v, want the check", err)
	}
	if _, err := run(t, "bench", "uci-semi", "--svg", "no/such/dir/p.svg", "--data", t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "--svg no/such/dir/p.svg: directory no/such/dir does not exist") {
		t.Errorf("uci-semi --svg in a missing directory: error %v, want the check", err)
	}
}

type fakeReport struct{}

func (fakeReport) Markdown(w io.Writer, _ resultmd.Header) error {
	_, err := io.WriteString(w, "| aborted |\n")
	return err
}

// TestRunBenchAllAbortedFails: a benchmark whose every run aborted writes its table of aborts
// and returns an error (the command exits 1), instead of succeeding.
func TestRunBenchAllAbortedFails(t *testing.T) {
	cmd := &cobra.Command{Use: "posteriordb"}
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetContext(context.Background())
	first := errors.New("boom")
	err := runBench(cmd, "-", func(context.Context) (report, error) {
		return fakeReport{}, &bench.AllAbortedError{Bench: "Run", Runs: 3, First: first}
	})
	if !errors.Is(err, first) || !strings.Contains(err.Error(), "every run aborted (runs=3)") {
		t.Errorf("error %v, want the all-aborted error", err)
	}
	if out.String() != "| aborted |\n" {
		t.Errorf("report %q, want the table of aborts written", out.String())
	}
}
