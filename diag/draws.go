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
