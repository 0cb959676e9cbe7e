package mcmc

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// A chain can end its warmup stuck: with a step size that collapsed (every transition then
// runs to the maximum tree depth and barely moves) or in a region of far lower density than
// the other chains' (a minor mode, a ridge). Sample compares the chains when all have warmed
// up, re-initialises a stuck chain up to maxRestarts times, and reports what it did in
// Chain.Restarts and Chain.Stuck (Result.Diagnostics' Warmup warnings). A warmup whose step
// size stays collapsed for a terminal window's worth of iterations in a row stops there
// (noted in Chain.Notes) rather than run its remaining iterations at 2^MaxDepth gradients.
const (
	// collapsedStep is √(2⁻⁵²) ≈ 1.5·10⁻⁸, the square root of float64's machine epsilon. The
	// leapfrog integrator's energy error is O(ε²) in the metric's units, so below this step
	// size it is smaller than the rounding error of H itself: no integration error asks for
	// such a step, and dual averaging got there because of something else (a discontinuity,
	// a region where the density is not finite, a point it cannot leave). A NUTS chain whose
	// step size is below it and whose trees reached the maximum depth in at least half of the
	// terminal window is collapsed; a static HMC chain only needs the step size.
	collapsedStep = 1.4901161193847656e-08
	// lpGapSDs is how many standard deviations of the log density (the median of the other
	// chains' over their terminal windows) a chain's mean log density may lie below the
	// median of the other chains' means before it counts as stuck. For a D-dimensional
	// Gaussian, log π has sd √(D/2) and −log π − const is χ²_D/2, so a 10-sd gap of a
	// window's mean is a region the other chains' posterior essentially never visits.
	lpGapSDs = 10
	// maxRestarts bounds the re-initialisations of one chain.
	maxRestarts = 2
	// restartPath is the first index of the rng.Derive path of a re-initialisation's stream.
	restartPath = 0x7265696e6974 // "reinit"
)

// warmEnd is a chain's state at the end of its warmup, what stuck compares.
type warmEnd struct {
	eps float64 // the adapted step size
	// step is ε·metric.stepScale(), the typical distance a leapfrog step moves a coordinate,
	// comparable across chains whose metrics differ.
	step float64
	// lpMean and lpSD are the mean and sd of the log density over the terminal window of n
	// iterations, depthHits of which reached the maximum tree depth. n = 0: no warmup.
	lpMean, lpSD float64
	n, depthHits int
}

// tail accumulates the last iterations of a warmup: the terminal buffer of the adaptation
// schedule, and at least 10 (or all of a shorter warmup).
type tail struct {
	from, size int
	maxDepth   int
	nuts       bool
	n, hits    int
	mean, m2   float64
}

func newTail(cfg Config, win *windows) *tail {
	k := max(win.termBuf, 10)
	if win.off {
		k = cfg.Warmup
	}
	k = min(k, cfg.Warmup)
	return &tail{from: cfg.Warmup - k, size: k, maxDepth: cfg.MaxDepth, nuts: cfg.Algorithm == NUTS}
}

// add records warmup iteration i's stats when i is in the window (Welford's update).
func (t *tail) add(i int, st Stats) {
	if i < t.from {
		return
	}
	t.n++
	d := st.LogDensity - t.mean
	t.mean += d / float64(t.n)
	t.m2 += d * (st.LogDensity - t.mean)
	if t.nuts && st.TreeDepth >= t.maxDepth {
		t.hits++
	}
}

func (t *tail) end(eps, scale float64) warmEnd {
	sd := 0.0
	if t.n > 1 {
		sd = math.Sqrt(t.m2 / float64(t.n-1))
	}
	return warmEnd{eps: eps, step: eps * scale, lpMean: t.mean, lpSD: sd, n: t.n, depthHits: t.hits}
}

// collapsed reports why e's step size collapsed (see collapsedStep), "" when it did not.
func collapsed(e warmEnd, cfg Config) string {
	if e.n == 0 || !(e.eps < collapsedStep) {
		return ""
	}
	if cfg.Algorithm != NUTS {
		return fmt.Sprintf("step size collapsed to %.3g (below √(machine epsilon) ≈ 1.5e-8)", e.eps)
	}
	if 2*e.depthHits < e.n {
		return ""
	}
	return fmt.Sprintf("step size collapsed to %.3g (below √(machine epsilon) ≈ 1.5e-8) with %d of the last %d warmup trees at the maximum depth %d",
		e.eps, e.depthHits, e.n, cfg.MaxDepth)
}

