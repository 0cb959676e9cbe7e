package fit

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/diag"
)

// ModeShiftTol and ModeCoverRatio decide when a secondary mode makes the verdict
// unreassuring. A mode m other than the best carries, relative to the best, the Laplace mass
// w_m = exp(LogEvidence_m − LogEvidence_best), and q holds it in the proportion
// ρ_m = (q(z_m)/q(z_best)) / (p(z_m)/p(z_best)), the importance weight ratio between the two
// modes (ρ ≈ 1: q holds the mode in proportion, as a mixture over the modes does; ρ ≈ 0: q
// does not reach it, as a Gaussian at the other mode). A mode is uncovered when
// ρ_m < ModeCoverRatio — q sends so few draws there that k̂, computed on q's draws, cannot see
// the mass it misses; with ρ ≥ ModeCoverRatio q's draws reach the mode and a wrong weight
// shows in the importance weights, i.e. in k̂ — and its missing mass moved over the distance
// D_m = max_i |z_m,i − z_best,i| / sd_best,i, w_m·(1 − ρ_m)·D_m (≈ the W1/sd it costs), is
// above ModeShiftTol. 10⁻³ leaves a factor 100 (4.6 nats) for the Laplace evidence's error
// below the W1/sd of 0.1 that the trust benchmark counts as wrong.
const (
	ModeShiftTol   = 1e-3
	ModeCoverRatio = 0.1
)

// RoughGapPerDim is the largest importance-sampling gap per coordinate, (log Ẑ_IS − ELBO)/d,
// with which a k̂ in the "usable" band (0.5 < k̂ ≤ the threshold) still reads usable. On the
// diagnostic draws, log Ẑ_IS = log mean exp(log p − log q) and ELBO = mean(log p − log q), so
// their difference is ≥ 0 and estimates KL(q‖p) from below (log Z − ELBO = KL(q‖p); ≈ half the
// variance of the log weights when q is close). In the usable band PSIS vouches for the
// weighted estimates only; the gap says whether q's own draws are close: a Gaussian whose sd
// is off by 20% in every coordinate has KL 0.043 per coordinate and W1/sd ≈ 0.16, one off by
// 12.5% (W1/sd ≈ 0.1) has 0.016. 0.05 leaves room for the gap's Monte Carlo error on 1,000
// draws and for posteriors whose q is close in most coordinates.
const RoughGapPerDim = 0.05

// Assessment is the verdict on a fit: what its k̂ and its multi-start search say together.
type Assessment struct {
	// Text is the verdict in one line, as vigo fit prints it (Result.Verdict).
	Text string
	// Reassuring: the verdict says reliable or usable — k̂ is good or usable, and no mode
	// the search found holds mass q misses (ModeShiftTol).
	Reassuring bool
	// KHat is the class of k̂ on the fit's diagnostic draws.
	KHat diag.Reliability
	// Modes is the number of distinct modes found; Gap the Laplace evidence of the best minus
	// that of the second (+Inf with one mode or none).
	Modes int
	Gap   float64
	// Shift is the largest unseen shift of a secondary mode (see ModeShiftTol), in W1/sd;
	// 0 with one mode. Uncovered counts the modes q does not cover whose shift exceeds
	// ModeShiftTol.
	Shift     float64
	Uncovered int
	// ISGap is log Ẑ_IS − ELBO on the diagnostic draws (see RoughGapPerDim); NaN when the
	// log weights are not finite. Rough: k̂ is in the usable band and ISGap/d exceeds
	// RoughGapPerDim, so the verdict is not reassuring.
	ISGap float64
	Rough bool
}

