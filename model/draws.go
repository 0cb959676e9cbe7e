package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Draws are posterior draws by chain: posteriordb reference draws, later the
// output of a sampler. Values are on the constrained scale, one column per
// Stan flattened name ("mu", "theta[1]", "L[2,1]").
type Draws struct {
	// Names are the parameter names in the order of the first chain.
	Names []string
	// Chains[c][p][i] is draw i of parameter Names[p] in chain c. All
	// chains have the same number of draws.
	Chains [][][]float64
}

// LoadDraws reads posteriordb reference draws (draws/NAME.json.zip or a
// plain .json file). See ParseDraws.
func LoadDraws(path string) (*Draws, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: draws %s: %w", path, err)
	}
	return parseDrawsBytes(path, b)
}

// ParseDraws reads draws in posteriordb's format from r (plain or as a zip
// archive holding one file): a JSON list of chains, each an object mapping a
// parameter name to its list of draws. Keys may come in a different order in
// each chain. It checks that every chain has the same set of names, no name
// twice, the same number of draws (at least one) for every name, and that
// every value is a finite number. name is used in error messages.
func ParseDraws(name string, r io.Reader) (*Draws, error) {
	b, err := readSource(r)
	if err != nil {
		return nil, fmt.Errorf("model: draws %s: %w", name, err)
	}
	return parseDrawsBytes(name, b)
}

func parseDrawsBytes(name string, b []byte) (*Draws, error) {
	d, err := decodeDraws(b)
	if err != nil {
		return nil, fmt.Errorf("model: draws %s: %w", name, err)
	}
	return d, nil
}

func decodeDraws(b []byte) (*Draws, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := expectDelim(b, dec, '[', "a list of chains"); err != nil {
		return nil, err
	}
	d := &Draws{}
	index := map[string]int{}
	n := -1 // draws per chain, set by the first list read
	for c := 0; dec.More(); c++ {
		if err := expectDelim(b, dec, '{', fmt.Sprintf("chain %d: an object", c+1)); err != nil {
			return nil, err
		}
		var chain [][]float64
		if c > 0 {
			chain = make([][]float64, len(d.Names))
		}
		keys := 0
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, jsonError(b, err)
			}
			key, ok := tok.(string)
			if !ok { // unreachable: the decoder only yields string keys
				return nil, fmt.Errorf("chain %d: object key %v is not a string", c+1, tok)
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("chain %d, %q: %w", c+1, key, jsonError(b, err))
			}
			col, err := drawColumn(v, n)
			if err != nil {
				return nil, fmt.Errorf("chain %d, %q: %w", c+1, key, err)
			}
			n = len(col)
			p, ok := index[key]
			switch {
			case c == 0 && ok, c > 0 && ok && chain[p] != nil:
				return nil, fmt.Errorf("chain %d: %q appears twice", c+1, key)
			case c == 0:
				index[key] = len(d.Names)
				d.Names = append(d.Names, key)
				chain = append(chain, col)
			case !ok:
				return nil, fmt.Errorf("chain %d: %q is not in chain 1", c+1, key)
			default:
				chain[p] = col
			}
			keys++
		}
		if _, err := dec.Token(); err != nil { // the closing '}'
			return nil, jsonError(b, err)
		}
		if keys == 0 {
			return nil, fmt.Errorf("chain %d: no parameters", c+1)
		}
		for p, col := range chain {
			if col == nil {
				return nil, fmt.Errorf("chain %d: %q missing (it is in chain 1)", c+1, d.Names[p])
			}
		}
		d.Chains = append(d.Chains, chain)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, jsonError(b, err)
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	if len(d.Chains) == 0 {
		return nil, fmt.Errorf("no chains")
	}
	return d, nil
}

// drawColumn converts one decoded list of draws. want < 0 accepts any
// non-zero length.
func drawColumn(v any, want int) ([]float64, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s, want a list of numbers", describe(v))
	}
	if len(l) == 0 {
		return nil, fmt.Errorf("no draws")
	}
	if want >= 0 && len(l) != want {
		return nil, fmt.Errorf("want %d draws, got %d", want, len(l))
	}
	col := make([]float64, len(l))
	for i, e := range l {
		num, ok := e.(json.Number)
		if !ok {
			return nil, fmt.Errorf("draw %d: %s, want a number", i+1, describe(e))
		}
		x, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(x, 0) {
			return nil, fmt.Errorf("draw %d: number %s out of range", i+1, clip(string(num)))
		}
		col[i] = x
	}
	return col, nil
}

// expectDelim reads the next token and checks that it is delim.
func expectDelim(b []byte, dec *json.Decoder, delim json.Delim, what string) error {
	off := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return jsonError(b, err)
	}
	if tok != delim {
		line, col := lineCol(b, int(off))
		return fmt.Errorf("line %d, column %d: want %s, got %s", line, col, what, tokenString(tok))
	}
	return nil
}

func tokenString(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case nil:
		return "null"
	default:
		return describe(t)
	}
}

// NumChains returns the number of chains.
func (d *Draws) NumChains() int { return len(d.Chains) }

// NumDraws returns the number of draws in each chain.
func (d *Draws) NumDraws() int {
	if len(d.Chains) == 0 || len(d.Chains[0]) == 0 {
		return 0
	}
	return len(d.Chains[0][0])
}

// Index returns the position of name in Names, or -1.
func (d *Draws) Index(name string) int {
	for p, n := range d.Names {
		if n == name {
			return p
		}
	}
	return -1
}

// Column returns all draws of name, chain after chain, in a new slice of
// NumChains()·NumDraws() values.
func (d *Draws) Column(name string) ([]float64, error) {
	p := d.Index(name)
	if p < 0 {
		return nil, fmt.Errorf("model: Draws.Column: no parameter %q", name)
	}
	out := make([]float64, 0, d.NumChains()*d.NumDraws())
	for _, ch := range d.Chains {
		out = append(out, ch[p]...)
	}
	return out, nil
}

// Draw stores draw i of chain c in dst in Names order and returns
// dst[:len(Names)]. It allocates only if cap(dst) < len(Names). It panics if
// c or i is out of range.
func (d *Draws) Draw(dst []float64, c, i int) []float64 {
	if cap(dst) < len(d.Names) {
		dst = make([]float64, len(d.Names))
	}
	dst = dst[:len(d.Names)]
	for p, col := range d.Chains[c] {
		dst[p] = col[i]
	}
	return dst
}

// Select returns draws with only the named parameters, in the given order.
// The result shares its values with d.
func (d *Draws) Select(names ...string) (*Draws, error) {
	idx := make([]int, len(names))
	for k, n := range names {
		idx[k] = d.Index(n)
		if idx[k] < 0 {
			return nil, fmt.Errorf("model: Draws.Select: no parameter %q", n)
		}
	}
	out := &Draws{Names: append([]string(nil), names...), Chains: make([][][]float64, len(d.Chains))}
	for c, ch := range d.Chains {
		out.Chains[c] = make([][]float64, len(idx))
		for k, p := range idx {
			out.Chains[c][k] = ch[p]
		}
	}
	return out, nil
}
