package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchAPOVICmd() *cobra.Command {
	var (
		cfg        bench.APOVIConfig
		parts, out string
		e3h, e3ih  string
		noPlots    bool
		summary    bool
		e3Regimes  string
	)
	cmd := &cobra.Command{
		Use:   "apovi",
		Short: "The APOVI thesis's experiments: ELBO against |Ξ|, 1-D predictions, MNIST image completion, speed",
		Long: `vigo bench apovi reruns the experiments of Rochussen (2023), "Amortised Inference in
Bayesian Neural Networks" (../shared/docs/apovi.md §5):

  e1     Table 1: total test-set ELBO (S = 100) of APOVI meta-trained on |Ξ| ∈ {1, 2, 5, 10}
         SE-GP datasets, APOVI trained on each test set (|Ξ| = 0) and POVI trained on each
         test set, on 5 fixed test sets;
  e2     Figures 4–6: APOVI and AMFVI at |Ξ| ∈ {1, 100} on an SE-GP test set and the cubic
         set; predictive sd and coverage make AMFVI's over-confidence a number;
  e3     Table 2 (APOVI part): a Bernoulli APOVI trained with NPML on masked MNIST-10k digits
         (|Ξ| = 10 and the whole pool as a stand-in for the large regime), squared error on
         the ten test digits against linear interpolation;
  e3-fashion  the same on Fashion-MNIST (the first ten test-split images; the 60,000
         training images as the large regime);
  speed  vigo predict's forward pass against one POVI training step; one APOVI layer against
         the PyTorch peer bench/peers/apovi_layer.py (needs /usr/bin/python3 with torch and the
         go tool; run from the repository root).

The training budgets are far below the thesis's (see RunAPOVI's defaults and the flags); the
markdown states them beside every number. --quick shrinks everything to a smoke run. PNG
figures go beside the markdown, in <out without .md>/ (--no-plots: none).

--summary runs nothing: it reads the part files beside --out (apovi_e1.md, apovi_e2.md,
apovi_e3*.md, apovi_baselines*.md, apovi_speed.md; see bench.APOVISummaryFiles) and writes
one summary (default bench/results/apovi.md): Table 1, E2's figures and coverage, Table 2 on
MNIST-10k and Fashion-MNIST with the ratios to linear interpolation, and predict against a
POVI step, each number with the part file, command and budget it comes from.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if summary {
				if out == "" || out == "-" {
					return fmt.Errorf("bench apovi: --summary reads the part files beside --out: give --out FILE")
				}
				dir := filepath.Dir(out)
				return runBench(cmd, out, func(context.Context) (report, error) { return bench.APOVISummaryRun(dir) })
			}
			if err := checkFlags(cmd, intsAtLeast(0, "e1-reps", "e1-iters", "e2-iters", "e3-iters", "e3-large")); err != nil {
				return err
			}
			var err error
			if cfg.E3Hidden, err = parseWidths("e3-hidden", e3h); err != nil {
				return err
			}
			if cfg.E3InferenceHidden, err = parseWidths("e3-inference-hidden", e3ih); err != nil {
				return err
			}
			cfg.E3Regimes = splitList(e3Regimes)
			cfg.Parts = splitList(parts)
			if len(cfg.Parts) == 0 {
				return fmt.Errorf("bench apovi: --parts: no parts (known: %s)", strings.Join(bench.APOVIParts, ", "))
			}
			cfg.MNIST = datadir.MNIST10k(cfg.MNIST)
			cfg.FashionMNIST, _ = datadir.FashionMNIST(cfg.FashionMNIST)
			cfg.PlotDir = plotDir(out, noPlots)
			cfg.Progress = cmd.ErrOrStderr()
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunAPOVI(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&parts, "parts", strings.Join(bench.APOVIParts, ","), "comma-separated experiments: "+strings.Join(bench.APOVIParts, ", "))
	f.BoolVar(&cfg.Quick, "quick", false, "smoke run: tiny budgets and networks")
	f.StringVar(&cfg.MNIST, "mnist", "", "directory of the MNIST IDX files (default ../shared/data/mnist-10k beside the checkout)")
	f.StringVar(&cfg.FashionMNIST, "fashion-mnist", "", datadir.FashionMNISTHelp)
	f.StringVar(&e3Regimes, "e3-regimes", "10,large", "E3's regimes, comma-separated: 10 (|Ξ| = 10) and large (the pool or --e3-large images)")
	f.StringVar(&cfg.E3Stop, "e3-stop", "thesis", "E3's stopping rule: thesis (the thesis's rule on the training loss) or validation (held-out squared error on 10 pool images not trained on)")
	f.StringVar(&cfg.Torch, "torch", "bench/peers/apovi_layer.py", `the PyTorch layer peer for the speed part ("": skip it)`)
	f.StringVar(&cfg.RepoDir, "repo", ".", "the repository root, where the speed part runs go test -bench ./apovi")
	f.StringVar(&out, "out", "bench/results/apovi.md", `markdown file to write ("-": stdout)`)
	f.BoolVar(&noPlots, "no-plots", false, "do not write the PNG figures")
	f.BoolVar(&summary, "summary", false, "run nothing: assemble --out from the part files beside it")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of every dataset, mask, initialisation and draw")
	f.IntVar(&cfg.E1Reps, "e1-reps", 0, "E1 repetitions (meta-datasets per |Ξ|; 0: 2, quick 1)")
	f.IntVar(&cfg.E1Iters, "e1-iters", 0, "iteration cap of every E1 training (0: 600; quick 30)")
	f.IntVar(&cfg.E2Iters, "e2-iters", 0, "iteration cap of every E2 training (0: 300; quick 20)")
	f.IntVar(&cfg.E3Iters, "e3-iters", 0, "iteration cap of every E3 training (0: 400; quick 5)")
	f.IntVar(&cfg.E3Large, "e3-large", 0, "training images of E3's large regime (0: the whole pool; quick 40)")
	f.StringVar(&e3h, "e3-hidden", "", "E3's BNN hidden widths, comma-separated (default 20,20,20; quick 8)")
	f.StringVar(&e3ih, "e3-inference-hidden", "", "E3's inference-network hidden widths (default 40,40,40; quick 16)")
	f.BoolVar(&cfg.SkipConvCNP, "no-convcnp", false, "leave the ConvCNP out of e2")
	return cmd
}

// parseWidths parses a comma-separated list of positive widths ("" gives nil: the default).
func parseWidths(flag, s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bench apovi: --%s: %q is not a positive width", flag, f)
		}
		out = append(out, n)
	}
	return out, nil
}
