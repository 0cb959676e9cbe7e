package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func newBenchReparamCmd() *cobra.Command {
	var (
		out, full string
		noStan    bool
		cfg       bench.ReparamConfig
	)
	cmd := &cobra.Command{
		Use:   "reparam",
		Short: "Centred, non-centred, mixture and automatic parameterisations under NUTS and VI",
		Long: `vigo bench reparam writes every problem once as a reparam.Spec (location–scale latent
groups declared) and runs it centred (CP), non-centred (NCP), with Kingma & Welling's 50/50
mixture proposal, with the form chosen by the paper's criterion at a NUTS pilot (auto (a),
reparam.Spec.Choose) and with VIP's learned partial centring (auto (b),
reparam.Spec.LearnLambda): NUTS min ESS per gradient and mean-field VI W1/sd and k̂, with wall
times. Problems: eight schools, the two-latent toy across σ_z/σ_x, the tanh DBN across σ_z and
centred hierarchical posteriors of posteriordb-full compiled by package stan. It writes
markdown to --out (default bench/results/reparam.md); "-" writes to stdout. Progress goes to
stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "warmup", "draws", "chains", "noise-seeds", "vip-steps", "T", "K", "P"),
				positiveFloats("dbn-sigmas")); err != nil {
				return err
			}
			if !noStan {
				var err error
				if cfg.Full, err = datadir.PosteriorDBFull(full); err != nil {
					return err
				}
			}
			cfg.Progress = func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), s) }
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunReparam(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "bench/results/reparam.md", `markdown file to write ("-": stdout)`)
	f.StringVar(&full, "posteriordb-full", "", datadir.PosteriorDBFullHelp)
	f.BoolVar(&noStan, "no-stan", false, "skip the posteriordb-full posteriors")
	f.StringSliceVar(&cfg.Posteriors, "posteriors", bench.DefaultReparamPosteriors, "posteriordb-full posteriors (centred programs with a declared group)")
	f.IntVar(&cfg.Warmup, "warmup", 500, "NUTS warmup iterations per chain")
	f.IntVar(&cfg.Draws, "draws", 500, "NUTS kept draws per chain")
	f.IntVar(&cfg.Chains, "chains", 2, "NUTS chains")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of every run")
	f.IntVar(&cfg.NoiseSeeds, "noise-seeds", 3, "seeds of the CP/NCP reruns that measure the noise")
	f.IntVar(&cfg.VIPSteps, "vip-steps", 1000, "VIP joint Adam steps per start")
	f.IntVar(&cfg.VIStarts, "vi-starts", 0, "Laplace mode searches of every VI fit (0: the recipe's default)")
	f.Float64SliceVar(&cfg.DBNSigmas, "dbn-sigmas", []float64{0.03, 0.3, 3}, "σ_z values of the tanh DBN")
	f.IntVar(&cfg.T, "T", 10, "DBN time steps")
	f.IntVar(&cfg.K, "K", 3, "DBN latents per time step")
	f.IntVar(&cfg.P, "P", 10, "DBN binary observations per time step")
	return cmd
}
