package fit

// Flow defaults of DefaultRecipe (issue 17), chosen by measurement on eight_schools, garch11
// and gp_pois_regr against the posteriordb reference draws (bench/results/flows.md gives the
// numbers and keeps the ablations): the previous recipe (PreviousFlowRecipe) spent most of its
// gradient evaluations after W1/sd had stopped improving, because its trend rule needs 30
// tracking estimates per step size of 32 draws per step, and a full-rank fit ran first. The
// defaults now:
//
//   - start at the Laplace approximation (WarmNone): the flow starts at the Gaussian the mode
//     search found, in its whitened coordinates, and learns the rest itself; the full-rank
//     stage cost about as much as the whole flow fit now does and did not change the flow's
//     W1/sd beyond its seed-to-seed spread (Auto still warm-starts its flow stages from its
//     own full-rank stage, which it has fitted anyway; AutoStages);
//   - the sticking-the-landing (STL) gradient for every kind (FlowObjective): its variance
//     vanishes as q approaches the posterior, where the plain gradient keeps its score term's;
//     on gp_pois_regr the plain gradient left maf and bernstein 0.3 nats short of the ELBO
//     that W1/sd needs at any step size, stopping rule or structure tried. Its log q at the
//     draws comes from family.DrawScorer (the base score pushed through the flow), so it
//     costs a forward pass and a triangular solve per autoregressive layer, not an inverse;
//   - FlowDraws base draws per step in antithetic pairs (ObjectiveRecipe.Antithetic) for maf
//     and bernstein, FlowDrawsRealNVP independent draws for realnvp (with fewer, some seeds
//     ended at a poor optimum);
//   - bernstein with an affine autoregressive layer after its Bernstein layer
//     (FlowOptions.Affine = AffineLast): conditional scales that change fast with an earlier
//     coordinate (hierarchical scales) come from the affine layer instead of the polynomials'
//     slopes; with it the same evaluations gave a W1/sd 0.01–0.02 lower on all three
//     posteriors;
//   - judge the plateau with the noise rule (RuleNoise) over FlowWindow tracking estimates
//     of FlowEvalSamples draws every 100 steps (maf FlowWindowMAF, realnvp
//     FlowWindowRealNVP): a step-size cut as soon as the window's gain is not significantly
//     above FlowNoiseTol, two cuts; a shorter window stops sooner, and for maf and realnvp it
//     saved a fifth to a third of the steps at a W1/sd within the seed spread, where
//     bernstein lost accuracy with it;
//   - no iterate average (it doubles the tracking cost and did not change W1/sd here);
//   - the best tracked iterate is reported only when fresh draws confirm it (ConfirmBest):
//     the best of many small common-random-number estimates is biased upwards.
//
// maf takes a smaller step size (FlowLRMAF): at FlowLRFlow with 8 draws some seeds ended at a
// poor optimum.
const (
	FlowDraws         = 12    // draws per step of maf and bernstein (antithetic pairs)
	FlowDrawsRealNVP  = 16    // draws per step of realnvp (independent)
	FlowLRFlow        = 0.01  // Adam step size of realnvp and bernstein
	FlowLRMAF         = 0.005 // Adam step size of maf
	FlowWindow        = 10    // tracking estimates in the noise rule's window (bernstein)
	FlowWindowMAF     = 8     // the same for maf
	FlowWindowRealNVP = 8     // the same for realnvp
	FlowEvalSamples   = 128   // draws of one tracking estimate
	FlowNoiseTol      = 0.01  // nats over the window
)

// flowDefaults writes the flow defaults of r.Family.Kind into r, a Gaussian DefaultRecipe.
func flowDefaults(r *Recipe) {
	kind := r.Family.Kind
	r.Family.Flow = &FlowOptions{}
	r.Objective.Estimator, r.Objective.Samples, r.Objective.Antithetic = EstSTL, FlowDraws, true
	window := FlowWindow
	switch kind {
	case KindRealNVP:
		r.Objective.Samples, r.Objective.Antithetic = FlowDrawsRealNVP, false
		window = FlowWindowRealNVP
	case KindMAF:
		window = FlowWindowMAF
	case KindBernstein:
		r.Family.Flow.Affine = AffineLast
	}
	r.Optimizer.LR = FlowLRFlow
	if kind == KindMAF {
		r.Optimizer.LR = FlowLRMAF
	}
	r.Stop = StopRecipe{Rule: RuleNoise, EvalEvery: 100, EvalSamples: FlowEvalSamples, Window: window,
		Tol: FlowNoiseTol, Decays: 2, TrendZ: 1.645, ConfirmBest: true}
	r.WarmStart = WarmNone
}

// The flow settings of PreviousFlowRecipe (DefaultRecipe's flows before issue 17), chosen
// then on the same three posteriors: with Fit's Gaussian defaults (S = 8, LR 0.02, Tol 0.02)
// the half-means rule stopped a flow long before its ELBO stopped rising, and it fired on the
// jitter of the iterates on the BF-VI paper's targets while the flow was still gaining
// (x/bfvi, bench/results/bfvi.md), hence StopTrend on 30 estimates (3,000 steps), S = 32 and
// the moving average of the iterates (bench/results/posteriordb_flows_trend.md). x/bfvi's
// IWELBO rows keep FlowSamples draws per step.
const (
	FlowSamples = 32
	FlowLR      = 0.01
	FlowTol     = 0.002
	FlowAverage = 1000 // steps: time constant of the iterate average
)

// PreviousFlowRecipe returns the recipe DefaultRecipe gave flow kind before issue 17: S =
// FlowSamples, Adam at FlowLR, the trend rule over 30 estimates of 256 draws with tol
// FlowTol, the iterate average over FlowAverage steps, warm-started from a full-rank fit; the
// STL gradient for realnvp, the plain one for maf and bernstein; every flow structure at its
// kind's defaults then (bernstein without the affine layer). vigo bench flows runs it as
// the "before" of each kind. A kind that is not a flow gives DefaultRecipe(kind).
func PreviousFlowRecipe(kind string) Recipe {
	r := DefaultRecipe(kind)
	if !IsFlowKind(kind) {
		return r
	}
	g := DefaultRecipe(KindFullRank)
	r.Family.Flow = &FlowOptions{}
	r.Objective, r.Optimizer, r.Stop = g.Objective, g.Optimizer, g.Stop
	r.Objective.Samples = FlowSamples
	if kind != KindRealNVP {
		r.Objective.Estimator = EstELBO
	}
	r.Optimizer.LR = FlowLR
	r.Stop.Rule, r.Stop.Window, r.Stop.Tol, r.Stop.Average = RuleTrend, 30, FlowTol, FlowAverage
	r.WarmStart = WarmFullRank
	return r
}
