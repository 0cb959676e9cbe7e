package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchAPOVIBaselinesCmd() *cobra.Command {
	var (
		cfg                bench.APOVIBaselinesConfig
		out                string
		quick              bool
		maxIter1D, maxIter int
	)
	cmd := &cobra.Command{
		Use:   "apovi-baselines",
		Short: "The APOVI thesis's baselines: linear interpolation and the grid ConvCNP on MNIST (E3), the 1-D ConvCNP on SE-GP data (E2)",
		Long: `vigo bench apovi-baselines runs the baselines of Rochussen (2023, arXiv:2309.03018) that
vigo bench apovi compares APOVI with: on MNIST-10k image completion (Table 2), linear
interpolation (exact Delaunay + barycentric on the grey-scale context, NaN outside the hull
counted 1.0) on the ten fixed test digits and the on-grid ConvCNP trained on |Ξ| images; on
SE-GP meta-datasets (Figures 4–5), the off-the-grid ConvCNP at |Ξ| ∈ {1, 100}. Protocol and
code conventions: ../shared/docs/apovi.md. --channels below 256 and the iteration caps are the
budget options; the report states them. --quick is a smoke run of a few seconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "reps", "channels", "mlp-width", "batch-image", "batch-1d", "held-out"),
				intsAtLeast(0, "max-iter", "max-iter-1d", "pool-reps")); err != nil {
				return err
			}
			switch cfg.Image.Dataset {
			case "mnist-10k":
				cfg.Image.Dataset = "MNIST-10k"
				if cfg.Image.Dir = datadir.MNIST10k(cfg.Image.Dir); cfg.Image.Dir == "" {
					return fmt.Errorf("bench apovi-baselines: --data not given and no ../shared beside the checkout")
				}
			case "fashion-mnist":
				cfg.Image.Dataset = "Fashion-MNIST"
				cfg.Image.Dir, _ = datadir.FashionMNIST(cfg.Image.Dir)
			default:
				return fmt.Errorf("bench apovi-baselines: --dataset %q: want mnist-10k or fashion-mnist", cfg.Image.Dataset)
			}
			cfg.Image.MaxIter, cfg.OneD.MaxIter = maxIter, maxIter1D
			if quick {
				cfg.Image.MaxIter, cfg.OneD.MaxIter = 3, 3
				cfg.Image.Reps, cfg.Image.Model.Channels, cfg.Image.Model.MLPWidth = 1, 8, 8
				cfg.OneD.HeldOut = 5
			}
			cfg.OneD.Seed = cfg.Image.Seed
			poolReps := cfg.Image.PoolReps
			if poolReps == 0 {
				poolReps = cfg.Image.Reps
			}
			var parts []string
			if !cfg.SkipImage {
				parts = append(parts, fmt.Sprintf("grid ConvCNP %d channels, MLP width %d, cap %d iterations, %d repetitions (%d for the whole pool; the thesis: 256 channels, 10,000 iterations)",
					cfg.Image.Model.Channels, cfg.Image.Model.MLPWidth, cfg.Image.MaxIter, cfg.Image.Reps, poolReps))
			}
			if !cfg.Skip1D {
				parts = append(parts, fmt.Sprintf("1-D ConvCNP cap %d iterations (the thesis: 10,000)", cfg.OneD.MaxIter))
			}
			cfg.Budget = strings.Join(parts, "; ") + "; one goroutine"
			cfg.Image.Progress, cfg.OneD.Progress = cmd.ErrOrStderr(), cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunAPOVIBaselines(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Image.Dataset, "dataset", "mnist-10k", "image data set: mnist-10k or fashion-mnist (the first ten test-split images; the 60,000 training images as the pool)")
	f.StringVar(&cfg.Image.Dir, "data", "", "the image data directory (default ../shared/data/mnist-10k beside the checkout; for fashion-mnist "+datadir.FashionMNISTHelp[len("directory of the Fashion-MNIST IDX .gz files "):]+")")
	f.IntSliceVar(&cfg.Image.Sizes, "sizes", []int{10}, "image training-set sizes |Ξ| (0: the whole 9,990-image pool)")
	f.IntVar(&cfg.Image.Reps, "reps", 3, "training repetitions per image size (the thesis: 3)")
	f.IntVar(&cfg.Image.PoolReps, "pool-reps", 0, "repetitions for the whole-pool size 0 (default --reps)")
	f.IntVar(&cfg.Image.Model.Channels, "channels", 256, "grid ConvCNP channels (the thesis: 256)")
	f.IntVar(&cfg.Image.Model.MLPWidth, "mlp-width", 128, "grid ConvCNP output-MLP width (the thesis: 128)")
	f.IntVar(&cfg.Image.Batch, "batch-image", 10, "images per iteration (the thesis: 10)")
	f.IntVar(&maxIter, "max-iter", 10000, "grid ConvCNP iteration cap (the thesis: 10,000; early stopping 600/100/100)")
	f.IntSliceVar(&cfg.OneD.Sizes, "sizes-1d", []int{1, 100}, "1-D meta-dataset sizes |Ξ|")
	f.IntVar(&cfg.OneD.Batch, "batch-1d", 5, "1-D datasets per iteration (the thesis: 5)")
	f.IntVar(&maxIter1D, "max-iter-1d", 10000, "1-D ConvCNP iteration cap (the thesis: 10,000; early stopping 1000/200/200)")
	f.IntVar(&cfg.OneD.HeldOut, "held-out", 100, "fresh SE-GP datasets for the 1-D held-out loss")
	f.Uint64Var(&cfg.Image.MaskSeed, "mask-seed", 0, "seed of the test and training masks")
	f.Uint64Var(&cfg.Image.Seed, "seed", 1, "seed of data, initialisation and shuffling")
	f.BoolVar(&cfg.Skip1D, "skip-1d", false, "skip the 1-D ConvCNP (E2)")
	f.BoolVar(&cfg.SkipImage, "skip-image", false, "skip the image baselines (E3)")
	f.BoolVar(&cfg.Image.SkipConvCNP, "linear-only", false, "images: linear interpolation only")
	f.BoolVar(&quick, "quick", false, "smoke run: 3 iterations, tiny ConvCNP, 1 repetition")
	f.StringVar(&out, "out", "", "write the markdown report to FILE instead of stdout (bench/results/apovi_baselines.md)")
	return cmd
}
