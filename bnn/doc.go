// Package bnn fits Bayesian neural networks with mean-field Gaussian weights by variational
// inference, with four ways to push the weight uncertainty through a ReLU network:
//
//   - MonteCarlo: the local reparameterisation trick (Kingma, Salimans & Welling 2015,
//     "Variational dropout and the local reparameterization trick", NeurIPS): a layer's
//     pre-activation f = h·W + b is Gaussian given its input h, with mean h·μ + μ_b and variance
//     h²·σ² + σ_b², so one draw of f per data point and unit replaces a draw of every weight.
//   - VBP: sampling-free variance backpropagation (Haußmann, Hamprecht & Kandemir 2019,
//     "Sampling-free variational inference of Bayesian neural networks by variance
//     backpropagation", UAI). ReLU(f) = f·z with z = 1(f > 0), relaxed to z ~ Bernoulli(σ(C·E[f]))
//     with C = 100; then E[h] = p·E[f] and var[h] = p·var[f] + p(1−p)·E[f]², p = σ(C·E[f]).
//   - DVI: deterministic moment propagation in the style of Wu et al. (2019, "Deterministic
//     variational inference for robust Bayesian neural networks", ICLR), diagonal (mean-field)
//     and homoscedastic: f is taken Gaussian N(m, v) and ReLU's moments are closed form,
//     E[h] = mΦ(m/s) + sφ(m/s), E[h²] = (m²+v)Φ(m/s) + msφ(m/s), s = √v (Frey & Hinton 1999).
//   - VarDrop: variational dropout (Molchanov, Ashukha & Vetrov 2017, "Variational dropout
//     sparsifies deep neural networks", ICML) with a proper Gaussian prior: multiplicative
//     Gaussian noise per weight, w = θ(1 + √α ε), parameterised additively by (θ, log σ²) with
//     log α = log σ² − log θ² clipped to [−8, 8], deterministic biases, local reparameterisation.
//     Without the clip and with Gaussian biases this would coincide with MonteCarlo.
//
// Every linear layer propagates moments the same way. With input mean M and variance V (V = 0
// for data and for a Monte Carlo draw), weight means μ and variances σ² (k×m) and bias moments
// (μ_b, σ_b²):
//
//	E[f] = M·μ + μ_b,   var[f] = V·(μ² + σ²) + M²·σ² + σ_b²
//
// (squares elementwise; weights independent of the input). The KL divergence to the prior
// N(0, α⁻¹I) is closed form: ½ Σ [α(μ² + σ²) − log σ² − 1 − log α].
//
// For regression y ~ N(f(x), β⁻¹) the expected log-likelihood needs only the output moments:
// E_q[log p(y|x)] = ½ log(β/2π) − (β/2)[(y − E[f])² + var[f]], which VBP and DVI use in closed
// form; the Monte Carlo methods draw f once per data point. The noise precision β is set after
// every epoch by Type-II maximum likelihood, β = N / Σ_n [(y_n − E[f_n])² + var[f_n]].
//
// Layers are dense matrices: a whole network's data term (forward moments and the analytic
// backward pass through every layer, gonum BLAS for the products) is one fused node on an
// ad.Tape, and the KL another; parameters are one caller-owned slice (see Net.Layout).
//
// ConvNet puts strided 2-D convolutions (valid padding) in front of the dense layers, for all
// four methods: gathering the input patches (im2col) makes each convolution a dense layer over
// patches, so the same moment rules and GEMMs apply. FitClassifier trains it on the categorical
// likelihood, and LoadFashionMNIST reads the data of the VBP paper's image experiment.
package bnn
