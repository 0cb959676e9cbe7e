package mcmc

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vigo-bayes/vigo/diag"
)

// Diagnostics are the sampler checks of a run: divergences, saturated trees and E-BFMI.
type Diagnostics struct {
	// Transitions is the number of iterations checked over all chains.
	Transitions int
	// Divergent counts transitions that ended in a divergence.
	Divergent int
	// MaxDepth is the maximum tree depth (0: not NUTS, the check is skipped) and
	// MaxDepthHits the transitions whose tree reached it.
	MaxDepth, MaxDepthHits int
	// EBFMI is each chain's E-BFMI (diag.EBFMI of its energies).
	EBFMI []float64
	// StepSizes are the chains' step sizes (of their first checked transition).
	StepSizes []float64
	// Warmup says what happened during warmup in words: chains re-initialised or still
	// stuck, metric estimates not used (Result.Diagnostics fills it; Diagnose does not).
	Warmup []string
}

// Diagnose checks the sampler diagnostics of the kept transitions of each chain. maxDepth is
// the NUTS maximum tree depth (0 skips the tree-depth check). Cost O(total transitions).
func Diagnose(chains [][]Stats, maxDepth int) Diagnostics {
	d := Diagnostics{MaxDepth: maxDepth, EBFMI: make([]float64, len(chains)), StepSizes: make([]float64, len(chains))}
	var energy []float64
	for c, ch := range chains {
		energy = energy[:0]
		d.StepSizes[c] = math.NaN()
		if len(ch) > 0 {
			d.StepSizes[c] = ch[0].StepSize
		}
		for _, s := range ch {
			d.Transitions++
			if s.Divergent {
				d.Divergent++
			}
			if maxDepth > 0 && s.TreeDepth >= maxDepth {
				d.MaxDepthHits++
			}
			energy = append(energy, s.Energy)
		}
		d.EBFMI[c] = diag.EBFMI(energy)
	}
	return d
}

func percent(k, n int) string {
	return fmt.Sprintf("%.2g%%", 100*float64(k)/float64(n))
}

// Warnings says in words what the checks found; nil when everything passed.
func (d Diagnostics) Warnings() []string {
	w := slices.Clone(d.Warmup)
	if d.Divergent > 0 {
		w = append(w, fmt.Sprintf("%d of %d transitions (%s) ended with a divergence: the sampler met curvature its step size cannot follow, so the draws may be biased. Raise the target acceptance (--adapt-delta 0.95 or 0.99) or reparameterise the model (non-centred hierarchies).",
			d.Divergent, d.Transitions, percent(d.Divergent, d.Transitions)))
	}
	if d.MaxDepth > 0 && d.MaxDepthHits > 0 {
		w = append(w, fmt.Sprintf("%d of %d transitions (%s) hit the maximum tree depth %d: the trajectories were cut short, which costs efficiency, not correctness. Raise --max-depth or reparameterise (strong correlations or very different scales; a dense metric may help).",
			d.MaxDepthHits, d.Transitions, percent(d.MaxDepthHits, d.Transitions), d.MaxDepth))
	}
	var low []string
	for c, e := range d.EBFMI {
		if e < diag.EBFMIThreshold {
			low = append(low, fmt.Sprintf("chain %d: %.2f", c+1, e))
		}
	}
	if len(low) > 0 {
		w = append(w, fmt.Sprintf("E-BFMI below %.1f (%s): momentum resampling explores the energy distribution slowly, typically because of heavy tails or a poorly adapted metric. Reparameterise, or run a longer warmup.",
			diag.EBFMIThreshold, strings.Join(low, ", ")))
	}
	return w
}

// Summary says in one line what the checks found when nothing is wrong, for a report.
func (d Diagnostics) Summary() string {
	parts := []string{fmt.Sprintf("%d divergent", d.Divergent)}
	if d.MaxDepth > 0 {
		parts = append(parts, fmt.Sprintf("%d at max tree depth %d", d.MaxDepthHits, d.MaxDepth))
	}
	e := make([]string, len(d.EBFMI))
	for i, v := range d.EBFMI {
		e[i] = fmt.Sprintf("%.2f", v)
	}
	parts = append(parts, "E-BFMI "+strings.Join(e, " "))
	return fmt.Sprintf("%d transitions: %s", d.Transitions, strings.Join(parts, ", "))
}

// RhatThreshold and ESSPerChain are the convergence thresholds of Vehtari et al. (2021):
// R̂ below 1.01 and bulk and tail ESS of at least 100 per chain.
const (
	RhatThreshold = 1.01
	ESSPerChain   = 100
)

// SummaryWarnings says in words which variables of s fail R̂ < RhatThreshold or have bulk or
// tail ESS below ESSPerChain·chains; nil when all pass.
func SummaryWarnings(s *diag.Summary, chains int) []string {
	var rh, ess []string
	minESS := float64(ESSPerChain * max(chains, 1))
	for _, r := range s.Rows {
		if r.Rhat > RhatThreshold {
			rh = append(rh, fmt.Sprintf("%s %.3f", r.Variable, r.Rhat))
		}
		if e := math.Min(r.ESSBulk, r.ESSTail); e < minESS {
			ess = append(ess, fmt.Sprintf("%s %.0f", r.Variable, e))
		}
	}
	var w []string
	if len(rh) > 0 {
		w = append(w, fmt.Sprintf("R-hat above %.2f for %s (%s): the chains disagree, so the draws do not yet represent the posterior. Run longer, or look for multimodality and poor parameterisation.",
			RhatThreshold, plural(len(rh), "variable"), clip(rh)))
	}
	if len(ess) > 0 {
		w = append(w, fmt.Sprintf("Bulk or tail ESS below %.0f for %s (%s): too few effective draws for reliable means and quantiles. Run more iterations.",
			minESS, plural(len(ess), "variable"), clip(ess)))
	}
	return w
}

// clip joins at most 5 items and says how many more there are.
func clip(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:5], ", ") + fmt.Sprintf(", and %d more", len(items)-5)
}

// plural returns "1 variable", "2 variables".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
