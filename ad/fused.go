package ad

import "fmt"

// FusedBuilder records one scalar node whose partial derivatives with respect to its arguments
// are computed by the caller — how a whole vectorised log density goes on the tape as a single
// node (Stan's operands-and-partials idea). Use:
//
//	fb := t.Fused()
//	dmu := fb.Partial(mu)       // nil if mu is a constant: skip computing it
//	dsig := fb.Partial(sigma)
//	... lp = Σ log p, dmu[i] = ∂lp/∂mu[i], ...
//	out := fb.Done(lp)
//
// Partial slices are zeroed, have the length of their argument and stay valid until the tape is
// Reset or rewound; they must be filled before Done. Between Fused and Done no other op may be
// recorded on the tape. A Var passed twice gets both partials added.
type FusedBuilder struct {
	t     *Tape
	start int32 // first entry in t.parts
}

// Fused starts a fused scalar node.
func (t *Tape) Fused() FusedBuilder {
	return FusedBuilder{t: t, start: int32(len(t.parts))}
}

// Partial registers v as an argument and returns the slice for ∂out/∂v (length Size(v)), or nil
// when v is a constant and needs no partials.
func (fb FusedBuilder) Partial(v Var) []float64 {
	t := fb.t
	n := t.nd(v)
	if n.adj == nil {
		return nil
	}
	d := t.mem.allocZero(len(n.val))
	t.parts = append(t.parts, fpart{id: v.id, d: d})
	return d
}

// Done records the node with value val and returns it.
func (fb FusedBuilder) Done(val float64) Var {
	t := fb.t
	end := int32(len(t.parts))
	if fb.start > end {
		panic("ad: FusedBuilder.Done: tape rewound under the builder")
	}
	v, n := t.newNode(opFused, -1, -1, 1, 1)
	n.val[0] = val
	n.lo, n.hi = fb.start, end
	return v
}

// FusedVec records a scalar node of value val with arguments xs and partials ds (ds[i] has the
// length of xs[i], or is nil to skip). The partials are copied. It is a convenience over
// FusedBuilder for callers that already hold the partials.
func (t *Tape) FusedVec(val float64, xs []Var, ds [][]float64) Var {
	fb := t.Fused()
	for i, x := range xs {
		if ds[i] == nil {
			continue
		}
		if p := fb.Partial(x); p != nil {
			if len(ds[i]) != len(p) {
				panic(fmt.Sprintf("ad: FusedVec: partial %d has length %d, argument has %d", i, len(ds[i]), len(p)))
			}
			copy(p, ds[i])
		}
	}
	return fb.Done(val)
}

// Scratch returns n zeroed float64s of tape memory for intermediate results of a fused node
// (η of a GLM, forward variables of a recursion). It records no node, may be called between
// Fused and Done, and stays valid until the tape is Reset or rewound; after the first
// evaluation it costs no heap allocation.
func (t *Tape) Scratch(n int) []float64 { return t.mem.allocZero(n) }
