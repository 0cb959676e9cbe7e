package fit

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// Mode is one distinct mode of the target that the multi-start mode search found (see
// Config.Starts): where the L-BFGS searches from Count of the starts ended, with its Laplace
// approximation.
type Mode struct {
	// Z is the mode in unconstrained space (the end point of the first start that reached it).
	Z []float64 `json:"z"`
	// SD are the Laplace standard deviations, √diag(H⁻¹) with H the negative Hessian at Z.
	SD []float64 `json:"sd"`
	// LogDensity is log p(Z), Jacobian included.
	LogDensity float64 `json:"log_density"`
	// LogEvidence is the Laplace estimate of the mode's log mass,
	// log p(Z) + d/2·log 2π − ½·log det H: exact for a Gaussian target, and for a mixture of
	// well separated components it estimates log(weight × normaliser) of the component.
	LogEvidence float64 `json:"log_evidence"`
	// LogQ is log q(Z) of the fitted approximation (NaN until the fit is diagnosed, and for
	// a resumed fit whose state predates it).
	LogQ float64 `json:"log_q"`
	// Count is the number of starts whose search ended at this mode; First the index of the
	// first of them (start 0 is Config.InitPoint or z = 0).
	Count int `json:"count"`
	First int `json:"first_start"`
	// DiagHessian: the negative Hessian was not positive definite and its positive diagonal
	// stands in (SD and LogEvidence are then rough).
	DiagHessian bool `json:"diagonal_hessian,omitempty"`

	from int // the start whose end point Z is (searchModes)
}

// MaxStarts caps Config.Starts and the Recipe's init.starts: each start is one mode search
// (an L-BFGS run and a finite-difference Hessian) whose end point and d×d Hessian are held until
// the modes are clustered.
const MaxStarts = 1024

// startStream is the rng.Derive path element of the random starts: start k ≥ 1 (after the
// user's points) draws from rng.New(rng.Derive(seed, startStream, k), 0), so each start
// depends on the seed and its index only, never on the number of workers.
const startStream = 0x7374617274 // "start"

// startRadius is the half-width of the first random starts: z_i ~ uniform(−2, 2) on the
// unconstrained scale, Stan's default initialisation (Stan Reference Manual, "Initialization").
// The random starts cycle through the half-widths 2, 4 and 8 (startPoint): a mode whose basin
// lies outside (−2, 2)^d — the major component of a mixture centred at 4·1 in d = 2, or at
// 2·1 in d = 10, with the minor one at the origin — is missed by every Stan-style start, and
// was in the trust benchmark's seeds.
const startRadius = 2.0

// valleyPoints is the number of interior points of the segment between two end points at which
// the valley test evaluates log p; valleyDepth is the dip in nats below the lower end point that
// separates two modes.
const (
	valleyPoints = 9
	valleyDepth  = 1.0
)

// modeTies is the log-density margin in nats within which a later start's end point does not
// displace the first start's as its mode's representative: the end points of one mode agree to
// the optimiser's tolerance, and keeping the earliest keeps a fit started from one mode
// identical whatever the number of starts (a point 10⁻³ nats below the maximum is ≈ 0.045
// Laplace sds from it).
const modeTies = 1e-3

// startPoint returns start k of the mode search on ℝ^d: start 0 is cfg.InitPoint (z = 0
// without it), starts 1..len(cfg.InitPoints) the user's points in order, and every later start
// a draw of uniform(−r, r)^d from its own stream of cfg.Seed, r cycling through startRadius·(1,
// 2, 4) (the first random start has r = 2, as Stan's), so that a
// start depends on its index only (the doubling of searchModes adds starts without changing
// the earlier ones).
func startPoint(cfg Config, d, k int) []float64 {
	switch {
	case k == 0:
		z := make([]float64, d)
		copy(z, cfg.InitPoint)
		return z
	case k <= len(cfg.InitPoints):
		return clone(cfg.InitPoints[k-1])
	}
	s := rng.New(rng.Derive(cfg.Seed, startStream, uint64(k)), 0)
	r := startRadius * float64(int(1)<<((k-1-len(cfg.InitPoints))%3))
	z := make([]float64, d)
	for i := range z {
		z[i] = r * (2*s.Float64() - 1)
	}
	return z
}

