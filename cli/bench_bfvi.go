package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/x/bfvi"
)

func newBenchBFVICmd() *cobra.Command {
	var (
		out, exps  string
		cfg        bfvi.Config
		bar        bool
		paperSteps int
		firstSeed  int
	)
	cmd := &cobra.Command{
		Use:   "bfvi",
		Short: "The BF-VI paper's experiments (Dürr et al. 2024): the paper's numbers beside ours",
		Long: `vigo bench bfvi reruns the experiments of the Bernstein-flow VI paper (Dürr, Hörling,
Dold, Kovylov & Sick 2024) with the paper's numbers beside ours: the one-dimensional KL
experiments e1 (Bernoulli–Beta, KL against the degree M) and e2 (bimodal Cauchy location, KL
against M for the three input maps and linear tails) at the paper's settings (--draws-1d draws
per step, --seeds-1d seeds for e2), and the k̂ experiments toy regression (e3), NN regression
(e4), eight schools NCP and CP (e5) and diamonds (e6): full-rank Gaussian and BF-VI, each over
--restarts restarts with the paper's aggregation (PSIS k̂ per run, bootstrap variance,
Rubin-combined 90% interval). Select experiments with --exp (e.g. --exp e1,e2). It writes
markdown to --out (default bench/results/bfvi.md); "-" writes to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "restarts", "draws", "boot", "degree", "draws-1d", "seeds-1d", "hidden", "affine-hidden"),
				intsAtLeast(0, "max-iter", "iwelbo-k", "default-degree", "layers", "workers"),
				floatsIn(0, math.Inf(1), true, false, "non-negative and finite (0: a standard normal base)", "base-df")); err != nil {
				return err
			}
			cfg.Experiments = splitList(exps)
			if d, _, err := datadir.PosteriorDB(cfg.Dir); err == nil {
				cfg.Dir = d
			} else if slices.Contains(cfg.Experiments, "e6") {
				return fmt.Errorf("bench bfvi: e6 (diamonds): %w", err)
			}
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(s string) { fmt.Fprintln(errw, s) }
			if bar {
				return runBenchBFVIBar(cmd, out, cfg, paperSteps, firstSeed)
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bfvi.Run(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "bench/results/bfvi.md", `markdown file to write ("-": stdout)`)
	f.StringVar(&exps, "exp", strings.Join(bfvi.DefaultExperiments, ","), "comma-separated experiments ("+strings.Join(bfvi.Experiments, ", ")+
		"; e5p: eight schools on the paper's Jacobian-free, improper target; e5s: centred eight schools with log τ as the last coordinate)")
	f.StringVar(&exps, "experiments", strings.Join(bfvi.DefaultExperiments, ","), "same as --exp")
	f.IntVar(&cfg.Restarts, "restarts", 5, "restarts per method (the paper: 5)")
	f.IntVar(&cfg.Draws, "draws", 10000, "draws per run for k̂")
	f.IntVar(&cfg.Boot, "boot", 200, "bootstrap resamples per run (the paper: 1000)")
	f.IntVar(&cfg.MaxIter, "max-iter", 0, "iteration cap per fit stage (0: 20000, diamonds 3000)")
	f.IntVar(&cfg.Degree, "degree", 49, "Bernstein degree M of the flow (the paper: 49)")
	f.IntVar(&cfg.K, "iwelbo-k", 0, "train the flows on the IWELBO with this many importance samples per group (0: the ELBO, as the paper)")
	f.StringVar(&cfg.Activation, "activation", "", "MADE activation of vigo's default Bernstein flow: tanh (default), linear or relu")
	f.IntSliceVar(&cfg.Hidden, "hidden", nil, "hidden layer sizes of vigo's default flow's MADE (default 10,10)")
	f.IntVar(&cfg.DefaultDegree, "default-degree", 0, "Bernstein degree M of vigo's default flow (0: 20)")
	f.IntVar(&cfg.Layers, "layers", 0, "Bernstein AR layers of vigo's default flow, alternating order (0: 1)")
	f.StringVar(&cfg.Affine, "affine", "", "affine autoregressive (IAF) layer in vigo's default Bernstein flow, native order: last (after the Bernstein layers, closest to z), first, or none (default)")
	f.IntSliceVar(&cfg.AffineHidden, "affine-hidden", nil, "hidden layer sizes of the --affine layer's MADE (default 32,32)")
	f.StringVar(&cfg.Kind, "flow-kind", "", "replace vigo's default Bernstein flow by the standard flow of this kind: maf or realnvp (fit.NewFlowFamily with --layers, --hidden, --activation; default bernstein)")
	f.Float64Var(&cfg.BaseDF, "base-df", 0, "Student-t base with this many degrees of freedom for vigo's default Bernstein flow (0: standard normal)")
	f.BoolVar(&cfg.SkipPaper, "skip-paper", false, "fit only the full-rank Gaussian and vigo's default flow (not the paper's bounded flow; e5p ignores it)")
	f.IntVar(&cfg.Workers, "workers", 0, "independent jobs (E1, E2, restarts) run at a time (0: GOMAXPROCS); results do not depend on it")
	f.IntVar(&cfg.Draws1D, "draws-1d", 10000, "e1/e2: draws per gradient step (the paper: 10000)")
	f.IntVar(&cfg.Seeds1D, "seeds-1d", 3, "e2: seeds 2, 4, … (the paper: 20)")
	f.StringVar(&cfg.Dir, "posteriordb", "", datadir.PosteriorDBHelp+" (e6 and --e5-bar)")
	f.BoolVar(&bar, "e5-bar", false, "instead of the experiments: E5 with the paper's recipe (fit.BFVIPaperRecipe) on the paper's and the proper eight-schools targets beside vigo's default recipe, judged by the restated bar (k̂ on ≥ 50,000 draws, ELBO, W1/sd and the reference mass outside q's range; --restarts, --draws (default 50000), --boot, --workers apply; --max-iter caps vigo's default recipe)")
	f.IntVar(&paperSteps, "paper-steps", 0, "--e5-bar: steps of the paper's recipe (0: the paper's 100000)")
	f.IntVar(&firstSeed, "first-seed", 1, "--e5-bar: seed of the first restart (restarts use seeds first-seed, first-seed+1, …)")
	return cmd
}

// runBenchBFVIBar runs vigo bench bfvi --e5-bar: bfvi.RunBar with the shared flags.
func runBenchBFVIBar(cmd *cobra.Command, out string, cfg bfvi.Config, paperSteps, firstSeed int) error {
	if paperSteps < 0 {
		return fmt.Errorf("bench bfvi: --paper-steps %d: want ≥ 0 (0: the paper's)", paperSteps)
	}
	if firstSeed < 1 {
		return fmt.Errorf("bench bfvi: --first-seed %d: want ≥ 1", firstSeed)
	}
	if cfg.Dir == "" {
		return fmt.Errorf("bench bfvi: --e5-bar needs the posteriordb reference draws: pass --posteriordb DIR")
	}
	bc := bfvi.BarConfig{Restarts: cfg.Restarts, FirstSeed: firstSeed, Boot: cfg.Boot, PaperSteps: paperSteps, DefaultMaxIter: cfg.MaxIter, Dir: cfg.Dir,
		Workers: cfg.Workers, Progress: cfg.Progress}
	if cmd.Flags().Changed("draws") {
		bc.Draws = cfg.Draws
	}
	// Like runBench, but a cancelled run still writes the rows of the fits that ended (the
	// report says it is partial), then returns the error.
	if err := checkOutput(cmd, "out", out); err != nil {
		return err
	}
	h := newHeader()
	rep, err := bfvi.RunBar(cmd.Context(), bc)
	if rep == nil {
		return err
	}
	h.Done()
	if werr := writeReport(cmd, out, func(w io.Writer) error { return rep.Markdown(w, h) }); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		return fmt.Errorf("bench bfvi: --e5-bar: %w", err)
	}
	return nil
}