// Assess is the verdict on res: the k̂ verdict (Result.KHatVerdict) prefixed by what the
// multi-start mode search found, and not reassuring when a mode holds mass q misses
// (ModeShiftTol) — k̂ cannot see it, because the draws of q do not go there. The texts:
//
//	"one start (other modes not looked for); k̂ = 0.41: reliable"
//	"4 of 4 starts reached one mode; k̂ = 0.41: reliable"
//	"4 of 4 starts reached one mode; k̂ = 0.57: unreliable — k̂ is in the usable band, but the
//	 ELBO is 0.22 nats below the importance-sampling estimate of log Z …"
//	"4 starts found 2 modes 60 nats apart (Laplace evidence); the best is kept, the others'
//	 mass is negligible; k̂ = …"
//	"4 starts found 2 modes within 3.1 nats and q covers them; k̂ = …"
//	"4 starts found 2 modes within 3.1 nats (Laplace evidence) and q misses mass at 1 of
//	 them (≈ 0.42 W1/sd): the posterior is multimodal and k̂ (0.41) cannot see mass q does
//	 not cover — do not trust this approximation: fit an ensemble over the modes"
//
// A k̂ in the usable band with a large importance-sampling gap (RoughGapPerDim) is not
// reassuring either. It needs res.Modes[i].LogQ (set when Fit diagnoses the fit) and the
// diagnostic log densities. Cost O(modes × d + diagnostic draws).
func Assess(res *Result) Assessment {
	a := Assessment{KHat: diag.Classify(res.KHat, len(res.LogP)), Modes: len(res.Modes), Gap: math.Inf(1)}
	if math.IsInf(res.KHat, -1) {
		a.KHat = diag.Good // equal weights
	}
	kv := res.KHatVerdict
	if kv == "" {
		kv = diag.Verdict(res.KHat, len(res.LogP), "")
	}
	a.Reassuring = a.KHat == diag.Good || a.KHat == diag.Usable
	a.ISGap = isGap(res.LogP, res.LogQ)
	if a.KHat == diag.Usable && res.Family != nil && a.ISGap > RoughGapPerDim*float64(res.Family.Dim()) {
		a.Rough, a.Reassuring = true, false
		kv = fmt.Sprintf("k̂ = %s: unreliable — k̂ is in the usable band, but the ELBO is %.3g nats below the importance-sampling estimate of log Z (%.2g per coordinate, above %g): q's own draws are off; do not use them unweighted — use PSIS-weighted estimates (resampled draws) or a richer family",
			diag.FormatKhat(res.KHat), a.ISGap, a.ISGap/float64(res.Family.Dim()), RoughGapPerDim)
	}
	switch {
	case res.Starts == 0:
		a.Text = kv
		return a
	case len(res.Modes) == 0:
		a.Text = fmt.Sprintf("every one of %d mode searches failed; %s", res.Starts, kv)
		return a
	case res.Starts == 1:
		a.Text = "one start (other modes not looked for); " + kv
		return a
	case len(res.Modes) == 1:
		fail := ""
		switch {
		case res.StartsFailed > 0 && res.Modes[0].Count == 1:
			fail = fmt.Sprintf(" (%d failed: other modes were barely looked for)", res.StartsFailed)
		case res.StartsFailed > 0:
			fail = fmt.Sprintf(" (%d failed)", res.StartsFailed)
		}
		a.Text = fmt.Sprintf("%d of %d starts reached one mode%s; %s", res.Modes[0].Count, res.Starts, fail, kv)
		return a
	}
	best := res.Modes[0]
	a.Gap = best.LogEvidence - res.Modes[1].LogEvidence
	for _, m := range res.Modes[1:] {
		s, covered := modeShift(best, m)
		a.Shift = max(a.Shift, s)
		if !covered && !(s <= ModeShiftTol) {
			a.Uncovered++
		}
	}
	n := len(res.Modes)
	if a.Uncovered == 0 {
		if a.Gap > 1 && coversNone(res) {
			a.Text = fmt.Sprintf("%d starts found %d modes %.3g nats apart (Laplace evidence); the best is kept, the others' mass is negligible; %s",
				res.Starts, n, a.Gap, kv)
		} else {
			a.Text = fmt.Sprintf("%d starts found %d modes within %.3g nats and q covers them; %s", res.Starts, n, a.Gap, kv)
		}
		return a
	}
	a.Reassuring = false
	a.Text = fmt.Sprintf("%d starts found %d modes within %.3g nats (Laplace evidence) and q misses mass at %d of them (≈ %.2g W1/sd): the posterior is multimodal and k̂ (%s) cannot see mass q does not cover — do not trust this approximation: fit an ensemble over the modes",
		res.Starts, n, a.Gap, a.Uncovered, a.Shift, diag.FormatKhat(res.KHat))
	return a
}

// modeShift is the unseen shift of mode m next to the best mode b, w_m·(1 − ρ_m)·D_m, and
// whether q covers m (ρ_m ≥ ModeCoverRatio); see ModeShiftTol.
func modeShift(b, m Mode) (shift float64, covered bool) {
	w := math.Exp(m.LogEvidence - b.LogEvidence)
	if !isFinite(w) {
		w = math.Exp(m.LogDensity - b.LogDensity)
	}
	// NaN (log q not known) is not covered and misses everything; +Inf (q far above p there)
	// is covered.
	rho := math.Exp((m.LogQ - b.LogQ) - (m.LogDensity - b.LogDensity))
	covered = rho >= ModeCoverRatio
	D := 0.0
	for i := range b.Z {
		D = max(D, math.Abs(m.Z[i]-b.Z[i])/b.SD[i])
	}
	miss := 1.0
	if rho >= 0 {
		miss = max(0, 1-rho)
	}
	return w * miss * D, covered
}

// coversNone reports whether q holds none of the secondary modes (importance weight ratio
// ρ < 1/2 at each), so that their negligibility comes from their mass alone.
func coversNone(res *Result) bool {
	b := res.Modes[0]
	for _, m := range res.Modes[1:] {
		rho := math.Exp((m.LogQ - b.LogQ) - (m.LogDensity - b.LogDensity))
		if rho >= 0.5 {
			return false
		}
	}
	return true
}

// isGap is log mean exp(w) − mean(w) for the log weights w = logp − logq (NaN when some are
// not finite or there are none).
func isGap(logp, logq []float64) float64 {
	n := len(logp)
	if n == 0 || len(logq) != n {
		return math.NaN()
	}
	m, mu := math.Inf(-1), 0.0
	for i := range n {
		w := logp[i] - logq[i]
		if !isFinite(w) {
			return math.NaN()
		}
		m = max(m, w)
		mu += w
	}
	mu /= float64(n)
	s := 0.0
	for i := range n {
		s += math.Exp(logp[i] - logq[i] - m)
	}
	return m + math.Log(s/float64(n)) - mu
}
