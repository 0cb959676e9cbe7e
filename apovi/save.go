package apovi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// fileFormat and fileVersion identify a saved model.
const (
	fileFormat  = "vigo-apovi-model"
	fileVersion = 1
)

type savedModel struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Kind    string          `json:"kind"` // "apovi", "amfvi" or "povi"
	Config  json.RawMessage `json:"config"`
	Params  []float64       `json:"params"`
}

// loadedModel is savedModel as Load reads it: the parameter array is kept raw and parsed by
// parseFloats, which is several times faster than encoding/json's reflective decoding of a
// []float64 (the bulk of a saved model).
type loadedModel struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Kind    string          `json:"kind"`
	Config  json.RawMessage `json:"config"`
	Params  json.RawMessage `json:"params"`
}

// parseFloats decodes a JSON value that must be null or an array of numbers, as json.Unmarshal
// into a []float64 would: null gives nil, a number outside the float64 range, a token that is
// not a JSON number (RFC 8259 §6 grammar) or an element that is not a number is an error (also
// a null element, which json.Unmarshal would leave 0). Each number is strconv.ParseFloat(·, 64),
// as encoding/json does, so the values are bit for bit the same. Cost: one pass over the bytes.
func parseFloats(raw []byte) ([]float64, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	if b[0] != '[' || b[len(b)-1] != ']' {
		return nil, fmt.Errorf("params: not an array of numbers")
	}
	b = bytes.TrimSpace(b[1 : len(b)-1])
	out := make([]float64, 0, bytes.Count(b, []byte{','})+1)
	if len(b) == 0 {
		return out, nil
	}
	for k := 0; ; k++ {
		tok, more := b, false
		if i := bytes.IndexByte(b, ','); i >= 0 {
			tok, b, more = b[:i], b[i+1:], true
		}
		tok = bytes.TrimSpace(tok)
		if !jsonNumber(tok) {
			return nil, fmt.Errorf("params[%d]: not a number", k)
		}
		v, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return nil, fmt.Errorf("params[%d]: %w", k, err)
		}
		out = append(out, v)
		if !more {
			break
		}
	}
	return out, nil
}

// Save writes m as one JSON object: format and version, the model kind, its configuration and
// its parameter vector (no training data). Floats are written in Go's shortest round-trip
// form, so Load restores the parameters bit for bit.
func Save(w io.Writer, m Model) error {
	s := savedModel{Format: fileFormat, Version: fileVersion, Params: m.Params()}
	var cfg any
	switch m := m.(type) {
	case *APOVI:
		s.Kind, cfg = "apovi", m.cfg
	case *AMFVI:
		s.Kind, cfg = "amfvi", m.cfg
	case *POVI:
		s.Kind, cfg = "povi", m.cfg
	default:
		return fmt.Errorf("apovi: Save: unsupported model type %T", m)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("apovi: Save: %w", err)
	}
	s.Config = raw
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("apovi: Save: %w", err)
	}
	return nil
}

