package cli

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchStanCmd() *cobra.Command {
	var (
		out, dir, full, rstan, rscript string
		rounds                         int
	)
	cmd := &cobra.Command{
		Use:   "stan",
		Short: "Time a compiled Stan program's gradient against the hand-written zoo model (and rstan's)",
		Long: `vigo bench stan times, in one run, the gradient of each of the 12 public posteriordb
posteriors as the hand-written zoo model and as its Stan program (posteriordb-full/models/)
compiled by vigo, on the same points; with --rstan bench/stan/grad_time.R it also times Stan's
own C++ gradient inside its sampler (Debian's r-cran-rstan; each program compiles once, cached
in $STAN_CACHE or ~/.cache/vigo-stan). Writes a markdown table with the ratios.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "rounds")); err != nil {
				return err
			}
			pdb, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return err
			}
			if full == "" {
				full = filepath.Join(filepath.Dir(pdb), "posteriordb-full")
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				return bench.RunStanGrad(ctx, bench.StanGradConfig{PosteriorDB: pdb, Full: full, Rounds: rounds, RStan: rstan, Rscript: rscript})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "markdown file to write (default: standard output)")
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.StringVar(&full, "posteriordb-full", "", "posteriordb-full directory with the Stan programs (default: beside --posteriordb)")
	f.StringVar(&rstan, "rstan", "", "path of bench/stan/grad_time.R to time Stan's own gradient (needs Rscript with rstan)")
	f.StringVar(&rscript, "rscript", "Rscript", "the R interpreter for --rstan")
	f.IntVar(&rounds, "rounds", 3, "timing repetitions per model; the best is reported")
	return cmd
}
