package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/zoo"
)

// TestRunDNCPValidatesUpFront: a bad field fails before any sampling, naming the field. With
// the defaults the toy study runs for minutes before the DBN's σ_z is used, so the deadline
// turns a regression into a failure (a context error instead of the field's name).
func TestRunDNCPValidatesUpFront(t *testing.T) {
	for _, c := range []struct {
		cfg  DNCPConfig
		want string
	}{
		{DNCPConfig{Sigmas: []float64{-1}}, "Sigmas[0] must be positive and finite (Sigmas[0]=-1)"},
		{DNCPConfig{Sigmas: []float64{0.1, 0}}, "Sigmas[1] must be positive"},
		{DNCPConfig{K: -1}, "K must be at least 1 (K=-1)"},
		{DNCPConfig{Chains: -2}, "Chains must be at least 1"},
		{DNCPConfig{TargetAccept: 1.5}, "TargetAccept must be in (0, 1)"},
		{DNCPConfig{Prob: -0.5}, "Prob must be in (0, 1)"},
		{DNCPConfig{Toy: [][2]float64{{1, -1}}}, "Toy[0] (sigma_x, sigma_z) must be positive"},
		{DNCPConfig{Toy: [][2]float64{}, Sigmas: []float64{}}, "nothing to run"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := RunDNCP(ctx, c.cfg)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunDNCP(%+v): error %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestRunOptionsValidated: negative RunOptions and NUTSOptions are errors naming the field
// before any run (RunOptions.Draws = -5 used to abort every run with exit 0).
func TestRunOptionsValidated(t *testing.T) {
	for _, o := range []RunOptions{{Draws: -5}, {MaxIter: -1}, {Workers: -1}} {
		_, err := Run(context.Background(), Config{RunOptions: o, Posteriors: []string{"eight_schools"}, Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("Run with %+v: error %v, want the field named", o, err)
		}
	}
	for _, o := range []NUTSOptions{{Chains: -1}, {Warmup: -1}, {Draws: -1}, {Workers: -1}} {
		_, err := RunNUTSBench(context.Background(), NUTSBenchConfig{NUTSOptions: o, Posteriors: []string{"eight_schools"}, Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("RunNUTSBench with %+v: error %v, want the field named", o, err)
		}
	}
}

// TestRunEveryRunAbortedIsAnError: when every run aborts, Run returns the report of aborts
// with an *AllAbortedError rather than success.
func TestRunEveryRunAbortedIsAnError(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	boom := errors.New("boom")
	fail := Method{Name: "fails", About: "always fails", Run: func(context.Context, *zoo.Model, uint64, RunOptions) (*Outcome, error) {
		return nil, boom
	}}
	rep, err := Run(context.Background(), Config{Posteriors: []string{"eight_schools"}, Methods: []string{"fails"}, Extra: []Method{fail}, Seeds: 2, Dir: dir})
	var ab *AllAbortedError
	if !errors.As(err, &ab) || ab.Runs != 2 || !errors.Is(err, boom) {
		t.Fatalf("error %v, want an *AllAbortedError of 2 runs wrapping the first", err)
	}
	if rep == nil || len(rep.Results) != 2 {
		t.Fatalf("report %+v, want the 2 aborted runs", rep)
	}
}
