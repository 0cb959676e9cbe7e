package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
)

func newBenchADCmd() *cobra.Command {
	var (
		out, torch, note string
		rounds           int
	)
	cmd := &cobra.Command{
		Use:   "ad",
		Short: "Time gradients: vigo AD vs hand-written, PyTorch (and Stan's figures)",
		Long: `vigo bench ad times, in one run, the gradient of logistic regression (N=1,000, D=10 and
N=100,000, D=50), a ReLU MLP (8→50→1, N=10,000) and eight schools with vigo's AD, with the
hand-written analytic gradient (the floor) and, with --torch, with the PyTorch peer script
(bench/peers/torch_grad.py, Debian's python3-torch, one thread). It writes a markdown table
with the ratios and Stan's figures from the issue.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "rounds")); err != nil {
				return err
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				return bench.RunAD(ctx, bench.ADConfig{Rounds: rounds, Torch: torch, Note: note})
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "markdown file to write (default: standard output)")
	cmd.Flags().StringVar(&torch, "torch", "", "path of bench/peers/torch_grad.py to time the PyTorch peer")
	cmd.Flags().IntVar(&rounds, "rounds", 3, "benchmark repetitions per row; the best is reported")
	cmd.Flags().StringVar(&note, "note", "", "a sentence added to the table's header (machine load, …)")
	return cmd
}