// startPoints returns the first max(cfg.Starts, 1 + len(cfg.InitPoints)) starts (startPoint).
func startPoints(cfg Config, d int) [][]float64 {
	n := max(cfg.Starts, 1+len(cfg.InitPoints))
	out := make([][]float64, n)
	for k := range out {
		out[k] = startPoint(cfg, d, k)
	}
	return out
}

// UnseenModeTol is the Good–Turing estimate of the chance that one more start reaches a mode
// not seen yet, f₁/n (f₁ the modes reached by exactly one of the n starts; Good 1953, after
// Turing), above which the multi-start search doubles its starts, up to Config.StartsMax: on a
// landscape of many small basins (a frequency's local optima) the first starts each find a
// different mode, and a mode holding mass may still be unseen; when every mode was reached by
// two starts or more, f₁ = 0 and the search stops.
const UnseenModeTol = 0.1

// modeSearch is the outcome of the multi-start search.
type modeSearch struct {
	best    *laplaceResult // the Laplace fit at modes[0], the start of q; nil when every start failed
	modes   []Mode         // distinct modes, best first (better)
	starts  int            // searches run
	failed  int            // searches that failed
	err0    error          // why start 0 failed (nil when it did not)
	why     error          // why the first failed search failed (nil when none did)
	evals   int            // gradient and density evaluations of all searches and the valley tests
	doubled int            // times the starts were doubled (UnseenModeTol)
	cfg     Config         // the configuration it ran with (sameConfig)
}

// sameConfig reports whether a search with cfg would be this one: the same seed, starts,
// points and search cap (Workers never changes the result).
func (ms *modeSearch) sameConfig(cfg Config) bool {
	c := ms.cfg
	return c.Seed == cfg.Seed && c.Starts == cfg.Starts && c.StartsMax == cfg.StartsMax && c.InitIter == cfg.InitIter &&
		slices.Equal(c.InitPoint, cfg.InitPoint) &&
		slices.EqualFunc(c.InitPoints, cfg.InitPoints, func(a, b []float64) bool { return slices.Equal(a, b) })
}

// withSearch makes a fit reuse the mode search of an earlier fit when its configuration would
// run the same search (Auto's stages).
func withSearch(ms *modeSearch) Option { return func(o *options) { o.search = ms } }

