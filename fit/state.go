package fit

import (
	"encoding/json"
	"fmt"
	"math"
)

// State is everything needed to continue a fit bit for bit: the variational parameters, the
// optimiser's moments, the RNG, the step, the stopping rule's memory and the preconditioner.
// It marshals to JSON (floats round-trip exactly with encoding/json).
type State struct {
	Step       int          `json:"step"`
	Params     []float64    `json:"params"`
	Opt        []byte       `json:"optimizer"`
	RNG        []byte       `json:"rng"`
	LRScale    float64      `json:"lr_scale"`
	DecaysUsed int          `json:"decays_used"`
	Window     []float64    `json:"window"`
	Trace      []TracePoint `json:"trace"`
	Skipped    int          `json:"skipped"`
	GradEvals  int          `json:"grad_evals"`
	Shift      []float64    `json:"shift"`
	Scale      []float64    `json:"scale"`
	Diag       bool         `json:"scale_is_diagonal"`
	InitNote   string       `json:"init_note"`
	// Best holds the parameters with the highest tracking ELBO so far (common random numbers
	// make the estimates comparable) and BestELBO that estimate; the result reports them when
	// they beat the last iterate.
	Best     []float64 `json:"best_params"`
	BestELBO *float64  `json:"best_elbo"`
	BestFrom string    `json:"best_from,omitempty"` // which iterate Best is, in words
	// Avg is the exponential moving average of the parameters (Config.Average > 0).
	Avg []float64 `json:"avg_params,omitempty"`
	// Restarts describes each restart from the best tracked iterate after a divergence
	// (DivergeFactor), in words.
	Restarts []string `json:"restarts,omitempty"`
	// Starts and StartsFailed count the mode searches of the multi-start initialisation and
	// those that failed; Modes are the distinct modes found, best first (Result.Modes).
	Starts       int    `json:"starts,omitempty"`
	StartsFailed int    `json:"starts_failed,omitempty"`
	Modes        []Mode `json:"modes,omitempty"`
	// StartsFailedWhy is Result.StartsFailedWhy.
	StartsFailedWhy string `json:"starts_failed_why,omitempty"`
	// Ensemble is the state of an ensemble fit (Recipe.Ensemble); the fields above are then
	// unused.
	Ensemble *EnsembleState `json:"ensemble,omitempty"`

	skipRun  int
	lastGain float64
	search   *modeSearch // the search of a fresh state (not saved)
}

// MarshalJSON writes the state, including the unexported stopping-rule counters.
func (s *State) MarshalJSON() ([]byte, error) {
	type plain State
	return json.Marshal(struct {
		*plain
		SkipRun  int      `json:"skip_run"`
		LastGain *float64 `json:"last_gain,omitempty"`
	}{(*plain)(s), s.skipRun, finiteOrNil(s.lastGain)})
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	aux := struct {
		*plain
		SkipRun  int      `json:"skip_run"`
		LastGain *float64 `json:"last_gain"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return fmt.Errorf("fit: State: %w", err)
	}
	s.skipRun = aux.SkipRun
	s.lastGain = math.NaN()
	if aux.LastGain != nil {
		s.lastGain = *aux.LastGain
	}
	return nil
}

func finiteOrNil(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func (s *State) clone() *State {
	c := *s
	c.Params = append([]float64(nil), s.Params...)
	c.Opt = append([]byte(nil), s.Opt...)
	c.RNG = append([]byte(nil), s.RNG...)
	c.Window = append([]float64(nil), s.Window...)
	c.Trace = append([]TracePoint(nil), s.Trace...)
	c.Shift = append([]float64(nil), s.Shift...)
	c.Scale = append([]float64(nil), s.Scale...)
	c.Best = append([]float64(nil), s.Best...)
	c.Avg = append([]float64(nil), s.Avg...)
	c.Modes = cloneModes(s.Modes)
	if s.BestELBO != nil {
		v := *s.BestELBO
		c.BestELBO = &v
	}
	c.Ensemble = s.Ensemble.clone()
	return &c
}
