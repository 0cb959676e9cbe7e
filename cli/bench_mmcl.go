package cli

import (
	"context"
	"math"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchMMCLCmd() *cobra.Command {
	var (
		cfg     bench.MMCLConfig
		out     string
		noPlots bool
	)
	cmd := &cobra.Command{
		Use:   "mmcl",
		Short: "MMCL vs MCEM on binarised MNIST (Kingma & Welling 2014, §6, Fig. 5)",
		Long: `vigo bench mmcl reruns the MNIST experiment of Kingma & Welling (2014): the 4-layer
model x | z₃ ~ Bernoulli(sigmoid(W_x z₃ + b_x)), z₃ = tanh(W₂z₂ + b₂) (100-D, noiseless),
z₂ | z₁ ~ N(tanh(W₁z₁ + b₁), σ₂²I), z₁ ~ N(0, I) (3-D each) in non-centred form, learned
on-line by MCEM (one HMC transition of 10 leapfrog steps per image on a persistent chain, then
an Adagrad step) and by MMCL (an Adagrad step on log (1/L) Σ p(x | ε_l) with L prior draws,
L ∈ {10, 100, 500}), on the first 1,000 and 9,000 images of ../shared/data/mnist-10k with
the last 1,000 held out. Every method gets the same training wall time; log p(x) of training
and test images is estimated by importance sampling along the way, and checked against large
samples and a toy with an exact value. It writes markdown to --out (default
bench/results/mmcl.md; "-" writes to stdout) and PNG/SVG figures beside it, in <out without
.md>/ (--no-plots: none). --quick is a smoke run of seconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(0, "test", "eval-images", "eval-draws", "final-images", "brute-draws", "checkpoints"),
				intsAtLeast(1, "ls", "subsets"), positiveFloats("budgets"), floatsIn(0, math.Inf(1), true, false, "non-negative and finite", "lr")); err != nil {
				return err
			}
			cfg.MNIST = datadir.MNIST10k(cfg.MNIST)
			cfg.PlotDir = plotDir(out, noPlots)
			cfg.Progress = cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunMMCL(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.MNIST, "mnist", "", "directory of the MNIST IDX files (default ../shared/data/mnist-10k beside the checkout)")
	f.StringVar(&out, "out", "bench/results/mmcl.md", `markdown file to write ("-": stdout)`)
	f.BoolVar(&noPlots, "no-plots", false, "do not write the figures")
	f.BoolVar(&cfg.Quick, "quick", false, "smoke run: 200 training images, K3 = 20, 2 CPU s per method, small evaluations")
	f.IntSliceVar(&cfg.Subsets, "subsets", nil, "training-subset sizes, the first n images (default 1000,9000)")
	f.Float64SliceVar(&cfg.Budgets, "budgets", nil, "training CPU seconds per method, one per subset (default 25,35)")
	f.IntSliceVar(&cfg.Ls, "ls", nil, "MMCL sample sizes (default 10,100,500)")
	f.IntVar(&cfg.Test, "test", 0, "held-out images, the last of the file (0: 1000)")
	f.Float64Var(&cfg.LR, "lr", 0, "Adagrad step size (0: 0.02)")
	f.IntVar(&cfg.Checkpoints, "checkpoints", 0, "evaluations per run after the one at time 0 (0: 4)")
	f.IntVar(&cfg.EvalImages, "eval-images", 0, "training and test images per evaluation (0: 50)")
	f.IntVar(&cfg.EvalDraws, "eval-draws", 0, "importance draws per image (0: 100)")
	f.IntVar(&cfg.FinalImages, "final-images", 0, "images per set in each run's final evaluation (0: 200)")
	f.IntVar(&cfg.BruteDraws, "brute-draws", 0, "draws of the brute-force checks (0: 20000)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the initial weights, the chains, the draws and the image order")
	return cmd
}