// searchModes runs the mode search (laplace) from every start of cfg, in rounds of
// min(workers, 4, starts) concurrent searches — each search is a pure function of its start,
// and the end points are clustered in start order, so the outcome does not depend on the
// number of workers — and clusters the end points into distinct modes: two end points are one
// mode when they are within one Laplace sd of each other in the scaled Euclidean distance
// Σ_i (Δz_i / sd_i)² < 1 (the sds of either), or when log p along the segment between them
// never dips more than valleyDepth nats below the lower end (no barrier: one basin, e.g. a
// flat ridge). The modes are ranked by Laplace evidence (better): their approximate mass,
// what a start for q should maximise — a narrow spike with a high density but little mass is a
// worse start than a broad mode.
//
// Cost: starts × (an L-BFGS search of ≤ cfg.InitIter iterations + 2d gradients of the
// Hessian + an O(d³) factorisation), plus ≤ valleyPoints density evaluations per pair of end
// point and mode. Memory: the d×d Laplace fits of one round and of the best mode so far, and
// 2d values per mode.
func searchModes(target model.Target, cfg Config) *modeSearch {
	d := target.Dim()
	n := max(cfg.Starts, 1+len(cfg.InitPoints))
	W := max(1, min(cfg.Workers, maxBlocks, n))
	type outcome struct {
		lap *laplaceResult
		err error
	}
	ms := &modeSearch{starts: n, cfg: cfg}
	bestFrom := -1
	var t ad.Tape
	outs := make([]outcome, W)
	for lo := 0; ; lo += W {
		if lo >= n {
			// Double while the Good–Turing estimate says a new mode is likely (n ≥ 2).
			if n < 2 || n >= cfg.StartsMax || !(unseen(ms.modes, n) > UnseenModeTol) {
				break
			}
			n = min(2*n, cfg.StartsMax)
			ms.starts, ms.doubled = n, ms.doubled+1
		}
		hi := min(lo+W, n)
		var wg sync.WaitGroup
		for k := lo; k < hi; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lap, err := laplace(target, startPoint(cfg, d, k), cfg.InitIter)
				outs[k-lo] = outcome{lap, err}
			}()
		}
		wg.Wait()
		for k := lo; k < hi; k++ {
			o := outs[k-lo]
			if o.lap != nil {
				ms.evals += o.lap.Evals
			}
			if o.err != nil {
				ms.failed++
				if k == 0 {
					ms.err0 = o.err
				}
				if ms.why == nil {
					ms.why = o.err
				}
				continue
			}
			m := modeOf(o.lap, k)
			j := -1
			for i := range ms.modes {
				same, ev := sameMode(&t, target, &ms.modes[i], &m)
				ms.evals += ev
				if same {
					j = i
					break
				}
			}
			switch {
			case j < 0:
				ms.modes = append(ms.modes, m)
				j = len(ms.modes) - 1
			case m.LogDensity > ms.modes[j].LogDensity+modeTies:
				m.Count, m.First = ms.modes[j].Count+1, ms.modes[j].First
				ms.modes[j] = m
			default:
				ms.modes[j].Count++
				continue
			}
			// Mode j is new or has a new representative: keep its Laplace fit if it leads.
			if bestIndex(ms) == j {
				ms.best, bestFrom = o.lap, k
			}
		}
		clear(outs)
	}
	// Rank best first; the sort is stable, so ties keep the start order.
	slices.SortStableFunc(ms.modes, func(a, b Mode) int {
		switch {
		case better(&a, &b, false):
			return -1
		case better(&b, &a, false):
			return 1
		}
		return 0
	})
	// A mode whose representative changed can lose the lead to one whose Laplace fit was not
	// kept: search again from that mode's start (deterministic, so the same fit).
	if len(ms.modes) > 0 && ms.modes[0].from != bestFrom {
		lap, err := laplace(target, startPoint(cfg, d, ms.modes[0].from), cfg.InitIter)
		ms.evals += lap.Evals
		if err != nil {
			lap = nil // not reached: the same search succeeded before
		}
		ms.best = lap
	}
	return ms
}

// unseen is the Good–Turing estimate f₁/n of the chance that start n+1 reaches a new mode.
func unseen(modes []Mode, n int) float64 {
	f1 := 0
	for _, m := range modes {
		if m.Count == 1 {
			f1++
		}
	}
	return float64(f1) / float64(n)
}

// bestIndex is the index of the leading mode of ms (better, ties to the earlier).
func bestIndex(ms *modeSearch) int {
	b := 0
	for i := 1; i < len(ms.modes); i++ {
		if better(&ms.modes[i], &ms.modes[b], false) {
			b = i
		}
	}
	return b
}

// better reports whether mode a ranks above mode b: a higher Laplace evidence, or, when either
// evidence is not finite or they are equal, a higher log density; tie reports the answer when
// both are equal too.
func better(a, b *Mode, tie bool) bool {
	ea, eb := a.LogEvidence, b.LogEvidence
	if !isFinite(ea) || !isFinite(eb) || ea == eb {
		ea, eb = a.LogDensity, b.LogDensity
	}
	if ea == eb {
		return tie
	}
	return ea > eb
}

