package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/stan"
)

func newBenchStanCorpusCmd() *cobra.Command {
	var out, root, posteriors string
	cmd := &cobra.Command{
		Use:   "posteriordb-stan",
		Short: "Compile posteriordb's Stan programs and compare log densities with rstan",
		Long: `vigo bench posteriordb-stan compiles each of posteriordb's posteriors from its Stan program
and data and compares the log density (with and without Jacobian), gradient and constrained
values with rstan 2.21.7's at 10 points (the posteriordb-full snapshot's rstan-logprob/). It
writes a markdown table: per posterior, whether it parses, type-checks, loads its data and
matches, or the unsupported construct.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := datadir.PosteriorDBFull(root)
			if err != nil {
				return err
			}
			cfg := bench.StanCorpusConfig{Root: root}
			if posteriors != "all" {
				cfg.Posteriors = splitList(posteriors)
			}
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(r stan.CorpusResult) {
				fmt.Fprintf(errw, "%s: parse=%v check=%v data=%v lp=%v grad=%v values=%v %s\n", r.Posterior, r.Parsed, r.Checked, r.Loaded, r.LP, r.Grad, r.Values, r.Err)
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunStanCorpus(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&root, "posteriordb-full", "", datadir.PosteriorDBFullHelp)
	f.StringVar(&posteriors, "posteriors", "all", "all, or comma-separated posterior names")
	return cmd
}

func newBenchStanSpeedCmd() *cobra.Command {
	var out, root, dir, rstan, rscript string
	var budget time.Duration
	cmd := &cobra.Command{
		Use:   "stan",
		Short: "Time the gradient of the Stan-compiled public posteriors against the zoo models",
		Long: `vigo bench stan times, in one run, one gradient of each of the 12 zoo models (hand-written Go)
and of the same posterior's Stan program (posteriordb-full's models/) compiled by package stan,
on the same data and at the same point, and writes the table with their ratio. With --rstan
bench/stan/grad_time.R it also times Stan's own C++ gradient inside its sampler (Debian's
r-cran-rstan; each program compiles once, cached in $STAN_CACHE or ~/.cache/vigo-stan).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := datadir.PosteriorDBFull(root)
			if err != nil {
				return err
			}
			d, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return err
			}
			cfg := bench.StanSpeedConfig{Root: root, Dir: d, Budget: budget, RStan: rstan, Rscript: rscript}
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunStanSpeed(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&root, "posteriordb-full", "", datadir.PosteriorDBFullHelp)
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.DurationVar(&budget, "budget", time.Second, "time spent timing each gradient")
	f.StringVar(&rstan, "rstan", "", "path of bench/stan/grad_time.R: time Stan's own gradient in the same run (needs Rscript with rstan)")
	f.StringVar(&rscript, "rscript", "Rscript", "the R interpreter for --rstan")
	return cmd
}
