package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchFlowsCmd() *cobra.Command {
	var (
		posteriors, kinds, out, dir, full string
		cfg                               bench.FlowsConfig
	)
	cmd := &cobra.Command{
		Use:   "flows",
		Short: "Compare the flow fits with full rank and NUTS (and the flow recipe of before) in one run",
		Long: `vigo bench flows runs, for each posterior and seed, each flow kind's default recipe, the
full-rank Gaussian and vigo's NUTS (4 chains × (1000 + 1000) on one core) — with --before
also each kind's previous default (fit.PreviousFlowRecipe), with --stan-nuts
bench/stan/flows_nuts.R also Stan's NUTS through rstan — interleaved, and writes wall time,
gradient evaluations and W1/sd against the posteriordb reference draws, the flow/NUTS
wall-time ratio and, with --before, whether the default reaches the same W1/sd (within the
seed-to-seed noise) with at most a tenth of the gradient evaluations. Posteriors: zoo or
posteriordb names (the zoo's Go models), or posteriordb-full posteriors with reference draws
(their Stan program compiled by package stan; give --posteriordb-full). Default: ` + strings.Join(bench.FlowsDefaultPosteriors, ", ") + `.
Progress goes to stderr, one line per run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "seeds", "workers"), intsAtLeast(0, "max-iter", "draws", "before-seeds")); err != nil {
				return err
			}
			cfg.Posteriors, cfg.Kinds = splitList(posteriors), splitList(kinds)
			d, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return err
			}
			cfg.Dir = d
			if full != "" {
				if cfg.Full, err = datadir.PosteriorDBFull(full); err != nil {
					return err
				}
			}
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(r bench.SeedResult) { fmt.Fprintln(errw, r.ProgressLine()) }
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunFlows(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Seeds, "seeds", 3, "number of seeds; runs use seeds 1..N")
	f.StringVar(&posteriors, "posteriors", "", "comma-separated zoo, posteriordb or posteriordb-full names (default "+strings.Join(bench.FlowsDefaultPosteriors, ",")+")")
	f.StringVar(&kinds, "kinds", "", "comma-separated flow kinds (default maf,realnvp,bernstein)")
	f.BoolVar(&cfg.Before, "before", false, "also run each kind's previous default recipe (fit.PreviousFlowRecipe)")
	f.IntVar(&cfg.BeforeSeeds, "before-seeds", 0, "run the previous recipes with seeds 1..N only (0: all seeds)")
	f.BoolVar(&cfg.NoNUTS, "no-nuts", false, "leave out vigo's NUTS")
	f.StringVar(&cfg.Patch, "patch", "", `JSON object merged into each kind's default recipe, e.g. '{"stop":{"window":7}}' (ablations; objects merge key by key)`)
	f.StringVar(&cfg.StanNUTS, "stan-nuts", "", "path of bench/stan/flows_nuts.R: run Stan's NUTS too (needs Rscript with rstan)")
	f.StringVar(&cfg.Rscript, "rscript", "Rscript", "the R interpreter for --stan-nuts")
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.StringVar(&full, "posteriordb-full", "", datadir.PosteriorDBFullHelp+", for posteriors outside the zoo")
	f.IntVar(&cfg.MaxIter, "max-iter", 0, "iteration cap of each fit (0: the recipe's)")
	f.IntVar(&cfg.Draws, "draws", 0, "draws per fit compared with the reference (0: 1000)")
	f.IntVar(&cfg.Workers, "workers", 1, "goroutines per fit (results do not depend on it)")
	return cmd
}