// modeOf is the Mode of a Laplace fit reached from start k.
func modeOf(l *laplaceResult, k int) Mode {
	d := len(l.Mode)
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = math.Sqrt(l.Cov[i*d+i])
	}
	return Mode{Z: clone(l.Mode), SD: sd, LogDensity: l.LogDensity, LogEvidence: l.LogEvidence,
		LogQ: math.NaN(), Count: 1, First: k, DiagHessian: l.DiagHessian, from: k}
}

// sameMode reports whether the end points a and b belong to one mode (see searchModes) and
// the density evaluations it spent.
func sameMode(t *ad.Tape, target model.Target, a, b *Mode) (bool, int) {
	d := len(a.Z)
	diff := make([]float64, d)
	var da, db float64
	for i := range diff {
		diff[i] = b.Z[i] - a.Z[i]
		da += (diff[i] / a.SD[i]) * (diff[i] / a.SD[i])
		db += (diff[i] / b.SD[i]) * (diff[i] / b.SD[i])
	}
	if da < 1 || db < 1 {
		return true, 0
	}
	low := min(a.LogDensity, b.LogDensity)
	x := make([]float64, d)
	for k := 1; k <= valleyPoints; k++ {
		s := float64(k) / (valleyPoints + 1)
		for i := range x {
			x[i] = a.Z[i] + s*diff[i]
		}
		t.Reset()
		lp := t.Float(target.LogDensity(t, t.Input(x)))
		if !(lp >= low-valleyDepth) { // NaN or −∞ is a barrier too
			return false, k
		}
	}
	return true, valleyPoints
}

// startNote describes the search in the words of Result.InitNote.
func (ms *modeSearch) startNote() string {
	if ms.starts <= 1 {
		return ""
	}
	s := fmt.Sprintf("; %d starts (start 0 at the initial point, the others uniform(−r, r) per coordinate, r = %g, %g, %g in turn) found %d distinct mode(s)", ms.starts, startRadius, 2*startRadius, 4*startRadius, len(ms.modes))
	if ms.doubled > 0 {
		s += fmt.Sprintf(" (the starts were doubled %d time(s): modes reached by one start only suggested unseen ones)", ms.doubled)
	}
	if ms.failed > 0 {
		s += fmt.Sprintf(", %d search(es) failed", ms.failed)
	}
	if len(ms.modes) > 0 {
		s += fmt.Sprintf("; q starts at the mode of highest Laplace evidence (%.6g, reached by %d start(s), first by start %d)", ms.modes[0].LogEvidence, ms.modes[0].Count, ms.modes[0].First)
	}
	return s
}

// cloneModes returns a deep copy of m.
func cloneModes(m []Mode) []Mode {
	if m == nil {
		return nil
	}
	out := make([]Mode, len(m))
	for i, x := range m {
		x.Z, x.SD = clone(x.Z), clone(x.SD)
		out[i] = x
	}
	return out
}

type modeJSON struct {
	Z           []float64 `json:"z"`
	SD          []float64 `json:"sd"`
	LogDensity  jfloat    `json:"log_density"`
	LogEvidence jfloat    `json:"log_evidence"`
	LogQ        jfloat    `json:"log_q"`
	Count       int       `json:"count"`
	First       int       `json:"first_start"`
	DiagHessian bool      `json:"diagonal_hessian,omitempty"`
}

// MarshalJSON writes the mode; a non-finite number is written as null (NaN) or "Inf"/"-Inf",
// as in Diagnostics.
func (m Mode) MarshalJSON() ([]byte, error) {
	return json.Marshal(modeJSON{m.Z, m.SD, jfloat(m.LogDensity), jfloat(m.LogEvidence), jfloat(m.LogQ), m.Count, m.First, m.DiagHessian})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Mode) UnmarshalJSON(b []byte) error {
	w := modeJSON{LogQ: jfloat(math.NaN())}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Mode{Z: w.Z, SD: w.SD, LogDensity: float64(w.LogDensity), LogEvidence: float64(w.LogEvidence), LogQ: float64(w.LogQ),
		Count: w.Count, First: w.First, DiagHessian: w.DiagHessian}
	return nil
}
