package diag

import (
	"fmt"
	"math"
	"strconv"
)

// Reliability classifies a Pareto k̂ for S draws (Vehtari et al. 2024, §3.2; Yao et al. 2018).
type Reliability int

const (
	// Good: k̂ ≤ 0.5 and below the sample-size threshold; the approximation is close and
	// importance-weighted estimates are reliable.
	Good Reliability = iota
	// Usable: 0.5 < k̂ ≤ min(1 − 1/log₁₀ S, 0.7); PSIS-weighted estimates are reliable,
	// the unweighted approximation is rough.
	Usable
	// TooFewDraws: min(1 − 1/log₁₀ S, 0.7) < k̂ ≤ 0.7; more draws would make PSIS usable.
	TooFewDraws
	// Poor: 0.7 < k̂ ≤ 1; PSIS estimates are biased and noisy, more draws do not help
	// in practice.
	Poor
	// Failed: k̂ > 1 or not finite; the weights have no finite mean.
	Failed
)

var reliabilityNames = [...]string{"good", "usable", "too few draws", "poor", "failed"}

// String returns a short lower-case name.
func (r Reliability) String() string {
	if r < 0 || int(r) >= len(reliabilityNames) {
		return "Reliability(" + strconv.Itoa(int(r)) + ")"
	}
	return reliabilityNames[r]
}

// Classify returns the Reliability of k̂ for S draws; the raw k̂, not its rounded value,
// is compared with the thresholds.
func Classify(k float64, s int) Reliability {
	thr := KhatThreshold(s)
	switch {
	case math.IsNaN(k) || k > 1:
		return Failed
	case k > 0.7:
		return Poor
	case k > thr:
		return TooFewDraws
	case k > 0.5:
		return Usable
	}
	return Good
}

// FormatKhat returns k̂ rounded to 2 decimals without trailing zeros ("0.42", "1.3", "Inf",
// "-Inf" for equal weights).
func FormatKhat(k float64) string {
	if math.IsInf(k, 1) {
		return "Inf"
	}
	if math.IsInf(k, -1) {
		return "-Inf"
	}
	if math.IsNaN(k) {
		return "NaN"
	}
	r := math.Round(k*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Verdict returns a one-line judgement of an approximation from the k̂ of its PSIS log
// weights on S draws, e.g. "k̂ = 0.42: reliable" or "k̂ = 1.3: do not trust this
// approximation — try a richer family". advice replaces "try a richer family" (e.g.
// "try a full-rank Gaussian or a flow family"); it is used for Poor and Failed. k̂ = −Inf
// is PSIS's value for equal weights (PSISResult.Equal) and reads "reliable" with the reason.
func Verdict(k float64, s int, advice string) string {
	if advice == "" {
		advice = "try a richer family"
	}
	ks := "k̂ = " + FormatKhat(k) + ": "
	if math.IsInf(k, -1) {
		return ks + "reliable — the importance weights are all equal: q matches the target (up to a constant) on these draws"
	}
	switch Classify(k, s) {
	case Good:
		return ks + "reliable"
	case Usable:
		return ks + "usable — the approximation is rough; PSIS-weighted estimates are reliable"
	case TooFewDraws:
		// 1 − 1/log₁₀ S ≥ k̂  ⇔  S ≥ 10^(1/(1−k̂)).
		need := math.Ceil(math.Pow(10, 1/(1-k)))
		return fmt.Sprintf("%sunreliable with %d draws — PSIS needs at least %.0f draws at this k̂", ks, s, need)
	case Poor:
		return ks + "unreliable — the approximation misses the posterior's tails and PSIS estimates are biased; " + advice
	}
	return ks + "do not trust this approximation — " + advice
}
