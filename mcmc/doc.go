// Package mcmc is vigo's reference sampler: Hamiltonian Monte Carlo on a model.Target over
// ℝ^D (Stan's "diag_e"/"dense_e" Euclidean HMC), as the No-U-Turn sampler or with a fixed
// number of leapfrog steps, with Stan's warmup: dual-averaging step-size adaptation and a
// windowed estimate of the inverse metric. The metric is Stan's diagonal (Diag) or dense
// (Dense) one, or by default Auto, which takes the dense form in the windows whose draws are
// strongly correlated and the diagonal one otherwise (see MetricKind); FisherDiag is nutpie's
// diagonal from draws and gradients. On the posteriordb posteriors Auto gives 1.3–60 times
// Stan's minimum bulk ESS per gradient where the posterior is correlated and Stan's where it
// is not (bench/results/stan_nuts.md).
//
// The Hamiltonian is H(q, p) = −log π(q) + ½ pᵀM⁻¹p with p ~ N(0, M); the integrator is the
// leapfrog (velocity Verlet) scheme, second order in the step size ε. NUTS follows Stan's
// base_nuts (Betancourt 2017, appendix A): a trajectory doubled in a random direction up to a
// maximum tree depth, states drawn multinomially with weights e^{−H} — biased progressive
// sampling between the old trajectory and a new subtree, uniform progressive sampling inside
// subtrees — and the generalised no-U-turn criterion p♯₋·ρ > 0 and p♯₊·ρ > 0 (p♯ = M⁻¹p, ρ the
// summed momenta) checked on every merged subtree and, as Stan's base_nuts does since 2020
// (present in the StanHeaders 2.21.0-7 of the rstan measured in bench/results/stan_nuts.md),
// across the boundary of the two halves of each merge. A leaf whose energy error exceeds 1000 is a
// divergence and ends the trajectory.
//
// Chains run in parallel goroutines, each with its own ad.Tape and random stream
// rng.New(seed, chain), so the draws depend only on the seed and not on GOMAXPROCS or timing.
// Sample returns when every chain is done or the context is cancelled; a cancelled run
// returns the draws made so far together with ctx.Err().
//
// Cost: one gradient of the target per leapfrog step (2^depth per NUTS transition, at most
// 2^MaxDepth), plus O(D) (diagonal) or O(D²) (dense metric) per step. A transition allocates
// nothing in steady state when the target's gradient does not.
//
// References:
//   - Hoffman & Gelman (2014), "The No-U-Turn sampler", JMLR 15: dual averaging (§3.2).
//   - Betancourt (2017), "A conceptual introduction to Hamiltonian Monte Carlo",
//     arXiv:1701.02434: multinomial sampling, the generalised no-U-turn criterion.
//   - Betancourt (2016), "Diagnosing suboptimal cotangent disintegrations in Hamiltonian Monte
//     Carlo", arXiv:1604.00695: E-BFMI.
//   - Stan Reference Manual, "MCMC sampling": windowed adaptation (75/25/50 iterations).
//   - Seyboldt, Carlson & Carpenter (2025), "Preconditioning Hamiltonian Monte Carlo by
//     minimizing Fisher divergence", arXiv: FisherDiag.
//   - Marchenko & Pastur (1967): the spread of sample-covariance eigenvalues Auto compares with.
package mcmc
