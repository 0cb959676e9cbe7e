package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/vigo-bayes/vigo/diag"
)

// LoadDraws reads posteriordb reference draws (draws/NAME.json.zip or a
// plain .json file). See ParseDraws.
func LoadDraws(path string) (*diag.Draws, error) {
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
//
// The draws are on the constrained scale, one variable per Stan flattened
// name ("mu", "theta[1]", "L[2,1]") in the order of the first chain, one
// diag.Draws chain per posteriordb chain.
func ParseDraws(name string, r io.Reader) (*diag.Draws, error) {
	b, err := readSource(r)
	if err != nil {
		return nil, fmt.Errorf("model: draws %s: %w", name, err)
	}
	return parseDrawsBytes(name, b)
}

func parseDrawsBytes(name string, b []byte) (*diag.Draws, error) {
	d, err := decodeDraws(b)
	if err != nil {
		return nil, fmt.Errorf("model: draws %s: %w", name, err)
	}
	return d, nil
}

func decodeDraws(b []byte) (*diag.Draws, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := expectDelim(b, dec, '[', "a list of chains"); err != nil {
		return nil, err
	}
	d := &diag.Draws{}
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
		d.Chains = append(d.Chains, rows(chain))
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

// rows interleaves the columns of one chain (cols[p][i] is draw i of variable
// p) into diag.Draws's row layout.
func rows(cols [][]float64) []float64 {
	D := len(cols)
	out := make([]float64, D*len(cols[0]))
	for p, col := range cols {
		for i, v := range col {
			out[i*D+p] = v
		}
	}
	return out
}