// jsonNumber reports whether b is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(b []byte) bool {
	i, n := 0, len(b)
	digits := func() int {
		j := i
		for i < n && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < n && b[i] == '-' {
		i++
	}
	switch {
	case i < n && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < n && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == n
}

// splitParams finds the value of the top-level member "params" when it is an array and
// returns the document with that array replaced by null, and the array; otherwise it returns
// the document unchanged and nil. encoding/json then decodes (and validates) the small rest,
// and parseFloats the array, which it validates itself: the pair accepts exactly the documents
// whose rest is valid JSON and whose params array holds only numbers. A second top-level
// "params" array is an error (encoding/json would keep the last). Cost: one pass over the bytes.
func splitParams(raw []byte) (rest, params []byte, err error) {
	n := len(raw)
	skipString := func(i int) int { // i at the opening quote; returns the index after the closing one, or -1
		for j := i + 1; j < n; j++ {
			switch raw[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	}
	skipSpace := func(i int) int {
		for i < n && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
		return i
	}
	lo, hi := -1, -1
	depth := 0
	for i := 0; i < n; {
		switch c := raw[i]; c {
		case '"':
			j := skipString(i)
			if j < 0 {
				return raw, nil, nil // unterminated: encoding/json reports it
			}
			if depth == 1 && string(raw[i:j]) == `"params"` {
				k := skipSpace(j)
				if k < n && raw[k] == ':' {
					if k = skipSpace(k + 1); k < n && raw[k] == '[' {
						e, d := k, 0
						for e < n {
							switch raw[e] {
							case '"':
								if e = skipString(e); e < 0 {
									return raw, nil, nil
								}
								continue
							case '[', '{':
								d++
							case ']', '}':
								d--
							}
							e++
							if d == 0 {
								break
							}
						}
						if d != 0 {
							return raw, nil, nil
						}
						if lo >= 0 {
							return nil, nil, fmt.Errorf("apovi: Load: two top-level params members")
						}
						lo, hi = k, e
						i = e
						continue
					}
				}
			}
			i = j
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		i++
	}
	if lo < 0 {
		return raw, nil, nil
	}
	rest = make([]byte, 0, n-(hi-lo)+4)
	rest = append(append(append(rest, raw[:lo]...), "null"...), raw[hi:]...)
	return rest, raw[lo:hi], nil
}

// Load reads a model written by Save. It checks the format, the version, the configuration
// and that the parameter vector has the length the configuration implies.
func Load(r io.Reader) (Model, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("apovi: Load: %w", err)
	}
	rest, arr, err := splitParams(raw)
	if err != nil {
		return nil, err
	}
	var ls loadedModel
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ls); err != nil {
		return nil, fmt.Errorf("apovi: Load: %w", err)
	}
	if arr == nil {
		arr = ls.Params
	}
	params, err := parseFloats(arr)
	if err != nil {
		return nil, fmt.Errorf("apovi: Load: %w", err)
	}
	s := savedModel{Format: ls.Format, Version: ls.Version, Kind: ls.Kind, Config: ls.Config, Params: params}
	if s.Format != fileFormat {
		return nil, fmt.Errorf("apovi: Load: format=%q, want %q", s.Format, fileFormat)
	}
	if s.Version != fileVersion {
		return nil, fmt.Errorf("apovi: Load: version=%d, this build reads version %d", s.Version, fileVersion)
	}
	var m Model
	mismatch := func(want int) error {
		if want < 0 {
			return fmt.Errorf("apovi: Load: the %s configuration implies more than %d parameters (len(params)=%d)", s.Kind, len(s.Params), len(s.Params))
		}
		return fmt.Errorf("apovi: Load: len(params)=%d, the %s configuration has %d parameters", len(s.Params), s.Kind, want)
	}
	switch s.Kind {
	case "apovi", "amfvi":
		var cfg Config
		if err := json.Unmarshal(s.Config, &cfg); err != nil {
			return nil, fmt.Errorf("apovi: Load: config: %w", err)
		}
		if err := cfg.validate("Load"); err != nil {
			return nil, err
		}
		if n := countParams(s.Kind, cfg.DX, cfg.DY, cfg.Hidden, cfg.InferenceHidden, 0, cfg.Likelihood, len(s.Params)); n != len(s.Params) {
			return nil, mismatch(n)
		}
		var err error
		if s.Kind == "apovi" {
			m, err = NewAPOVI(cfg, 0)
		} else {
			m, err = NewAMFVI(cfg, 0)
		}
		if err != nil {
			return nil, fmt.Errorf("apovi: Load: %w", err)
		}
	case "povi":
		var cfg POVIConfig
		if err := json.Unmarshal(s.Config, &cfg); err != nil {
			return nil, fmt.Errorf("apovi: Load: config: %w", err)
		}
		if err := cfg.validate("Load"); err != nil {
			return nil, err
		}
		if n := countParams(s.Kind, cfg.DX, cfg.DY, cfg.Hidden, nil, cfg.M, cfg.Likelihood, len(s.Params)); n != len(s.Params) {
			return nil, mismatch(n)
		}
		p, err := NewPOVI(cfg, 0)
		if err != nil {
			return nil, fmt.Errorf("apovi: Load: %w", err)
		}
		m = p
	default:
		return nil, fmt.Errorf("apovi: Load: unknown kind=%q (want apovi, amfvi or povi)", s.Kind)
	}
	if err := m.SetParams(s.Params); err != nil {
		return nil, fmt.Errorf("apovi: Load: %w", err)
	}
	return m, nil
}
