package ad

import "unsafe"

// memo is one cached derived value (see Tape.Memo). buf is kept for reuse after the entry
// dies (owner == nil).
type memo struct {
	owner any
	root  int32    // first non-view ancestor of the keyed node
	ptr   *float64 // start of the keyed value
	n     int      // length of the keyed value
	buf   []float64
}

// Memo returns a buffer of n float64s that the tape keeps for the pair (owner, value of v),
// and whether it already held a value (ok): the place for a quantity computed from v's value
// alone that many later ops reuse, such as the polynomial coefficients of a flow, which depend
// on the parameters but not on the Monte Carlo draw, computed once per gradient step instead
// of once per draw. When ok is false the caller must fill the buffer.
//
// The key is the value, not the Var: views of the same elements of the same node (Slice,
// AsMatrix, recorded anew for every draw) share the entry. The entry lives as long as the node
// that owns the memory (the first non-view ancestor of v): Rewind to a mark recorded after
// that node keeps it, Reset or Rewind to before it drops it. owner separates different users
// of the same value (use a pointer, which costs no allocation as an interface). The buffer is
// heap memory owned by the tape and reused after the entry is dropped: no allocation in
// steady state. Nothing is recorded on the tape and no gradient flows through the buffer.
func (t *Tape) Memo(owner any, v Var, n int) (buf []float64, ok bool) {
	nd := t.nd(v)
	root := v.id
	for t.nodes[root].op == opView {
		root = t.nodes[root].a
	}
	var ptr *float64
	if len(nd.val) > 0 {
		ptr = unsafe.SliceData(nd.val)
	}
	for i := range t.memos {
		e := &t.memos[i]
		if e.owner == owner && e.root == root && e.ptr == ptr && e.n == len(nd.val) && len(e.buf) == n {
			return e.buf, true
		}
	}
	i := len(t.memos)
	if i < cap(t.memos) {
		t.memos = t.memos[:i+1]
	} else {
		t.memos = append(t.memos, memo{})
	}
	e := &t.memos[i]
	if cap(e.buf) < n {
		e.buf = make([]float64, n)
	}
	e.owner, e.root, e.ptr, e.n, e.buf = owner, root, ptr, len(nd.val), e.buf[:n]
	return e.buf, false
}

// dropMemos discards the memo entries whose root node is at or after node index from, keeping
// their buffers for reuse.
func (t *Tape) dropMemos(from int) {
	k := 0
	for i := range t.memos {
		if int(t.memos[i].root) < from {
			t.memos[k], t.memos[i] = t.memos[i], t.memos[k]
			k++
		}
	}
	for i := k; i < len(t.memos); i++ {
		t.memos[i].owner, t.memos[i].ptr = nil, nil
	}
	t.memos = t.memos[:k]
}
