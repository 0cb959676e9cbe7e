package apovi

import (
	"encoding/json"
	"fmt"
	"io"
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

// Load reads a model written by Save. It checks the format, the version, the configuration
// and that the parameter vector has the length the configuration implies.
func Load(r io.Reader) (Model, error) {
	var s savedModel
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("apovi: Load: %w", err)
	}
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
