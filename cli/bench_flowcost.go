package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchFlowCostCmd() *cobra.Command {
	var (
		out, dir, kinds, fits string
		budget                time.Duration
	)
	cmd := &cobra.Command{
		Use:   "flowcost",
		Short: "Where a flow fit's time goes: family and model cost per draw, per flow kind and posterior",
		Long: `vigo bench flowcost times, for each flow kind (--kinds) on the public posteriors that need a
flow (eight schools non-centred and centred, garch11, gp_pois_regr), one draw of the default
recipe's gradient step split into the family's cost (the step on a free target) and the
model's (one log density and gradient), and with --fit KINDS runs those kinds' default fits
(seed 1, one worker) to count their gradient evaluations. It writes a markdown table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return err
			}
			var ks, fk []string
			if kinds != "" {
				ks = strings.Split(kinds, ",")
			}
			if fits != "" {
				fk = strings.Split(fits, ",")
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				return bench.RunFlowCost(ctx, bench.FlowCostConfig{Dir: d, Kinds: ks, Budget: budget, FitKinds: fk})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "markdown file to write (default: standard output)")
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.StringVar(&kinds, "kinds", "", "comma-separated flow kinds (default bernstein,maf,realnvp)")
	f.DurationVar(&budget, "budget", 600*time.Millisecond, "timing per measurement (best of 3 thirds)")
	f.StringVar(&fits, "fit", "", "comma-separated kinds whose default fit (seed 1, one worker) also runs on each posterior, to count its gradient evaluations")
	return cmd
}
