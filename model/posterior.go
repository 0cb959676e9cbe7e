package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/diag"
)

// PosteriorInfo is a posteriordb posterior description
// (posteriors/NAME.json): which model and data make the posterior and the
// size of each reported parameter.
type PosteriorInfo struct {
	Name      string // "eight_schools-eight_schools_noncentered"
	ModelName string // "eight_schools_noncentered"
	DataName  string // "eight_schools": the data file is data/DATA_NAME.json.zip
	// Dimensions maps each parameter in the reference draws to its number
	// of elements: "theta": 8 stands for theta[1] … theta[8], "mu": 1 for
	// the scalar mu (or a vector of length 1), "w": [3, 4] (a matrix) for 12.
	Dimensions map[string]int
}

// LoadPosteriorInfo reads a posteriordb posterior description (plain JSON,
// or zipped). See ParsePosteriorInfo.
func LoadPosteriorInfo(path string) (*PosteriorInfo, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: posterior info %s: %w", path, err)
	}
	return parsePosteriorInfoBytes(path, b)
}

// ParsePosteriorInfo reads a posteriordb posterior description from r. The
// string fields "name", "model_name", "data_name" and the object
// "dimensions" of positive integers are required; other fields are ignored.
// name is used in error messages.
func ParsePosteriorInfo(name string, r io.Reader) (*PosteriorInfo, error) {
	b, err := readSource(r)
	if err != nil {
		return nil, fmt.Errorf("model: posterior info %s: %w", name, err)
	}
	return parsePosteriorInfoBytes(name, b)
}

func parsePosteriorInfoBytes(name string, b []byte) (*PosteriorInfo, error) {
	fail := func(format string, a ...any) (*PosteriorInfo, error) {
		return nil, fmt.Errorf("model: posterior info %s: "+format, append([]any{name}, a...)...)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fail("%w", jsonError(b, err))
	}
	if err := expectEOF(dec); err != nil {
		return fail("%w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fail("top level is %s, want a JSON object", describe(v))
	}
	info := &PosteriorInfo{Dimensions: map[string]int{}}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &info.Name}, {"model_name", &info.ModelName}, {"data_name", &info.DataName}} {
		s, ok := obj[f.key].(string)
		if !ok || s == "" {
			if _, present := obj[f.key]; !present {
				return fail("field %q: missing", f.key)
			}
			return fail("field %q: %s, want a non-empty string", f.key, describe(obj[f.key]))
		}
		*f.dst = s
	}
	dv, present := obj["dimensions"]
	if !present {
		return fail("field %q: missing", "dimensions")
	}
	dims, ok := dv.(map[string]any)
	if !ok {
		return fail("field %q: %s, want an object", "dimensions", describe(dv))
	}
	if len(dims) == 0 {
		return fail("field %q: empty", "dimensions")
	}
	for k, e := range dims {
		// A size, or (posteriordb's form for matrices) an array of sizes: their product.
		sizes, ok := e.([]any)
		if !ok {
			sizes = []any{e}
		}
		n, why := 1, ""
		if len(sizes) == 0 {
			why = "an empty array, want sizes"
		}
		for _, se := range sizes {
			m, w := toInt(se)
			if w == "" && m <= 0 {
				w = fmt.Sprintf("%d, want a positive size", m)
			}
			if w != "" {
				why = w
				break
			}
			n *= m
		}
		if why != "" {
			return fail("field \"dimensions\", %q: %s", k, why)
		}
		info.Dimensions[k] = n
	}
	return info, nil
}

// CheckDraws checks that the names in d are exactly the parameters of
// p.Dimensions in Stan's flattened form: for "theta": 8 the names theta[1] …
// theta[8]; for "mu": 1 either mu or mu[1]; for an array such as a 2×2
// Cholesky factor "L": 4 the names L[i,j] of a full 2×2 index grid. Names
// must be well formed (identifier, then optionally [i] or [i,j,…] with
// 1-based indices).
func (p *PosteriorInfo) CheckDraws(d *diag.Draws) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("model: PosteriorInfo.CheckDraws: posterior %s: "+format, append([]any{p.Name}, a...)...)
	}
	groups := map[string][][]int{} // base name → index tuples
	for _, name := range d.Names {
		base, idx, ok := parseStanName(name)
		if !ok {
			return fail("draws name %q is not a Stan flattened name", name)
		}
		if _, known := p.Dimensions[base]; !known {
			return fail("draws have %q, not in dimensions", name)
		}
		groups[base] = append(groups[base], idx)
	}
	bases := make([]string, 0, len(p.Dimensions))
	for b := range p.Dimensions {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, base := range bases {
		want := p.Dimensions[base]
		tuples := groups[base]
		if len(tuples) == 0 {
			return fail("%q (dimension %d) is not in the draws", base, want)
		}
		rank := len(tuples[0])
		if rank == 0 {
			if len(tuples) != 1 || want != 1 {
				return fail("%q is a scalar in the draws but has dimension %d", base, want)
			}
			continue
		}
		extent := make([]int, rank)
		seen := map[string]bool{}
		for _, t := range tuples {
			if len(t) != rank {
				return fail("%q has names with %d and %d indices", base, rank, len(t))
			}
			key := fmt.Sprint(t)
			if seen[key] {
				return fail("%q has index %v twice", base, t)
			}
			seen[key] = true
			for k, i := range t {
				extent[k] = max(extent[k], i)
			}
		}
		total := 1
		for _, e := range extent {
			total *= e
		}
		if len(tuples) != want || total != want {
			return fail("%q has %d names spanning %v in the draws, want dimension %d", base, len(tuples), extent, want)
		}
	}
	return nil
}

// parseStanName splits a Stan flattened name such as "L[2,1]" into its base
// "L" and 1-based indices [2 1]. A plain identifier has no indices.
func parseStanName(s string) (base string, idx []int, ok bool) {
	open := strings.IndexByte(s, '[')
	base = s
	if open >= 0 {
		base = s[:open]
	}
	if !isIdent(base) {
		return "", nil, false
	}
	if open < 0 {
		return base, nil, true
	}
	if !strings.HasSuffix(s, "]") {
		return "", nil, false
	}
	for part := range strings.SplitSeq(s[open+1:len(s)-1], ",") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 1 || strconv.Itoa(i) != part {
			return "", nil, false
		}
		idx = append(idx, i)
	}
	return base, idx, true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		digit := r >= '0' && r <= '9'
		if !(letter || r == '_' || i > 0 && digit) {
			return false
		}
	}
	return true
}
