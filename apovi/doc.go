// Package apovi implements amortised inference in Bayesian neural networks after Rochussen
// (2023), "Amortised Inference in Bayesian Neural Networks", MSc thesis, University of
// Cambridge, arXiv:2309.03018, with the conventions of the author's code as recorded in
// ../shared/docs/apovi.md (§1, §2). Three models share one BNN:
//
//   - POVI: the global-inducing-point posterior of Ober & Aitchison (2021), "Global inducing
//     point variational posteriors for Bayesian neural networks and deep Gaussian processes",
//     ICML. Learned inducing inputs U⁰ (M×DX) and, at every layer including the last, learned
//     pseudo-outputs V^ℓ (M×D^ℓ) and log-precisions log Λ^ℓ (M×D^ℓ).
//   - APOVI: the thesis's amortised POVI. The inducing inputs are the data themselves and the
//     per-datapoint pseudo-outputs and precisions of layer ℓ come from an inference MLP g^ℓ on
//     the raw (x_n, y_n). With a Gaussian likelihood the last layer has no network: its
//     pseudo-likelihood is the likelihood itself (pseudo-outputs y, precisions σ⁻²), so
//     q(W^L|W^{<L}) is the exact Bayesian-linear-regression conditional.
//   - AMFVI: amortised mean field. Per-layer inference nets give a Gaussian factor
//     N(μ_n, σ_n²) per datapoint and weight; q is their product with the prior.
//
// BNN conventions (apovi.md §1.1). Widths [DX, hidden…, DY]; at every layer a column of ones
// is appended to the input, so w_d^ℓ ∈ ℝ^K with K = D^{ℓ−1}+1 and its last entry is the bias;
// ReLU on hidden layers, linear output; prior N(0, σ_p²) on every weight and bias, σ_p² = 1 by
// default, no fan-in scaling.
//
// Layer-conditional posterior (POVI and APOVI). For one Monte Carlo sample, layer ℓ and output
// unit d, with U = [H^{ℓ−1}, 1] (N×K; inducing activations for POVI, data activations for
// APOVI), precisions Λ_d = diag(λ_{1d},…,λ_{Nd}) and pseudo-outputs v_d:
//
//	P_d = σ_p⁻² I + Uᵀ Λ_d U,   μ_d = P_d⁻¹ Uᵀ Λ_d v_d,   q(w_d | W^{<ℓ}) = N(μ_d, P_d⁻¹),
//	w_d = μ_d + R_d⁻ᵀ ε,  P_d = R_d R_dᵀ (Cholesky),  ε ~ N(0, I_K),
//	KL_d = ½[σ_p⁻²(tr P_d⁻¹ + μ_dᵀμ_d) − K + K ln σ_p² + ln det P_d].
//
// One layer of one sample is one fused node on the ad.Tape (Gram matrices, Cholesky factors,
// draw and KL of all D units, with a hand-written adjoint), so U is never detached: gradients
// reach the earlier sampled weights through Uᵀ Λ_d U and the Cholesky factor. Cost per layer
// and sample: D separate K×K systems, O(D(N K² + K³)) forward and about twice that backward
// (apovi.md §1.3, §7.2). When a layer has fewer points than weights per unit (N < K, e.g. the
// thesis's 1-D data) the same conditional is computed in N-space instead (Woodbury: an N×N
// system per unit, O(D(N²K + N³)), and a pathwise draw from the prior corrected by pseudo-noise,
// which has the same distribution but consumes K + N normals instead of K). The inference
// networks run once per loss and are shared by all S samples.
//
// Inference-network output parameterisation (NormalActivation, apovi.md §1.3, D2): the output
// o = [a, b] gives the pseudo-output a and the pseudo-noise standard deviation
// σ = exp((b − 4)/2) + 1e-8, precision λ = σ⁻².
//
// Objectives (apovi.md §2): ELBO (q from D, loss −𝓛/N), NPML (q from the context C, log
// likelihood of the targets T pushed through the same weights, −𝓛/|T|) and NPVI (q from C∪T
// for the target log likelihood minus KL(q_{C∪T} ‖ q_C), −𝓛/|T|). Parameters are initialised
// like PyTorch's nn.Linear, U(−1/√fan_in, 1/√fan_in) for weights and biases.
//
// Use with an optimiser from package optim:
//
//	var t ad.Tape
//	t.Reset()
//	p := t.Input(m.Params())
//	loss, err := m.Loss(&t, p, apovi.ELBO, d, apovi.Dataset{}, 1, r)
//	t.Backward(loss)
//	adam.Step(m.Params(), t.Grad(p))
//
// Training (Train): Adam over batches of tasks with the thesis's early-stopping rule on the
// training loss (EarlyStop), or held-out early stopping (Validation: a caller's held-out loss
// every few iterations, patience, best parameters restored), which the thesis does not have.
//
// Prediction (APOVI.Predict) runs the inference networks once on the tape and draws the S
// weight samples without it: no KL or adjoint caches, the layer-0 conditional (the data are
// every sample's layer-0 input) factorised once, and in N-space one UUᵀ per layer and sample
// shared by its D units, with Cholesky solves in place of G⁻¹. It draws the same normals in
// the same order as the training forward, so both give the same weights up to rounding.
//
// A model holds structure and its parameter vector only; Loss reads the parameters from p, so
// several goroutines may record losses of one model on their own tapes at once (and Predict
// reads Params(), so it must not race with an optimiser step). Save and Load write and read
// one JSON object (configuration and parameters, no data).
package apovi
