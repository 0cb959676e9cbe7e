// Package density puts the log densities of package dist on the AD tape: each call records
// ONE fused node whose value is Σᵢ log p(yᵢ | θᵢ) and whose partials are the analytic ones of
// dist, however many observations it covers (Stan's operands-and-partials; DESIGN.md §3).
//
// Vectorisation: every Var argument has length 1 (broadcast to all observations) or N, the
// number of observations; a broadcast parameter receives the sum of the per-observation
// partials. Discrete outcomes and GLM designs are data (plain Go slices, ad.Mat) and never
// enter the tape. Constant arguments (t.Const, t.ConstRef) get no partials and cost nothing
// beyond their values.
//
// Full normalising constants are kept, so values equal the sums of the dist values.
//
// Bad input, following dist: an invalid parameter (σ ≤ 0, ν ≤ 0, shape ≤ 0, φ ≤ 0, …) makes
// the value NaN; an outcome outside the support (y < 0 under Gamma, k > n under Binomial,
// y outside [lower, upper] under truncation) makes it −Inf. Neither panics; partials are then
// unspecified. Wrong argument lengths are programmer errors and panic with a message naming
// the function and the argument: "density: Normal: len(mu)=3, want 1 or 5".
//
// In steady state (a tape reused after Reset) no call allocates.
package density
