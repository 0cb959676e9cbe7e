// Package bijector holds the constraint transforms of Stan: smooth bijections from an
// unconstrained vector u ∈ ℝᵐ onto the support of a constrained parameter x, with the log
// absolute Jacobian determinant log J that a density over u must add so that it corresponds to
// the density over x (Stan Reference Manual, "Constraint transforms").
//
// Each transform comes in three forms:
//   - Forward records x(u) and log J(u) on an ad.Tape (a few vector nodes, never one node per
//     element);
//   - Constrain computes the same in plain float64;
//   - Free is the inverse x ↦ u; it returns an error naming the violated condition when x is
//     outside the support (or on its boundary, where u would be infinite).
//
// Directions follow the vigo convention: Forward maps the unconstrained (free) space to the
// constrained space, and log J refers to Forward. Matrices (the Cholesky factors) are row-major
// K×K, as ad.Tape.AsMatrix expects; Forward returns them with that shape.
//
// For maps that change dimension (simplex: K−1 → K; Cholesky factors: m → K²) log J is the log
// determinant of the Jacobian restricted to the coordinates that determine x: the first K−1
// simplex entries, the strictly lower triangle of a correlation factor, the lower triangle of a
// covariance factor. This is the density correction Stan applies.
//
// Every transform of the package describes itself as data (Describer: its Kind, shape and
// bounds as a Spec), and New rebuilds it from that Spec, so that a saved layout names its
// transforms instead of being identified by probing them.
//
// Numerics: the transforms are written in log space where it matters (log-logistic,
// log sech, suffix sums in the inverses), so that x and log J stay finite and accurate for
// |u| up to ≈ 700 wherever the result is representable.
//
// References: Stan Development Team, Stan Reference Manual 2.3x, chapter "Constraint
// transforms"; Stan Math stan/math/prim/constraint (the *_constrain/*_free pairs).
package bijector

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
)

// Bijector is a constraint transform x = f(u) from ℝ^FreeSize() onto a constrained set in
// ℝ^Size().
//
// Forward records x and log J on t for the unconstrained vector node u (size FreeSize). x has
// size Size (matrix-shaped for matrix transforms) and log J is a scalar node.
//
// Constrain writes f(u) into x and returns log J; it does not allocate.
//
// Free writes f⁻¹(x) into u. It returns an error when x is not in the open support (including
// NaN entries and points whose preimage is infinite).
//
// All three panic when a slice or node has the wrong length (programmer error).
type Bijector interface {
	FreeSize() int
	Size() int
	Forward(t *ad.Tape, u ad.Var) (x, logJ ad.Var)
	Constrain(u, x []float64) (logJ float64)
	Free(x, u []float64) error
}

// checkLens panics if u and x do not have the sizes of b.
func checkLens(typ, method string, u, x []float64, free, size int) {
	if len(u) != free || len(x) != size {
		panic(fmt.Sprintf("bijector: %s.%s: len(u)=%d, len(x)=%d, want %d and %d", typ, method, len(u), len(x), free, size))
	}
}

// checkVar panics if the node u does not have size free.
func checkVar(typ, method string, t *ad.Tape, u ad.Var, free int) {
	if n := t.Size(u); n != free {
		panic(fmt.Sprintf("bijector: %s.%s: u has size %d, want %d", typ, method, n, free))
	}
}

// domainErr formats a Free error: "bijector: Name.Free: what".
func domainErr(name, format string, args ...any) error {
	return fmt.Errorf("bijector: %s.Free: "+format, append([]any{name}, args...)...)
}

// scan holds the gather tables of an inclusive prefix sum within contiguous segments, done as a
// Hillis–Steele scan: ⌈log₂ L⌉ rounds (L the longest segment) of v ← v + shift_d(v) with
// d = 1, 2, 4, …. Each round is three tape nodes (Concat with a zero slot, Gather, Add), so a
// prefix sum of n elements costs O(n log n) work and O(log n) nodes, with an exact gradient
// through existing ops.
type scan struct {
	n     int
	steps [][]int // steps[r][p] = p − 2ʳ when that is in p's segment, else n (the zero slot)
}

// newScan builds the tables for segments given by start[p], the index where p's segment
// starts (start is non-decreasing, start[p] ≤ p).
func newScan(start []int) scan {
	n := len(start)
	longest := 0
	for p, s := range start {
		longest = max(longest, p-s+1)
	}
	var steps [][]int
	for d := 1; d < longest; d *= 2 {
		idx := make([]int, n)
		for p := range idx {
			if p-d >= start[p] {
				idx[p] = p - d
			} else {
				idx[p] = n
			}
		}
		steps = append(steps, idx)
	}
	return scan{n: n, steps: steps}
}

// apply returns the segmented inclusive prefix sum of v (size s.n); zero is a size-1 constant 0.
func (s *scan) apply(t *ad.Tape, v, zero ad.Var) ad.Var {
	for _, idx := range s.steps {
		v = t.Add(v, t.Gather(t.Concat(v, zero), idx))
	}
	return v
}

// oneSegment returns start indices for a single segment of length n.
func oneSegment(n int) []int { return make([]int, n) }