// stuck reports why the chain that ended its warmup in state e is stuck, compared with the
// states refs of other chains; "" when it is not. Besides a collapsed step size (collapsed):
//
//   - its leapfrog step (in the coordinates' units) is below 2^−MaxDepth times the median of
//     the others': its longest trajectory is shorter than one step of a typical chain;
//   - its mean log density over the terminal window is more than lpGapSDs standard deviations
//     (the median of the others' sds) below the median of the others' means.
//
// Medians keep one odd reference chain from condemning the rest. Cost O(len(refs) log).
func stuck(e warmEnd, refs []warmEnd, cfg Config) string {
	if r := collapsed(e, cfg); r != "" || e.n == 0 || len(refs) == 0 {
		return r
	}
	steps := make([]float64, len(refs))
	means := make([]float64, len(refs))
	sds := make([]float64, len(refs))
	for i, r := range refs {
		steps[i], means[i], sds[i] = math.Log(r.step), r.lpMean, r.lpSD
	}
	medStep := math.Exp(median(steps))
	if e.step < medStep*math.Ldexp(1, -cfg.MaxDepth) {
		return fmt.Sprintf("leapfrog step %.3g is below 2^-%d of the other chains' median %.3g (step size %.3g)", e.step, cfg.MaxDepth, medStep, e.eps)
	}
	medMean, medSD := median(means), median(sds)
	if medSD > 0 && medMean-e.lpMean > lpGapSDs*medSD {
		return fmt.Sprintf("mean log density %.6g over the last %d warmup iterations is %.0f sd below the other chains' median %.6g (sd %.3g)",
			e.lpMean, e.n, (medMean-e.lpMean)/medSD, medMean, medSD)
	}
	return ""
}

// median returns the median of x (reordering x); NaN for no values.
func median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return 0.5 * (x[n/2-1] + x[n/2])
}

// gate holds the chains of a Sample at the end of warmup until all have arrived (or failed),
// then judges each against the others: a chain is stuck when stuck says so compared with
// the other chains that did not collapse. A re-initialised chain is judged against the
// chains that were not stuck. The verdicts depend only on the chains' warmup results, so
// the run stays reproducible.
type gate struct {
	cfg      Config
	mu       sync.Mutex
	arrived  int
	ends     []*warmEnd
	verdicts []string
	ready    chan struct{}
}

func newGate(cfg Config) *gate {
	return &gate{cfg: cfg, ends: make([]*warmEnd, cfg.Chains), verdicts: make([]string, cfg.Chains), ready: make(chan struct{})}
}

// arrive records chain c's end of warmup (nil: the chain failed and will not sample).
func (g *gate) arrive(c int, e *warmEnd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ends[c] = e
	g.arrived++
	if g.arrived < len(g.ends) {
		return
	}
	down := make([]bool, len(g.ends))
	for j, e := range g.ends {
		down[j] = e != nil && collapsed(*e, g.cfg) != ""
	}
	for j, e := range g.ends {
		if e == nil {
			continue
		}
		var refs []warmEnd
		for k, o := range g.ends {
			if k != j && o != nil && !down[k] {
				refs = append(refs, *o)
			}
		}
		g.verdicts[j] = stuck(*e, refs, g.cfg)
	}
	close(g.ready)
}

// wait blocks until every chain has arrived; false when done closed first.
func (g *gate) wait(done <-chan struct{}) bool {
	select {
	case <-g.ready:
		return true
	case <-done:
		return false
	}
}

// verdict returns why chain c is stuck ("" when it is not) and the states of the chains that
// are not, against which a re-initialised c is judged. Only after wait returned true.
func (g *gate) verdict(c int) (string, []warmEnd) {
	var refs []warmEnd
	for k, o := range g.ends {
		if k != c && o != nil && g.verdicts[k] == "" {
			refs = append(refs, *o)
		}
	}
	return g.verdicts[c], refs
}
