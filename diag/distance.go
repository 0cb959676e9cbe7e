package diag

import (
	"fmt"
	"math"
	"slices"
)

// DefaultQuantiles is the number of equal-count quantiles W1 uses (targets.md).
const DefaultQuantiles = 1000

// W1 returns the 1-D Wasserstein-1 distance between the samples x and ref approximated on
// q equal-count quantiles: (1/q)·Σᵢ |F̂ₓ⁻¹(uᵢ) − F̂_ref⁻¹(uᵢ)|, uᵢ = (i − ½)/q, with R's
// type-7 sample quantiles. q ≤ 0 means DefaultQuantiles. Cost O(n log n + q).
func W1(x, ref []float64, q int) float64 {
	if q <= 0 {
		q = DefaultQuantiles
	}
	if len(x) == 0 || len(ref) == 0 {
		return math.NaN()
	}
	a, b := slices.Clone(x), slices.Clone(ref)
	slices.Sort(a)
	slices.Sort(b)
	return w1Sorted(a, b, q)
}

func w1Sorted(a, b []float64, q int) float64 {
	var s float64
	for i := range q {
		u := (float64(i) + 0.5) / float64(q)
		s += math.Abs(quantileSorted(a, u) - quantileSorted(b, u))
	}
	return s / float64(q)
}

// VarDistance compares one variable's draws with its reference draws.
type VarDistance struct {
	Variable   string
	W1SD       float64 // W1(draws, ref)/sd(ref)
	SDRatio    float64 // sd(draws)/sd(ref)
	MeanDiffSD float64 // |mean(draws) − mean(ref)|/sd(ref)
}

// Distance is the comparison of a set of draws with reference draws, as targets.md defines
// it: W1SD and SDRatio are means over the variables, MaxMeanDiffSD the maximum.
type Distance struct {
	W1SD          float64
	SDRatio       float64
	MaxMeanDiffSD float64
	Vars          []VarDistance
}

// CompareVar returns the distances of one variable's draws x from the reference draws ref.
func CompareVar(name string, x, ref []float64) VarDistance {
	sr := sd(ref)
	return VarDistance{
		Variable:   name,
		W1SD:       W1(x, ref, DefaultQuantiles) / sr,
		SDRatio:    sd(x) / sr,
		MeanDiffSD: math.Abs(mean(x)-mean(ref)) / sr,
	}
}

// MinReferenceDraws is the fewest reference draws (chains pooled) Compare accepts. Every
// distance is in units of the reference's standard deviation, which needs two draws: with one
// it is NaN and so would be every distance. Two is the mathematical floor, not a recommendation:
// W1/sd on N reference draws carries a Monte Carlo error of order 1/√N, so references are
// typically thousands of draws (posteriordb's have 10,000).
const MinReferenceDraws = 2

// CheckReference returns an error unless ref can serve as reference draws: Check passes and
// it holds at least MinReferenceDraws draws. The error gives the draw count. Compare calls it;
// a caller that loads a reference before long work can call it up front. Cost O(1).
func CheckReference(ref *Draws) error {
	if err := ref.Check(); err != nil {
		return fmt.Errorf("diag: CheckReference: %w", err)
	}
	if n := ref.Len(); n < MinReferenceDraws {
		return fmt.Errorf("diag: CheckReference: the reference has %d draw(s); distances are in units of its sd, which needs at least %d (draws=%d)", n, MinReferenceDraws, n)
	}
	return nil
}

// Compare measures d against the reference draws ref, matching variables by name (ref may
// hold more variables, in any order; chains are pooled). Every variable of d must be in ref,
// ref must pass CheckReference, and each matched variable's reference sd must be finite and
// positive (a constant reference variable, or one with a NaN or infinite draw, would make
// its distances ±Inf or NaN): each is an error naming the count or the variable. Cost
// O(D·N log N).
func Compare(d, ref *Draws) (*Distance, error) {
	if err := d.Check(); err != nil {
		return nil, fmt.Errorf("diag: Compare: draws: %w", err)
	}
	if err := CheckReference(ref); err != nil {
		return nil, fmt.Errorf("diag: Compare: %w", err)
	}
	out := &Distance{Vars: make([]VarDistance, d.Dim())}
	for j, name := range d.Names {
		k := ref.Index(name)
		if k < 0 {
			return nil, fmt.Errorf("diag: Compare: variable not in reference draws (variable=%s)", name)
		}
		r := concat(ref.Var(k))
		if s := sd(r); !(s > 0) || math.IsInf(s, 1) {
			return nil, fmt.Errorf("diag: Compare: the reference draws of %s have sd %v over %d draws: distances in units of it are undefined (variable=%s)", name, s, len(r), name)
		}
		v := CompareVar(name, concat(d.Var(j)), r)
		out.Vars[j] = v
		out.W1SD += v.W1SD
		out.SDRatio += v.SDRatio
		out.MaxMeanDiffSD = math.Max(out.MaxMeanDiffSD, v.MeanDiffSD) // NaN propagates
	}
	out.W1SD /= float64(d.Dim())
	out.SDRatio /= float64(d.Dim())
	return out, nil
}
