package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
)

func newBenchDNCPCmd() *cobra.Command {
	var (
		out string
		cfg bench.DNCPConfig
	)
	cmd := &cobra.Command{
		Use:   "dncp",
		Short: "Centred vs non-centred parameterisations under HMC (Kingma & Welling 2014)",
		Long: `vigo bench dncp reruns the reparameterisation study of Kingma & Welling (2014): the
two-latent Gaussian toy's posterior correlations in centred (CP) and differentiable
non-centred (DNCP) form, sampled and analytic, and static HMC (10 leapfrog steps, step size
tuned to acceptance 0.9, 1000 burn-in, 4000 kept) on a nonlinear tanh dynamic Bayesian network
for several σ_z, reporting ESS for CP, DNCP and the 50/50 mixture proposal. It writes
markdown to --out (default bench/results/dncp.md); "-" writes to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFlags(cmd, intsAtLeast(1, "T", "K", "P", "steps", "warmup", "draws", "chains"),
				positiveFloats("sigmas"), unitFloats("accept", "prob")); err != nil {
				return err
			}
			return runBench(cmd, out, func(ctx context.Context) (report, error) { return bench.RunDNCP(ctx, cfg) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "bench/results/dncp.md", `markdown file to write ("-": stdout)`)
	f.Float64SliceVar(&cfg.Sigmas, "sigmas", []float64{0.01, 0.03, 0.1, 0.3, 1, 3}, "σ_z values of the DBN")
	f.IntVar(&cfg.T, "T", 10, "DBN time steps")
	f.IntVar(&cfg.K, "K", 3, "DBN latents per time step")
	f.IntVar(&cfg.P, "P", 10, "DBN binary observations per time step")
	f.Uint64Var(&cfg.ParamSeed, "param-seed", 1, "seed of the DBN's parameters and simulated data")
	f.IntVar(&cfg.Steps, "steps", 10, "leapfrog steps per HMC transition")
	f.Float64Var(&cfg.TargetAccept, "accept", 0.9, "target mean acceptance of the step-size adaptation")
	f.IntVar(&cfg.Warmup, "warmup", 1000, "burn-in iterations per chain")
	f.IntVar(&cfg.Draws, "draws", 4000, "kept draws per chain")
	f.IntVar(&cfg.Chains, "chains", 4, "chains")
	f.Uint64Var(&cfg.Seed, "seed", 1, "sampler seed")
	f.Float64Var(&cfg.Prob, "prob", 0.5, "probability of a CP transition in the mixture")
	return cmd
}
