package apovi

import (
	"fmt"
	"math"
)

// EarlyStop is the thesis's early-stopping rule (Rochussen 2023, train_metamodel / train_model;
// §3 of ../shared/docs/apovi.md). After the iteration with 0-based index i > Min, with ℓ the
// history of batch losses (ℓ₀ … ℓᵢ):
//
//	c = mean of the last Smooth losses,
//	r = Σ ℓ[len−Ref−Smooth : len−Ref] / Smooth   (Python slice semantics),
//	stop when |r − c| < Thresh·|r|.
//
// Ref is the report's "patience", Smooth its "smoothing". The rule needs Ref < Min and
// Smooth < Min. Thresh 0 means 0.01. The zero EarlyStop (Min 0) never stops: training runs to
// the iteration cap.
//
// Cost: O(Smooth) per check.
type EarlyStop struct {
	Min, Ref, Smooth int
	Thresh           float64
}

// Enabled reports whether the rule is on (Min > 0).
func (e EarlyStop) Enabled() bool { return e.Min > 0 }

// Validate reports a bad field: Min, Ref or Smooth negative, Ref ≥ Min or Smooth ≥ Min when
// enabled, Smooth < 1 when enabled, Thresh negative or not finite.
func (e EarlyStop) Validate() error {
	switch {
	case e.Min < 0:
		return fmt.Errorf("apovi: EarlyStop: Min must be ≥ 0 (Min=%d)", e.Min)
	case e.Thresh < 0 || math.IsNaN(e.Thresh) || math.IsInf(e.Thresh, 0):
		return fmt.Errorf("apovi: EarlyStop: Thresh must be finite and ≥ 0 (Thresh=%v)", e.Thresh)
	case !e.Enabled():
		return nil
	case e.Smooth < 1:
		return fmt.Errorf("apovi: EarlyStop: Smooth must be ≥ 1 (Smooth=%d)", e.Smooth)
	case e.Ref < 0:
		return fmt.Errorf("apovi: EarlyStop: Ref must be ≥ 0 (Ref=%d)", e.Ref)
	case e.Ref >= e.Min:
		return fmt.Errorf("apovi: EarlyStop: need Ref < Min (Ref=%d, Min=%d)", e.Ref, e.Min)
	case e.Smooth >= e.Min:
		return fmt.Errorf("apovi: EarlyStop: need Smooth < Min (Smooth=%d, Min=%d)", e.Smooth, e.Min)
	}
	return nil
}

// Stop reports whether training stops after the iteration whose 0-based index is
// len(losses)−1, given the batch losses so far.
func (e EarlyStop) Stop(losses []float64) bool {
	if !e.Enabled() {
		return false
	}
	i := len(losses) - 1
	if i <= e.Min {
		return false
	}
	thr := e.Thresh
	if thr == 0 {
		thr = 0.01
	}
	s := float64(e.Smooth)
	c := sum(pySlice(losses, -e.Smooth, len(losses))) / s
	r := sum(pySlice(losses, -e.Ref-e.Smooth, -e.Ref)) / s
	return math.Abs(r-c) < math.Abs(thr*r)
}

// pySlice is Python's v[a:b] for a, b that may be negative (counted from the end), clamped to
// the slice; b = 0 after a negative a means the empty slice as in Python (v[-3:-0] is empty).
func pySlice(v []float64, a, b int) []float64 {
	n := len(v)
	norm := func(k int) int {
		if k < 0 {
			k += n
		}
		return min(max(k, 0), n)
	}
	lo, hi := norm(a), norm(b)
	if hi <= lo {
		return nil
	}
	return v[lo:hi]
}

func sum(v []float64) float64 {
	s := 0.0
	for _, a := range v {
		s += a
	}
	return s
}
