package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/output"
)

// newBenchCmd is vigo bench. Each subcommand parses its flags into a bench config, calls one
// bench runner and writes the runner's markdown (writeReport); the runners live in package
// bench.
func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run vigo's benchmarks and write markdown tables",
		Args:  cobra.NoArgs,
	}
	for _, c := range []func() *cobra.Command{newBenchPosteriordbCmd, newBenchNUTSCmd, newBenchDNCPCmd, newBenchADCmd, newBenchFlowCostCmd,
		newBenchBFVICmd, newBenchUCICmd, newBenchUCISemiCmd, newBenchFMNISTCmd, newBenchMISELBOCmd,
		newBenchStanCorpusCmd, newBenchStanSpeedCmd, newBenchTrustCmd, newBenchMMCLCmd,
		newBenchReparamCmd, newBenchAPOVIBaselinesCmd, newBenchAPOVICmd, newBenchFlowsCmd} {
		cmd.AddCommand(c())
	}
	return cmd
}

func newBenchPosteriordbCmd() *cobra.Command {
	var (
		methods, posteriors, out, dir string
		full                          string
		cfg                           bench.Config
	)
	cmd := &cobra.Command{
		Use:   "posteriordb",
		Short: "Fit the public posteriordb posteriors and compare with the reference draws and Stan ADVI",
		Long: `vigo bench posteriordb runs every method on every public posteriordb posterior with
seeds 1..N, measures W1/sd, sd ratio and max|Δmean|/sd against the 10,000 reference draws on
the constrained scale, k̂, wall time and gradient evaluations, and writes a markdown table of
medians over seeds with Stan ADVI's numbers (../shared/docs/targets.md) beside them and a
verdict per posterior. Progress goes to stderr, one line per run.

--source stan compiles each posterior's Stan program (posteriordb-full/models/) instead of
using the hand-written Go models, and with --posteriors all runs every posterior that has
reference draws (the 12 public ones and posteriordb-full's); a program that does not compile
is an abort row naming the construct.

Methods: ` + strings.Join(bench.MethodNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "seeds", "workers"), intsAtLeast(0, "max-iter", "draws")); err != nil {
				return err
			}
			cfg.Methods = splitList(methods)
			if posteriors != "all" {
				cfg.Posteriors = splitList(posteriors)
			}
			d, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return err
			}
			cfg.Dir = d
			if cfg.Source == bench.SourceStan {
				if cfg.Full, err = datadir.PosteriorDBFull(full); err != nil {
					return err
				}
			}
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(r bench.SeedResult) { fmt.Fprintln(errw, r.ProgressLine()) }
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.Run(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&methods, "methods", strings.Join(bench.DefaultMethods, ","), "comma-separated methods ("+strings.Join(bench.MethodNames(), ", ")+")")
	f.IntVar(&cfg.Seeds, "seeds", 3, "number of seeds; runs use seeds 1..N")
	f.StringVar(&posteriors, "posteriors", "all", "all, or comma-separated zoo or posteriordb names")
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.StringVar(&cfg.Source, "source", bench.SourceZoo, "models: zoo (hand-written Go) or stan (each posterior's Stan program, compiled)")
	f.StringVar(&full, "posteriordb-full", "", datadir.PosteriorDBFullHelp+", for --source stan")
	f.IntVar(&cfg.MaxIter, "max-iter", 0, "iteration cap per fit (0: the fit's default)")
	f.IntVar(&cfg.Workers, "workers", 1, "goroutines per fit (results do not depend on it; 1 compares with Stan's single core)")
	f.IntVar(&cfg.Draws, "draws", 0, "draws per run compared with the reference and used for k̂ (0: 1000)")
	return cmd
}

// report is a benchmark's result: a markdown table under a header.
type report interface {
	Markdown(w io.Writer, h resultmd.Header) error
}

// runBench runs a benchmark between the header's start and end and writes its report to out
// (writeReport).
//
// The output is checked before the run (checkOutput). A benchmark whose every run aborted
// (*bench.AllAbortedError) still writes its table of aborts, then returns the error, so the
// command exits non-zero.
func runBench(cmd *cobra.Command, out string, run func(ctx context.Context) (report, error)) error {
	if err := checkOutput(cmd, "out", out); err != nil {
		return err
	}
	h := newHeader()
	rep, err := run(cmd.Context())
	var aborted *bench.AllAbortedError
	if errors.As(err, &aborted) && rep != nil {
		h.Done()
		if werr := writeReport(cmd, out, func(w io.Writer) error { return rep.Markdown(w, h) }); werr != nil {
			return errors.Join(err, werr)
		}
		return fmt.Errorf("bench %s: %w", cmd.Name(), err)
	}
	if err != nil {
		return err
	}
	h.Done()
	return writeReport(cmd, out, func(w io.Writer) error { return rep.Markdown(w, h) })
}

// writeReport writes a report to the file out (atomically: output.WriteFile), or to stdout
// when out is "" or "-", and says "wrote out" on stderr.
func writeReport(cmd *cobra.Command, out string, write func(w io.Writer) error) error {
	if out == "" || out == "-" {
		return write(cmd.OutOrStdout())
	}
	if err := writeFile(out, write); err != nil {
		return fmt.Errorf("bench %s: write %s: %w", cmd.Name(), out, err)
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "wrote", out)
	return nil
}

// writeFile writes a file through write, atomically (output.WriteFile): a failure leaves an
// earlier file as it was, a symlink is replaced, not followed.
func writeFile(name string, write func(w io.Writer) error) error {
	return output.WriteFile(name, write)
}

// newHeader starts a result table's header: this command line, the commit, the date and the
// load average now.
func newHeader() resultmd.Header { return resultmd.New(commandLine(), resultmd.Commit()) }

// parseMethods parses a comma-separated list of bnn methods.
func parseMethods(cmd *cobra.Command, s string) ([]bnn.Method, error) {
	var ms []bnn.Method
	for _, m := range splitList(s) {
		mm, err := bnn.ParseMethod(m)
		if err != nil {
			return nil, fmt.Errorf("bench %s: --methods: %w", cmd.Name(), err)
		}
		ms = append(ms, mm)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("bench %s: --methods: no methods", cmd.Name())
	}
	return ms, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// commandLine is the command as typed, program name reduced to "vigo".
func commandLine() string {
	args := append([]string{"vigo"}, os.Args[1:]...)
	return strings.Join(args, " ")
}

// plotDir is where a bench writes its figures: beside the markdown file out, in a directory of
// its name without .md; "" (no figures) when noPlots or out is stdout.
func plotDir(out string, noPlots bool) string {
	if noPlots || out == "" || out == "-" {
		return ""
	}
	return strings.TrimSuffix(out, ".md")
}
