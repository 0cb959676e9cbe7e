// Package bfvi holds experiments with Bernstein-flow variational inference (BF-VI; Dürr,
// Hörling, Dold, Kovylov & Sick 2024, "Bernstein flows for flexible posteriors in variational
// Bayes", AStA Adv. Stat. Anal. 108:375–394) that need the whole stack (families, objectives,
// the fit loop, zoo models): the one-dimensional KL experiments E1 and E2 on a float64
// Bernstein-flow kernel of their own (Flow1D, RunE1, RunE2), the paper's k̂ experiments E3–E6
// with its aggregation (5 restarts, bootstrap, Rubin-combined 90% interval; Run, BootstrapKHat,
// Rubin — `vigo bench bfvi` writes bench/results/bfvi.md), E5 through fit with the paper's
// recipe on the reference code's own parameterisation (PaperEightSchools, RunBar: `vigo bench
// bfvi --e5-bar`, judged by the restated bar: k̂ on ≥ 50,000 draws with the ELBO, W1/sd and the
// reference mass outside q's range), the ELBO-step benchmark of the
// multivariate flow against the full-rank Gaussian and the multivariate fits. The multivariate
// flows are flow.Bernstein and flow.BernsteinAR.
//
// Experimental: nothing here is API. Run the benchmark with
//
//	go test ./x/bfvi -run XXX -bench ELBOStep
//
// and the fits with VIGO_BFVI=1 go test ./x/bfvi -run BFVIFits -v (VIGO_BFVI_LONG=1 for
// 10,000-step plateau windows).
package bfvi
