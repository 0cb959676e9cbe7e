package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchMISELBOCmd() *cobra.Command {
	var (
		cfg        bench.MISELBOConfig
		parts, out string
		noPlots    bool
	)
	cmd := &cobra.Command{
		Use:   "miselbo",
		Short: "The MISELBO paper's experiments: Gaussian ensembles on U1/U2, Δ_L against the JSD, VAE encoder ensembles on MNIST",
		Long: `vigo bench miselbo reruns the experiments of Kviman et al. (2022), "Multiple importance
sampling ELBO and deep ensembles of variational approximations" (papers.md §5):

  toy2d  §5.1.1: S = 2 (U1) and 3 (U2) Gaussian members of the 2-D targets of Rezende &
         Mohamed; the mixture's KL against the members' average KL, and the JSD;
  delta  §5.1.2: Δ_L = MISELBO_L − mean IWELBO_L against the JSD of two 1-D Gaussians at
         separations 0…20, L ∈ {1, 2, 10, 100, 1000};
  vae    §5.2: a small MLP VAE on binarised MNIST (../shared/data/mnist-10k: 9,000 train,
         1,000 test) with 5 encoders sharing one decoder; test NLL by IWELBO and MISELBO.

§5.3 (phylogenetics) has no data here. --quick shrinks everything to a smoke run of well
under a minute. PNG figures go beside the markdown, in <out without .md>/ (--no-plots: none).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(0, "train", "test", "hidden", "latent", "epochs", "extra-epochs", "batch", "members")); err != nil {
				return err
			}
			cfg.Parts = splitList(parts)
			if len(cfg.Parts) == 0 {
				return fmt.Errorf("bench miselbo: --parts: no parts (known: %s)", strings.Join(bench.MISELBOParts, ", "))
			}
			cfg.MNIST = datadir.MNIST10k(cfg.MNIST)
			cfg.PlotDir = plotDir(out, noPlots)
			cfg.Progress = cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunMISELBO(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&parts, "parts", strings.Join(bench.MISELBOParts, ","), "comma-separated experiments: "+strings.Join(bench.MISELBOParts, ", "))
	f.BoolVar(&cfg.Quick, "quick", false, "smoke run: small draws, steps, epochs and test set")
	f.StringVar(&cfg.MNIST, "mnist", "", "directory of the MNIST IDX files (default ../shared/data/mnist-10k beside the checkout)")
	f.StringVar(&out, "out", "bench/results/miselbo.md", `markdown file to write ("-": stdout)`)
	f.BoolVar(&noPlots, "no-plots", false, "do not write the PNG figures")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of every fit, draw and initialisation")
	f.IntVar(&cfg.VAE.Train, "train", 0, "VAE training images (0: 9,000; quick 1,000)")
	f.IntVar(&cfg.VAE.Test, "test", 0, "VAE test images, after the training ones (0: 1,000; quick 100)")
	f.IntVar(&cfg.VAE.Hidden, "hidden", 0, "VAE hidden width (0: 200)")
	f.IntVar(&cfg.VAE.Latent, "latent", 0, "VAE latent dimension (0: 20)")
	f.IntVar(&cfg.VAE.Epochs, "epochs", 0, "epochs of encoder 1 with the decoder (0: 15; quick 1)")
	f.IntVar(&cfg.VAE.ExtraEpochs, "extra-epochs", 0, "epochs of each extra encoder, decoder fixed (0: 8; quick 1)")
	f.IntVar(&cfg.VAE.Batch, "batch", 0, "VAE minibatch (0: 100)")
	f.IntVar(&cfg.VAE.Members, "members", 0, "VAE encoders (0: 5)")
	return cmd
}
