package diag

import "fmt"

// Draws are draws of D named scalars from one or more chains, stored as Stan CSV rows:
// Chains[c][s·D + d] is variable d in draw s of chain c. A single run of independent draws
// (a variational fit) is one chain.
type Draws struct {
	Names  []string
	Chains [][]float64
}

// Dim returns the number of variables D.
func (d *Draws) Dim() int { return len(d.Names) }

// Len returns the total number of draws over all chains.
func (d *Draws) Len() int {
	n := 0
	for _, c := range d.Chains {
		n += len(c)
	}
	if len(d.Names) == 0 {
		return 0
	}
	return n / len(d.Names)
}

// Check returns an error unless every chain holds a whole number of draws and all chains
// have the same length.
func (d *Draws) Check() error {
	D := len(d.Names)
	if D == 0 {
		return fmt.Errorf("diag: Draws.Check: no variables")
	}
	if len(d.Chains) == 0 {
		return fmt.Errorf("diag: Draws.Check: no chains")
	}
	for c, ch := range d.Chains {
		if len(ch)%D != 0 {
			return fmt.Errorf("diag: Draws.Check: chain %d has %d values, not a multiple of %d variables", c, len(ch), D)
		}
		if len(ch) != len(d.Chains[0]) {
			return fmt.Errorf("diag: Draws.Check: chains of unequal length (chain 0 has %d values, chain %d has %d)", len(d.Chains[0]), c, len(ch))
		}
		if len(ch) == 0 {
			return fmt.Errorf("diag: Draws.Check: chain %d is empty", c)
		}
	}
	return nil
}

// Var returns the draws of variable j, one new slice per chain.
func (d *Draws) Var(j int) [][]float64 {
	D := len(d.Names)
	if j < 0 || j >= D {
		panic(fmt.Sprintf("diag: Draws.Var: index out of range (j=%d, D=%d)", j, D))
	}
	out := make([][]float64, len(d.Chains))
	for c, ch := range d.Chains {
		out[c] = make([]float64, len(ch)/D)
		for s := range out[c] {
			out[c][s] = ch[s*D+j]
		}
	}
	return out
}

// Index returns the position of the variable called name, or −1.
func (d *Draws) Index(name string) int {
	for i, n := range d.Names {
		if n == name {
			return i
		}
	}
	return -1
}

// ChainLen returns the number of draws in each chain (of chain 0; Check verifies that all
// chains have as many).
func (d *Draws) ChainLen() int {
	if len(d.Names) == 0 || len(d.Chains) == 0 {
		return 0
	}
	return len(d.Chains[0]) / len(d.Names)
}

// Row returns draw i of chain c, the D values in Names order. The slice shares memory with
// d. It panics if c or i is out of range.
func (d *Draws) Row(c, i int) []float64 {
	D := len(d.Names)
	return d.Chains[c][i*D : (i+1)*D : (i+1)*D]
}

// Select returns new draws holding only the named variables, in the given order, from every
// chain. Cost O(len(names)·Len()). Errors name the first variable d lacks.
func (d *Draws) Select(names ...string) (*Draws, error) {
	idx := make([]int, len(names))
	for k, n := range names {
		if idx[k] = d.Index(n); idx[k] < 0 {
			return nil, fmt.Errorf("diag: Draws.Select: no variable %q", n)
		}
	}
	D := len(d.Names)
	out := &Draws{Names: append([]string(nil), names...), Chains: make([][]float64, len(d.Chains))}
	for c, ch := range d.Chains {
		n := len(ch) / max(D, 1)
		rows := make([]float64, 0, n*len(idx))
		for s := range n {
			for _, j := range idx {
				rows = append(rows, ch[s*D+j])
			}
		}
		out.Chains[c] = rows
	}
	return out, nil
}
