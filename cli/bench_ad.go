package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
)

func newBenchADCmd() *cobra.Command {
	var (
		out, torch, note, stan, rscript string
		rounds                          int
	)
	cmd := &cobra.Command{
		Use:   "ad",
		Short: "Time gradients: vigo AD vs hand-written, PyTorch and Stan",
		Long: `vigo bench ad times, in one run, the gradient of logistic regression (N=1,000, D=10 and
N=100,000, D=50), a ReLU MLP (8→50→1, N=10,000) and eight schools with vigo's AD, with the
hand-written analytic gradient (the floor) and, with --torch, with the PyTorch peer script
(bench/peers/torch_grad.py, Debian's python3-torch, one thread) and, with --stan, with rstan's
gradient timed inside its sampler (bench/stan/ad_grad.R: logistic regression and eight schools,
one chain; needs Rscript with rstan). It writes a markdown table with the ratios; a peer not run
shows the issue's figure, marked "(issue)".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "rounds")); err != nil {
				return err
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				return bench.RunAD(ctx, bench.ADConfig{Rounds: rounds, Torch: torch, Stan: stan, Rscript: rscript, Note: note})
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "markdown file to write (default: standard output)")
	cmd.Flags().StringVar(&torch, "torch", "", "path of bench/peers/torch_grad.py to time the PyTorch peer")
	cmd.Flags().StringVar(&stan, "stan", "", "path of bench/stan/ad_grad.R to time rstan's in-sampler gradient in the same run")
	cmd.Flags().StringVar(&rscript, "rscript", "Rscript", "the R interpreter for --stan")
	cmd.Flags().IntVar(&rounds, "rounds", 3, "benchmark repetitions per row; the best is reported")
	cmd.Flags().StringVar(&note, "note", "", "a sentence added to the table's header (machine load, …)")
	return cmd
}
