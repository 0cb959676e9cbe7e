package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/mcmc"
)

func newBenchNUTSCmd() *cobra.Command {
	var (
		posteriors, out, metric string
		cfg                     bench.NUTSBenchConfig
	)
	cmd := &cobra.Command{
		Use:   "nuts",
		Short: "Run NUTS on the public posteriordb posteriors and compare with Stan's NUTS",
		Long: `vigo bench nuts runs NUTS (4 chains × (1000 warmup + 1000 draws) by default, mcmc's
default metric auto_e; --metric diag_e is Stan's) on every public posteriordb posterior with seeds 1..N and writes a
markdown table: wall time, gradient evaluations, minimum bulk ESS per second and per 1000
gradients, W1/sd and the largest |Δmean|/MCSE against the reference draws, R̂ and sampler
diagnostics, with Stan 2.21's NUTS numbers (../shared/docs/targets.md) beside them. Progress goes to stderr, one line per run.

"vigo bench posteriordb --methods nuts" runs the same sampler inside the VI benchmark's table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "seeds", "chains", "warmup", "draws", "workers")); err != nil {
				return err
			}
			m, err := mcmc.ParseMetric(metric)
			if err != nil {
				return fmt.Errorf("bench nuts: --metric: %w", err)
			}
			cfg.Metric = m
			if posteriors != "all" {
				cfg.Posteriors = splitList(posteriors)
			}
			d, _, err := datadir.PosteriorDB(cfg.Dir)
			if err != nil {
				return fmt.Errorf("bench nuts: %w", err)
			}
			cfg.Dir = d
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(c *bench.NUTSCheck) { fmt.Fprintln(errw, c.ProgressLine()) }
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunNUTSBench(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Seeds, "seeds", 1, "number of seeds; runs use seeds 1..N")
	f.StringVar(&posteriors, "posteriors", "all", "all, or comma-separated zoo or posteriordb names")
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&cfg.Dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.IntVar(&cfg.Chains, "chains", bench.NUTSChains, "chains per run")
	f.IntVar(&cfg.Warmup, "warmup", bench.NUTSWarmup, "warmup iterations per chain")
	f.IntVar(&cfg.Draws, "draws", bench.NUTSDraws, "kept draws per chain")
	f.StringVar(&metric, "metric", mcmc.MetricKind(0).String(), "inverse metric: auto_e (default), diag_e (Stan's default), dense_e, fisher_diag_e or unit_e")
	f.IntVar(&cfg.Workers, "workers", 1, "chains run at once (the draws do not depend on it; 1 compares with Stan's one core)")
	return cmd
}
