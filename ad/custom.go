package ad

import "fmt"

// Backwarder is the reverse-mode rule of a custom node (see Tape.Custom). Backward is called
// once per backward pass that reaches the node, with the node's output adjoint ȳ available as
// c.Grad(); it must add (∂y/∂a)ᵀ·ȳ to the adjoint t.Grad(a) of every argument a whose adjoint
// is not nil (constants have none) and must not record ops. It may read the node's value, its
// aux cache and the arguments' values, and take tape memory with c.Tape().Scratch.
//
// Implementations are usually small pointer types made once (a pointer in an interface costs
// no allocation); per-node state belongs in the aux cache, not in the Backwarder, so that one
// Backwarder can serve many nodes and tapes (goroutines) at once.
type Backwarder interface {
	Backward(c Custom)
}

// Custom is a handle to a vector-valued node whose value is written by the caller and whose
// backward pass is a Backwarder: the general form of a fused operation y = f(a_1, …, a_k)
// with a vector output, for computations with many outputs that share work (a whole flow
// layer, the coefficients and values of many polynomials) where a scalar Fused node per
// output or a chain of elementwise nodes would cost more. Use:
//
//	c := t.Custom(back, n, naux, a, b)   // records the node; value and aux are zero
//	y, aux := c.Value(), c.Aux()
//	... fill y from t.Value(a), t.Value(b); keep in aux what back needs ...
//	out := c.Var()
//
// The value must be filled before the node is used by another op. Like Fused, the caller
// owns the correctness of the derivatives: test them against finite differences.
type Custom struct {
	t  *Tape
	id int32
}

// Custom records a node of size n whose arguments are args and whose backward rule is back,
// with an aux cache of naux zeroed float64s, and returns its handle. Cost: one node, no heap
// allocation in steady state.
func (t *Tape) Custom(back Backwarder, n, naux int, args ...Var) Custom {
	if back == nil || n < 0 || naux < 0 {
		panic(fmt.Sprintf("ad: Custom: back=%v, n=%d, naux=%d", back, n, naux))
	}
	lo := int32(len(t.args))
	for _, a := range args {
		t.nd(a) // panics for a Var that is not on this tape
		t.args = append(t.args, a.id)
	}
	t.fns = append(t.fns, back)
	v, nd := t.newNode(opCustom, -1, int32(len(t.fns)-1), n, 1)
	nd.lo, nd.hi = lo, int32(len(t.args))
	clear(nd.val)
	if naux > 0 {
		nd.aux = t.mem.allocZero(naux)
	}
	return Custom{t: t, id: v.id}
}

// CustomUninit is Custom with an aux cache whose contents are arbitrary (left over from
// earlier nodes) instead of zero: for a forward that writes every aux entry its Backward
// reads, it saves clearing naux values per node (a Bernstein flow's per-draw record is ≈ 10
// KB, whose clearing was ≈ 4% of a gradient step). The value is still zeroed.
func (t *Tape) CustomUninit(back Backwarder, n, naux int, args ...Var) Custom {
	if naux < 0 {
		panic(fmt.Sprintf("ad: CustomUninit: naux=%d", naux))
	}
	c := t.Custom(back, n, 0, args...)
	if naux > 0 {
		t.nodes[c.id].aux = t.mem.alloc(naux)
	}
	return c
}

// Var returns the node as a Var for use in other ops.
func (c Custom) Var() Var { return Var{c.id} }

// Tape returns the tape the node is on.
func (c Custom) Tape() *Tape { return c.t }

// Value returns the node's value (write it after Custom, read it in Backward).
func (c Custom) Value() []float64 { return c.t.nodes[c.id].val }

// Grad returns the node's output adjoint ȳ (meaningful inside Backward).
func (c Custom) Grad() []float64 { return c.t.nodes[c.id].adj }

// Aux returns the node's aux cache (length naux of Custom).
func (c Custom) Aux() []float64 { return c.t.nodes[c.id].aux }

// NumArgs returns the number of arguments.
func (c Custom) NumArgs() int {
	n := &c.t.nodes[c.id]
	return int(n.hi - n.lo)
}

// Arg returns argument i (in the order given to Custom).
func (c Custom) Arg(i int) Var {
	n := &c.t.nodes[c.id]
	if i < 0 || i >= int(n.hi-n.lo) {
		panic(fmt.Sprintf("ad: Custom.Arg: %d out of range (%d arguments)", i, n.hi-n.lo))
	}
	return Var{c.t.args[int(n.lo)+i]}
}
