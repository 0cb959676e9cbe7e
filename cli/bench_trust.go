package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
	"github.com/vigo-bayes/vigo/x/bfvi"
)

// trustQuick are the posteriors of vigo bench trust --quick.
var trustQuick = []string{"gmix-d2", "e2-cauchy"}

func newBenchTrustCmd() *cobra.Command {
	var (
		out, jsonOut, compare, label, posteriors, pdb, full string
		seeds                                               int
		quick                                               bool
	)
	cmd := &cobra.Command{
		Use:   "trust",
		Short: "Does the verdict of vigo fit reassure wrongly? Multimodal and badly started posteriors",
		Long: `vigo bench trust runs the fits a user runs — vigo fit with its defaults (mean field) and
vigo fit --family auto, built by this command line's own recipe code — with seeds 1..N on
multimodal and local-mode posteriors (posteriordb's hmm_example, low_dim_gauss_mix and
bball_drive_event_1-hmm_drive_1, eight schools centred, the BF-VI paper's bimodal Cauchy E2)
and synthetic ones whose log Z and exact draws are known (Gaussian mixtures with the major
mode far from z = 0, a local mode at z = 0, a banana, a sinusoid's frequency). For each fit it
records the verdict vigo fit prints, W1/sd against the reference draws, the log Z error of the
ELBO and of importance sampling, wall time and gradients, and flags a false reassurance: a
reliable or usable verdict with W1/sd > 0.1.

--json writes the raw runs (with --label); --compare FILE[,FILE…] puts earlier --json runs
(e.g. the "before" of a change) in the same tables, first. --quick: ` + strings.Join(trustQuick, ", ") + `, 1 seed.

Posteriors: ` + strings.Join(trustPosteriorNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "seeds")); err != nil {
				return err
			}
			if err := checkOutput(cmd, "json", jsonOut); err != nil {
				return err
			}
			var earlier []*bench.TrustSet
			for _, c := range splitList(compare) {
				s, err := bench.LoadTrustSet(c)
				if err != nil {
					return fmt.Errorf("bench trust: --compare: %w", err)
				}
				earlier = append(earlier, s)
			}
			names := trustPosteriorNames()
			switch {
			case quick && cmd.Flags().Changed("posteriors"):
				return fmt.Errorf("bench trust: --quick and --posteriors: give one")
			case quick:
				names = trustQuick
				if !cmd.Flags().Changed("seeds") {
					seeds = 1
				}
			case posteriors != "all":
				names = splitList(posteriors)
			}
			posts, err := trustPosteriors(names, pdb, full)
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			cfg := bench.TrustConfig{Posteriors: posts, Methods: trustMethods(), Seeds: seeds,
				Progress: func(r bench.TrustRun) { fmt.Fprintln(errw, r.ProgressLine()) }}
			return runBench(cmd, out, func(ctx context.Context) (report, error) {
				h := newHeader()
				set, err := bench.RunTrust(ctx, label, cfg)
				if err != nil {
					return nil, err
				}
				h.Done()
				set.Command, set.Commit, set.Date, set.Wall = h.Command, h.Commit, h.Date.UTC().Format("2006-01-02 15:04 UTC"), jfloatOf(h.Wall.Seconds())
				set.Load = h.LoadStart + " → " + h.LoadEnd
				if jsonOut != "" {
					if err := writeFile(jsonOut, set.JSON); err != nil {
						return nil, fmt.Errorf("bench trust: --json %s: %w", jsonOut, err)
					}
					fmt.Fprintln(errw, "wrote", jsonOut)
				}
				return &bench.TrustReport{Sets: append(earlier, set), Posteriors: posts}, nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", `write the markdown to FILE instead of stdout (the committed table: bench/results/trust.md)`)
	f.StringVar(&jsonOut, "json", "", "also write the raw runs as JSON to FILE (e.g. bench/results/trust/before.json)")
	f.StringVar(&compare, "compare", "", "earlier --json files, comma-separated, whose runs the tables show first (before/after)")
	f.StringVar(&label, "label", "this run", `the label of this run's rows ("before", "after")`)
	f.IntVar(&seeds, "seeds", 3, "seeds 1..N per posterior and method")
	f.BoolVar(&quick, "quick", false, "smoke test: "+strings.Join(trustQuick, ", ")+", 1 seed")
	f.StringVar(&posteriors, "posteriors", "all", "all, or comma-separated names (see above)")
	f.StringVar(&pdb, "posteriordb", "", datadir.PosteriorDBHelp)
	f.StringVar(&full, "posteriordb-full", "", datadir.PosteriorDBFullHelp)
	return cmd
}

// jfloatOf converts for TrustSet's wall time.
func jfloatOf(x float64) bench.JFloat { return bench.JFloat(x) }

// trustPosteriorNames lists the posteriors of vigo bench trust in run order.
func trustPosteriorNames() []string {
	return []string{"e2-cauchy", "gmix-d2", "gmix-d10", "localmode-d4", "banana", "sinusoid", "eight_schools-eight_schools_centered", "hmm_example-hmm_example",
		"low_dim_gauss_mix-low_dim_gauss_mix", "bball_drive_event_1-hmm_drive_1"}
}

// trustPosteriors builds the named posteriors; pdb and full locate posteriordb's public and
// full sets when a posterior needs them.
func trustPosteriors(names []string, pdb, full string) ([]bench.TrustPosterior, error) {
	var out []bench.TrustPosterior
	synth := bench.SyntheticPosteriors()
	for _, n := range names {
		if i := slices.IndexFunc(synth, func(p bench.TrustPosterior) bool { return p.Name == n }); i >= 0 {
			out = append(out, synth[i])
			continue
		}
		var (
			p   bench.TrustPosterior
			err error
		)
		switch n {
		case "e2-cauchy":
			tg := bfvi.CauchyLocation()
			p = bench.Target1D(n, "BF-VI paper E2: y_i ~ Cauchy(ξ, 0.5) for its 6 points, ξ ~ N(0, 1) (bimodal; normalised by x/bfvi's trapezoid)",
				tg.LogP, tg.DLogP, -10, 10, 200000)
		case "eight_schools-eight_schools_centered":
			p = bench.EightSchoolsCentered()
		case "hmm_example-hmm_example", "low_dim_gauss_mix-low_dim_gauss_mix":
			var d string
			if d, _, err = datadir.PosteriorDB(pdb); err == nil {
				p, err = bench.ZooTrustPosterior(strings.SplitN(n, "-", 2)[0], d)
			}
		case "bball_drive_event_1-hmm_drive_1":
			var d string
			if d, err = datadir.PosteriorDBFull(full); err == nil {
				p, err = bench.BBallTrustPosterior(d)
			}
		default:
			return nil, fmt.Errorf("bench trust: --posteriors: unknown posterior %q (have %s)", n, strings.Join(trustPosteriorNames(), ", "))
		}
		if err != nil {
			return nil, fmt.Errorf("bench trust: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// trustFitFlags are vigo fit's flags at their defaults (newFitCmd) with the seed given: what
// a user who types `vigo fit --seed S` (or `--family auto`) runs. TestTrustFitFlagsDefaults
// keeps them in step with newFitCmd.
func trustFitFlags(family string, seed uint64) fitFlags {
	return fitFlags{family: family, seed: seed, draws: 1000, out: "vigo_out", workers: 1}
}

// trustMethods are the two fits of vigo bench trust, each built by vigo fit's own code
// (fitRecipe, autoStages) and run as runFit runs it (fit.Run, fit.Auto and AutoResult.Best),
// with one worker (results do not depend on it).
func trustMethods() []bench.TrustMethod {
	return []bench.TrustMethod{
		{Name: "default", About: "`vigo fit --seed S`: mean field with the command line's defaults (fitRecipe)",
			Fit: func(ctx context.Context, tg model.Target, seed uint64) (bench.TrustFit, error) {
				f := trustFitFlags(fit.KindMeanField, seed)
				r, err := fitRecipe(f, nil)
				if err != nil {
					return bench.TrustFit{}, err
				}
				res, err := fit.Run(ctx, tg, r, fit.WithWorkers(f.workers))
				if res == nil {
					return bench.TrustFit{}, err
				}
				return trustFit(res, res.GradEvals), err
			}},
		{Name: "auto", About: "`vigo fit --family auto --seed S` (autoStages, fit.Auto, AutoResult.Best)",
			Fit: func(ctx context.Context, tg model.Target, seed uint64) (bench.TrustFit, error) {
				f := trustFitFlags(familyAuto, seed)
				st, err := autoStages(f, nil)
				if err != nil {
					return bench.TrustFit{}, err
				}
				a, err := fit.Auto(ctx, tg, fit.AutoConfig{Stages: st, Budget: f.budget}, fit.WithWorkers(f.workers))
				if a == nil || a.Best() == nil {
					return bench.TrustFit{}, err
				}
				return trustFit(a.Best(), a.GradEvals), err
			}},
	}
}

// trustFit is a fit's result for the trust benchmark, with fit.Assess's judgement of whether
// the verdict vigo fit prints reassures.
func trustFit(res *fit.Result, grads int) bench.TrustFit {
	reassuring := fit.Assess(res).Reassuring
	return bench.TrustFit{Result: res, GradEvals: grads, Family: output.FamilyDesc(res), Reassuring: &reassuring}
}
