package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

// uciDir returns --data, else ../shared/data/uci found from the working directory.
func uciDir(cmd *cobra.Command, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, ok := datadir.Shared()
	if !ok {
		return "", fmt.Errorf("bench %s: ../shared/data/uci not found; pass --data DIR", cmd.Name())
	}
	return filepath.Join(d, "data", "uci"), nil
}

func newBenchUCICmd() *cobra.Command {
	var (
		cfg                    bench.UCIConfig
		sp                     bench.UCISpeedConfig
		methods, datasets, out string
		dir                    string
		speed                  bool
	)
	cmd := &cobra.Command{
		Use:   "uci",
		Short: "Bayesian neural networks on the nine UCI regression sets (PBP protocol) vs PBP and DVI",
		Long: `vigo bench uci fits one-hidden-layer ReLU networks with mean-field Gaussian weights on the
nine UCI regression sets of ../shared/data/uci with the PBP protocol: the published 90/10 splits
(20, protein 5), 50 hidden units (100 for protein), inputs and targets normalised on the training
part, Adam with step 0.01, prior N(0, 1/10), minibatches of 128, PBP's epochs (40, protein 20)
raised where needed to reach 3,000 Adam steps (small data sets), noise precision by Type-II
maximum likelihood after every epoch. Test log-likelihood per point and RMSE are in the original units.
It writes a markdown table of mean ± standard error over the splits beside the published PBP and
DVI numbers. Progress goes to stderr, one line per fit.

Methods: vbp (variance backpropagation), mfvi (Monte Carlo, local reparameterisation), dvi
(closed-form ReLU moments), vardrop (variational dropout with a Gaussian prior).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "splits", "epoch-scale", "batch", "samples", "workers", "speed-batch"),
				intsAtLeast(0, "epochs", "min-steps"), intsAtLeast(2, "speed-epochs")); err != nil {
				return err
			}
			ms, err := parseMethods(cmd, methods)
			if err != nil {
				return err
			}
			if cfg.Dir, err = uciDir(cmd, dir); err != nil {
				return err
			}
			if datasets != "all" {
				cfg.Datasets = splitList(datasets)
			}
			if speed {
				sp.Dir, sp.Datasets, sp.Seed, sp.Progress = cfg.Dir, cfg.Datasets, cfg.Seed, cmd.ErrOrStderr()
				if cmd.Flags().Changed("methods") {
					sp.Methods = ms
				}
				return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunUCISpeed(ctx, sp) })
			}
			cfg.Methods, cfg.Progress = ms, cmd.ErrOrStderr()
			if cfg.MinSteps == 0 {
				cfg.MinSteps = -1 // --min-steps 0: no floor (bench's 0 is its default)
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunUCI(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&methods, "methods", "vbp,mfvi,dvi,vardrop", "comma-separated methods: vbp, mfvi, dvi, vardrop")
	f.StringVar(&datasets, "datasets", "all", "all, or comma-separated: "+strings.Join(bench.UCINames(), ", "))
	f.IntVar(&cfg.Splits, "splits", 20, "splits per data set (at most the data set's own count: protein has 5)")
	f.IntVar(&cfg.Epochs, "epochs", 0, "epochs per fit (0: the data set's n_epochs.txt times --epoch-scale)")
	f.IntVar(&cfg.EpochScale, "epoch-scale", 1, "multiplies the data set's n_epochs.txt when --epochs is 0")
	f.IntVar(&cfg.MinSteps, "min-steps", 3000, "with --epochs 0, raise the epochs so that every fit takes at least this many Adam steps")
	f.IntVar(&cfg.Batch, "batch", 128, "minibatch size")
	f.IntVar(&cfg.Samples, "samples", 100, "draws of the hidden layers for the Monte Carlo methods' predictive density")
	f.IntVar(&cfg.Workers, "workers", runtime.GOMAXPROCS(0), "fits run in parallel (results do not depend on it)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "base seed; each fit derives its own from (seed, data set, split)")
	f.StringVar(&dir, "data", "", "UCI directory (default ../shared/data/uci found from the working directory)")
	f.BoolVar(&speed, "speed", false, "time epochs instead (default power and protein, vbp and mfvi, one goroutine) against the PyTorch peer given by --torch")
	f.StringVar(&sp.Torch, "torch", "", "with --speed: path of bench/peers/vbp_torch.py (runs /usr/bin/python3 on it, one thread)")
	f.IntVar(&sp.Epochs, "speed-epochs", 4, "with --speed: epochs timed per run; the median of all but the first is reported")
	f.IntSliceVar(&sp.Batches, "speed-batch", []int{32, 128}, "with --speed: comma-separated minibatch sizes")
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout (bench/results/uci.md)")
	return cmd
}

func newBenchUCISemiCmd() *cobra.Command {
	var (
		cfg           bench.UCISemiConfig
		dir, out, svg string
	)
	cmd := &cobra.Command{
		Use:   "uci-semi",
		Short: "Semi-structured regression on a UCI set: network part + flow posterior on chosen coefficients",
		Long: `vigo bench uci-semi fits y = g(x_rest) + x_lin·γ + ε on one UCI split (normalised on the
training part): g a 50-unit ReLU network with point-estimated weights, γ the coefficients of the
--linear columns with a variational posterior, once a Gaussian (affine flow) and once a Bernstein
flow (BF-VI), trained jointly on the ELBO (Adam 0.01 annealed to 1%, minibatch 32). It writes a
markdown summary (posterior mean, sd and 5/95% quantiles of γ in original units beside the exact
posterior of γ given the fitted network and σ; test log-likelihood and RMSE over --splits
splits) and an SVG of the first split's coefficient posterior densities. Default: boston, RM (rooms, column 5) and
LSTAT (% lower status, column 12).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "splits", "epochs", "degree"), intsAtLeast(0, "split", "linear")); err != nil {
				return err
			}
			if err := checkOutput(cmd, "svg", svg); err != nil {
				return err
			}
			var err error
			if cfg.Dir, err = uciDir(cmd, dir); err != nil {
				return err
			}
			if svg != "" {
				cfg.SVGName = filepath.Base(svg)
			}
			cfg.Progress = cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				rep, err := bench.RunUCISemi(ctx, cfg)
				if err == nil && svg != "" {
					if err := writeFile(svg, rep.SVG); err != nil {
						return nil, fmt.Errorf("bench uci-semi: --svg: %w", err)
					}
				}
				return rep, err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "data", "", "UCI directory (default ../shared/data/uci found from the working directory)")
	f.StringVar(&cfg.Dataset, "dataset", "boston", "data set")
	f.IntSliceVar(&cfg.Linear, "linear", []int{5, 12}, "comma-separated data columns modelled linearly")
	f.IntVar(&cfg.Split, "split", 0, "first split index (its posterior is tabled and plotted)")
	f.IntVar(&cfg.Splits, "splits", 1, "number of splits from --split on (test scores and coefficient means over all)")
	f.IntVar(&cfg.Epochs, "epochs", 2000, "epochs (q(γ) needs ≈ 30,000 steps on boston to reach the exact conditional posterior)")
	f.IntVar(&cfg.Degree, "degree", 10, "Bernstein polynomial degree M")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed")
	f.StringVar(&out, "out", "", "markdown file (default stdout)")
	f.StringVar(&svg, "svg", "", "SVG file for the posterior densities (default: none)")
	return cmd
}
