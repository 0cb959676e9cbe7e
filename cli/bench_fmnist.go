package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchFMNISTCmd() *cobra.Command {
	var (
		cfg          bench.FMNISTConfig
		methods, out string
	)
	cmd := &cobra.Command{
		Use:   "fmnist",
		Short: "Bayesian all-convolutional LeNet on Fashion-MNIST: VBP vs Monte Carlo mean-field VI vs variational dropout",
		Long: `vigo bench fmnist reruns the VBP paper's Fashion-MNIST experiment (papers.md §2.2): the
all-convolutional LeNet Conv(1→20, 5×5, stride 2) → Conv(20→50, 5×5, stride 2) → FC(800→500) →
FC(500→10) with ReLU, mean-field Gaussian weights and biases, prior N(0, 1/100), Adam with step
0.001, trained on the ELBO with the KL weighted for minibatches (N/B on the data term). It reports
test error and mean test log predictive probability on the 10,000 test images, and the wall time
per epoch. Data: Debian's dataset-fashion-mnist (default /usr/share/datasets/fashion-mnist).

Methods: vbp (variance backpropagation, Taylor-approximated E[logsumexp]), mfvi (Monte Carlo,
local reparameterisation), vardrop (variational dropout with a Gaussian prior), dvi (closed-form
ReLU moments).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "epochs", "batch", "samples", "moment-samples", "conv1", "conv2", "hidden"),
				intsAtLeast(0, "train", "test"), positiveFloats("lr", "prior-prec")); err != nil {
				return err
			}
			var err error
			if cfg.Methods, err = parseMethods(cmd, methods); err != nil {
				return err
			}
			cfg.Dir, _ = datadir.FashionMNIST(cfg.Dir)
			cfg.Progress = cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunFMNIST(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&methods, "methods", "vbp,mfvi,vardrop", "comma-separated methods: vbp, mfvi, vardrop, dvi")
	f.IntVar(&cfg.Epochs, "epochs", 100, "epochs per fit (the paper: 100)")
	f.IntVar(&cfg.Batch, "batch", 128, "minibatch size (the paper's is not reported)")
	f.IntVar(&cfg.Train, "train", 0, "train on the first N training images (0: all 60,000)")
	f.IntVar(&cfg.Test, "test", 0, "evaluate on the first N test images (0: all 10,000)")
	f.Float64Var(&cfg.LR, "lr", 0.001, "Adam step size")
	f.Float64Var(&cfg.PriorPrec, "prior-prec", 100, "prior precision α of N(0, 1/α)")
	f.IntVar(&cfg.Samples, "samples", 10, "predictive forward passes for mfvi and vardrop")
	f.IntVar(&cfg.MomentSamples, "moment-samples", 100, "predictive logit draws from N(E[f], var[f]) for vbp and dvi")
	f.IntVar(&cfg.Conv1, "conv1", 20, "channels of the first convolution")
	f.IntVar(&cfg.Conv2, "conv2", 50, "channels of the second convolution")
	f.IntVar(&cfg.Hidden, "hidden", 500, "width of the hidden dense layer")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of initialisation, shuffling, noise and prediction")
	f.StringVar(&cfg.Dir, "data", "", datadir.FashionMNISTHelp)
	f.StringVar(&out, "out", "", "write the markdown report to FILE instead of stdout (bench/results/fmnist.md)")
	return cmd
}
