// Package diag says how far to trust a set of draws: Pareto-smoothed importance sampling
// (PSIS) with its k̂ diagnostic and a verdict in words, rank-normalised split-R̂, bulk and tail
// effective sample sizes and Monte Carlo standard errors (the definitions of R's `posterior`
// package), per-variable summaries as a text table, CSV or JSON, and distances from a set of
// draws to reference draws (W1/sd, sd ratio, max|Δmean|/sd).
//
// Everything takes plain []float64 and returns plain values. Chains are passed as
// [][]float64, one slice of draws per chain; a single run of independent draws is one chain.
// Missing results (too few draws, constant draws) are NaN, where R returns NA.
//
// References:
//   - Vehtari, Simpson, Gelman, Yao & Gabry (2024), "Pareto smoothed importance sampling",
//     JMLR 25(72).
//   - Zhang & Stephens (2009), "A new and efficient estimation method for the generalized
//     Pareto distribution", Technometrics 51(3).
//   - Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
//     localization: an improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2).
//   - Yao, Vehtari, Simpson & Gelman (2018), "Yes, but did it work?: evaluating variational
//     inference", ICML.
package diag
