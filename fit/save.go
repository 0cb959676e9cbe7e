package fit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/rng"
)

// SaveFormat and SaveVersion identify a saved fit (fit.json). A reader accepts versions up to
// SaveVersion and refuses newer ones, naming the field and the version. History: version 1
// held the Gaussian families, version 2 added flows (KindFlow), version 3 stores the Recipe
// that ran ("recipe") instead of the loop's configuration ("config", Go field names). Files of
// every earlier version load; they are written at version 4. Version 4 added ensembles
// (family kind KindMixture with "mixture").
const (
	SaveFormat  = "vigo-fit"
	SaveVersion = 4
)

// mixtureVersion is the first version that can hold a mixture.
const mixtureVersion = 4

// Family kinds in a saved fit.
const (
	KindMeanField = "meanfield"
	KindFullRank  = "fullrank"
	KindLowRank   = "lowrank"
	// KindMixture is an ensemble's mixture (Saved.Mixture holds its members).
	KindMixture = "mixture"
)

// drawStream is the RNG stream of the diagnostic draws (Result.Draws) and of Saved.Sample.
const drawStream = 2

// Saved is a fitted approximation as one JSON document (DESIGN.md §4): everything needed to
// draw from q and to map the draws to the Stan parameters without the model or its data — the
// family, its parameters, the preconditioning map, the parameter layout — plus the model's
// name, the configuration and the diagnostics, for the record.
//
// q is the base family pushed through z = Shift + Scale·u (see Affine), over the unconstrained
// vector z of the layout; the Stan parameters are the layout's constrained values of z.
type Saved struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Vigo    string `json:"vigo_version,omitempty"`

	Model     string `json:"model"`
	Posterior string `json:"posterior,omitempty"`
	Data      string `json:"data,omitempty"` // where the data came from ("embedded" or a file)

	Family    FamilySpec `json:"family"`
	Params    []float64  `json:"params"`
	Shift     []float64  `json:"shift"`
	Scale     []float64  `json:"scale"` // d×d lower triangular, row-major, or d values when ScaleDiag
	ScaleDiag bool       `json:"scale_is_diagonal"`

	Layout []model.ParamSpec `json:"layout"`
	// Names are the layout's constrained values, Stan-flattened ("theta_trans[1]", "tau");
	// Reported are what the model reports (transformed parameters included), which can need
	// the data and so are not reproducible from this file alone.
	Names    []string `json:"names"`
	Reported []string `json:"reported,omitempty"`

	// Mean and SD of q, coordinate by coordinate, in unconstrained space.
	Mean []float64 `json:"unconstrained_mean"`
	SD   []float64 `json:"unconstrained_sd"`

	// Recipe is the recipe that ran (Run); absent for a fit made by Fit with the caller's
	// own family. Config is the loop configuration that files of versions 1 and 2 stored
	// instead (read only: written files carry the Recipe).
	Recipe      *Recipe      `json:"recipe,omitempty"`
	Config      *Config      `json:"config,omitempty"`
	Diagnostics Diagnostics  `json:"diagnostics"`
	Trace       []TracePoint `json:"trace"`
	// Starts, StartsFailed and Modes are the multi-start search (Result.Modes); absent in
	// files written before it existed and for fits without one.
	Starts       int    `json:"starts,omitempty"`
	StartsFailed int    `json:"starts_failed,omitempty"`
	Modes        []Mode `json:"modes,omitempty"`
	// StartsFailedWhy is why the first failed mode search failed (Result.StartsFailedWhy).
	StartsFailedWhy string `json:"starts_failed_why,omitempty"`

	// Mixture holds the members and weights of an ensemble (Family.Kind KindMixture; then
	// Params are the members' parameters one after the other, Shift and Scale the identity);
	// nil otherwise.
	Mixture *MixtureSpec `json:"mixture,omitempty"`

	aff *family.Affine
	lay *model.Layout
}

// FamilySpec names a base family and its structure.
type FamilySpec struct {
	Kind       string `json:"kind"` // meanfield, fullrank, lowrank or flow
	Dim        int    `json:"dim"`
	Rank       int    `json:"rank,omitempty"`
	Positivity string `json:"positivity,omitempty"` // exp or softplus (the Gaussian families)
	// Name is the flow's standard kind (maf, realnvp, bernstein or flow; family.Flow.Kind) and
	// Flow its structure, for KindFlow.
	Name string     `json:"name,omitempty"`
	Flow *flow.Spec `json:"flow,omitempty"`
	// BaseDF is a flow's Student-t base degrees of freedom (family.FlowBaseDF); absent (0):
	// the standard-normal base, as in files written before it existed.
	BaseDF float64 `json:"base_df,omitempty"`
}

// MixtureSpec is a saved ensemble: the normalised weights and the members, each a fitted
// family with its parameters and preconditioning map in the form a single fit is saved in.
type MixtureSpec struct {
	Weights []float64    `json:"weights"`
	Members []MemberSpec `json:"members"`
	// Bounds are the ensemble's bounds on log Z when it was fitted (for the record; absent
	// for a mixture that was not fitted as an ensemble).
	Bounds *SavedBounds `json:"bounds,omitempty"`
}

// SavedBounds are an EnsembleResult's numbers as fit.json records them (non-finite values as
// the Diagnostics write them).
type SavedBounds struct {
	WeightNote   string   `json:"weight_note"`
	L            int      `json:"l"`
	MISELBO      jfloat   `json:"miselbo"`
	MISELBOSE    jfloat   `json:"miselbo_mcse"`
	MeanIWELBO   jfloat   `json:"mean_iwelbo"`
	IWELBOSE     jfloat   `json:"mean_iwelbo_mcse"`
	MISELBO1     jfloat   `json:"miselbo_1"`
	MeanELBO     jfloat   `json:"mean_elbo"`
	MeanELBOSE   jfloat   `json:"mean_elbo_mcse"`
	JSD          jfloat   `json:"jsd"`
	JSDSE        jfloat   `json:"jsd_mcse"`
	MemberELBO   []jfloat `json:"member_elbo"`
	MemberELBOSE []jfloat `json:"member_elbo_mcse"`
}

func savedBounds(e *EnsembleResult) *SavedBounds {
	b := &SavedBounds{WeightNote: e.WeightNote, L: e.L, MISELBO: jfloat(e.MISELBO), MISELBOSE: jfloat(e.MISELBOSE),
		MeanIWELBO: jfloat(e.MeanIWELBO), IWELBOSE: jfloat(e.IWELBOSE), MISELBO1: jfloat(e.MISELBO1),
		MeanELBO: jfloat(e.MeanELBO), MeanELBOSE: jfloat(e.MeanELBOSE), JSD: jfloat(e.JSD), JSDSE: jfloat(e.JSDSE)}
	for s := range e.ELBO {
		b.MemberELBO = append(b.MemberELBO, jfloat(e.ELBO[s]))
		b.MemberELBOSE = append(b.MemberELBOSE, jfloat(e.ELBOSE[s]))
	}
	return b
}

// MemberSpec is one member of a saved mixture: q_s is Family pushed through Shift + Scale·u.
type MemberSpec struct {
	Family    FamilySpec `json:"family"`
	Params    []float64  `json:"params"`
	Shift     []float64  `json:"shift"`
	Scale     []float64  `json:"scale"`
	ScaleDiag bool       `json:"scale_is_diagonal"`
}

// Diagnostics are the end-of-fit numbers of a Result. Non-finite values are written as JSON
// null (NaN) or the strings "Inf" and "-Inf".
type Diagnostics struct {
	Status         string
	Reason         string
	Iterations     int
	GradEvals      int
	Skipped        int
	InitNote       string
	ELBO, ELBOSE   float64
	KHat           float64
	KHatThreshold  float64
	KHatSD         float64 // bootstrap sd of KHat; 0 in fits saved before it existed
	PSISESS        float64
	Draws          int
	Verdict        string
	ElapsedSeconds float64
}

type diagnosticsJSON struct {
	Status         string `json:"status"`
	Reason         string `json:"reason"`
	Iterations     int    `json:"iterations"`
	GradEvals      int    `json:"grad_evals"`
	Skipped        int    `json:"skipped"`
	InitNote       string `json:"init_note"`
	ELBO           jfloat `json:"elbo"`
	ELBOSE         jfloat `json:"elbo_mcse"`
	KHat           jfloat `json:"khat"`
	KHatThreshold  jfloat `json:"khat_threshold"`
	KHatSD         jfloat `json:"khat_sd"`
	PSISESS        jfloat `json:"psis_ess"`
	Draws          int    `json:"draws"`
	Verdict        string `json:"verdict"`
	ElapsedSeconds jfloat `json:"elapsed_seconds"`
}

// MarshalJSON writes the diagnostics with snake_case keys.
func (d Diagnostics) MarshalJSON() ([]byte, error) {
	return json.Marshal(diagnosticsJSON{d.Status, d.Reason, d.Iterations, d.GradEvals, d.Skipped, d.InitNote,
		jfloat(d.ELBO), jfloat(d.ELBOSE), jfloat(d.KHat), jfloat(d.KHatThreshold), jfloat(d.KHatSD), jfloat(d.PSISESS),
		d.Draws, d.Verdict, jfloat(d.ElapsedSeconds)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Diagnostics) UnmarshalJSON(b []byte) error {
	var w diagnosticsJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = Diagnostics{w.Status, w.Reason, w.Iterations, w.GradEvals, w.Skipped, w.InitNote,
		float64(w.ELBO), float64(w.ELBOSE), float64(w.KHat), float64(w.KHatThreshold), float64(w.KHatSD), float64(w.PSISESS),
		w.Draws, w.Verdict, float64(w.ElapsedSeconds)}
	return nil
}

// jfloat is a float64 that survives JSON when it is not finite.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte("null"), nil
	case math.IsInf(v, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*f = jfloat(math.NaN())
		return nil
	case `"Inf"`:
		*f = jfloat(math.Inf(1))
		return nil
	case `"-Inf"`:
		*f = jfloat(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jfloat(v)
	return nil
}

// SaveInfo is what a Result does not know about its own fit.
type SaveInfo struct {
	Vigo      string        // vigo version
	Model     string        // model name (a zoo name)
	Posterior string        // posteriordb posterior name, if any
	Data      string        // where the data came from
	Layout    *model.Layout // the model's parameter layout: z ↦ Stan parameters
	Reported  []string      // the model's reported quantities, if they differ from the layout's
}

// NewSaved describes res for saving. It fails if the layout does not match the fit's
// dimension or cannot be described (see model.Layout.Spec).
func NewSaved(res *Result, info SaveInfo) (*Saved, error) {
	if res == nil || res.Family == nil {
		return nil, errors.New("fit: NewSaved: no fitted family")
	}
	aff := res.Family
	d := aff.Dim()
	spec, err := baseSpec(aff.Base)
	if err != nil {
		return nil, err
	}
	var mixSpec *MixtureSpec
	if mix, ok := aff.Base.(*family.Mixture); ok {
		if mixSpec, err = mixtureSpec(mix, res.Params); err != nil {
			return nil, err
		}
		if res.Ensemble != nil {
			mixSpec.Bounds = savedBounds(res.Ensemble)
		}
	}
	version := SaveVersion
	if info.Layout == nil {
		return nil, errors.New("fit: NewSaved: no layout")
	}
	if info.Layout.Dim() != d {
		return nil, fmt.Errorf("fit: NewSaved: layout has dimension %d, the fit %d", info.Layout.Dim(), d)
	}
	specs, err := info.Layout.Spec()
	if err != nil {
		return nil, fmt.Errorf("fit: NewSaved: %w", err)
	}
	mean, cov := make([]float64, d), make([]float64, d*d)
	aff.Moments(res.Params, mean, cov)
	sd := make([]float64, d)
	for i := range sd {
		sd[i] = math.Sqrt(cov[i*d+i])
	}
	s := &Saved{
		Format: SaveFormat, Version: version, Vigo: info.Vigo,
		Model: info.Model, Posterior: info.Posterior, Data: info.Data,
		Family: spec, Params: clone(res.Params),
		Shift: clone(aff.Shift), Scale: clone(aff.Scale), ScaleDiag: aff.Diag,
		Layout: specs, Names: info.Layout.Names(), Reported: clone(info.Reported),
		Mean: mean, SD: sd,
		Recipe: res.Recipe,
		Diagnostics: Diagnostics{
			Status: res.Status.String(), Reason: res.Reason, Iterations: res.Iterations,
			GradEvals: res.GradEvals, Skipped: res.Skipped, InitNote: res.InitNote,
			ELBO: res.ELBO, ELBOSE: res.ELBOSE, KHat: res.KHat, KHatThreshold: res.KHatThreshold, KHatSD: res.KHatSD,
			PSISESS: res.PSISESS, Draws: len(res.LogQ), Verdict: res.Verdict,
			ElapsedSeconds: res.Elapsed.Seconds(),
		},
		Trace:   append([]TracePoint(nil), res.Trace...),
		Mixture: mixSpec,
		Starts:  res.Starts, StartsFailed: res.StartsFailed, Modes: cloneModes(res.Modes), StartsFailedWhy: res.StartsFailedWhy,
		aff: aff, lay: info.Layout,
	}
	return s, nil
}

// baseSpec describes a base family.
func baseSpec(base family.Family) (FamilySpec, error) {
	spec := FamilySpec{Dim: base.Dim()}
	switch b := base.(type) {
	case *family.MeanField:
		spec.Kind, spec.Positivity = KindMeanField, b.Positivity().String()
	case *family.FullRank:
		spec.Kind, spec.Positivity = KindFullRank, b.Positivity().String()
	case *family.LowRank:
		spec.Kind, spec.Positivity, spec.Rank = KindLowRank, b.Positivity().String(), b.Rank()
	case *family.Flow:
		fs := b.Flow().Spec()
		spec.Kind, spec.Name, spec.Flow = KindFlow, b.Kind(), &fs
		if nu := b.BaseDF(); !math.IsInf(nu, 1) {
			spec.BaseDF = nu
		}
	case *family.Mixture:
		spec.Kind = KindMixture
	default:
		return spec, fmt.Errorf("fit: NewSaved: family %T cannot be saved", base)
	}
	return spec, nil
}

// mixtureSpec describes a mixture whose members are fitted families (each an *family.Affine
// over a family baseSpec describes).
func mixtureSpec(mix *family.Mixture, params []float64) (*MixtureSpec, error) {
	ms := &MixtureSpec{Weights: mix.Weights()}
	for s := range mix.Len() {
		a, ok := mix.Member(s).(*family.Affine)
		if !ok {
			return nil, fmt.Errorf("fit: NewSaved: mixture member %d is a %T, want a fitted family (*family.Affine)", s, mix.Member(s))
		}
		if _, nested := a.Base.(*family.Mixture); nested {
			return nil, fmt.Errorf("fit: NewSaved: mixture member %d is itself a mixture", s)
		}
		fs, err := baseSpec(a.Base)
		if err != nil {
			return nil, err
		}
		ms.Members = append(ms.Members, MemberSpec{Family: fs, Params: clone(mix.MemberParams(params, s)),
			Shift: clone(a.Shift), Scale: clone(a.Scale), ScaleDiag: a.Diag})
	}
	return ms, nil
}

func clone[T any](x []T) []T {
	if x == nil {
		return nil
	}
	return append([]T(nil), x...)
}

// Write writes s as indented JSON.
func (s *Saved) Write(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("fit: Saved.Write: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// Save writes s to the file path (created or truncated).
func (s *Saved) Save(path string) error {
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("fit: Save: %w", err)
	}
	return nil
}

// Load reads a saved fit from the file path. See Read.
func Load(path string) (*Saved, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fit: Load: %w", err)
	}
	defer f.Close()
	return Read(filepath.Base(path), f)
}

// maxSaved bounds what Read accepts (a full-rank fit in d = 2000 is ≈ 60 MB of JSON).
const maxSaved = 512 << 20

// Read reads a saved fit from r and checks it: the format and version, the family, and that
// every array has the length the family and the layout need. Errors name the file (name) and
// the field: `fit: Read fit.json: field "params": 19 values, meanfield in d=10 needs 20`.
func Read(name string, r io.Reader) (*Saved, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSaved+1))
	if err != nil {
		return nil, fmt.Errorf("fit: Read %s: %w", name, err)
	}
	if len(b) > maxSaved {
		return nil, fmt.Errorf("fit: Read %s: larger than %d bytes", name, maxSaved)
	}
	var s Saved
	if err := json.Unmarshal(b, &s); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return nil, fmt.Errorf("fit: Read %s: field %q: JSON %s where %s is needed", name, te.Field, te.Value, te.Type)
		case errors.As(err, &se):
			return nil, fmt.Errorf("fit: Read %s: line %d: %v", name, lineOf(b, se.Offset), se)
		}
		return nil, fmt.Errorf("fit: Read %s: %w", name, err)
	}
	if bytes.Contains(b, []byte("null")) {
		if err := checkNulls(b); err != nil {
			return nil, fmt.Errorf("fit: Read %s: %w", name, err)
		}
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("fit: Read %s: %w", name, err)
	}
	return &s, nil
}

// checkNulls refuses a JSON null among the numbers of q and of the record: encoding/json
// leaves a []float64 element that is null at 0, which would silently change the fit. It
// decodes the file a second time into pointers, which only files containing "null" pay
// for (the diagnostics write NaN as null legitimately).
func checkNulls(b []byte) error {
	var w struct {
		Params []*float64 `json:"params"`
		Shift  []*float64 `json:"shift"`
		Scale  []*float64 `json:"scale"`
		Mean   []*float64 `json:"unconstrained_mean"`
		SD     []*float64 `json:"unconstrained_sd"`
		Recipe *struct {
			Init struct {
				Point []*float64 `json:"point"`
			} `json:"init"`
		} `json:"recipe"`
		Modes []struct {
			Z  []*float64 `json:"z"`
			SD []*float64 `json:"sd"`
		} `json:"modes"`
		Mixture *struct {
			Weights []*float64 `json:"weights"`
			Members []struct {
				Params []*float64 `json:"params"`
				Shift  []*float64 `json:"shift"`
				Scale  []*float64 `json:"scale"`
			} `json:"members"`
		} `json:"mixture"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err // not reached: the same bytes decoded into Saved
	}
	fields := []struct {
		name string
		x    []*float64
	}{{"params", w.Params}, {"shift", w.Shift}, {"scale", w.Scale}, {"unconstrained_mean", w.Mean}, {"unconstrained_sd", w.SD}}
	if w.Recipe != nil {
		fields = append(fields, struct {
			name string
			x    []*float64
		}{"recipe.init.point", w.Recipe.Init.Point})
	}
	for i, m := range w.Modes {
		fields = append(fields, struct {
			name string
			x    []*float64
		}{fmt.Sprintf("modes[%d].z", i), m.Z}, struct {
			name string
			x    []*float64
		}{fmt.Sprintf("modes[%d].sd", i), m.SD})
	}
	if m := w.Mixture; m != nil {
		type field = struct {
			name string
			x    []*float64
		}
		fields = append(fields, field{"mixture.weights", m.Weights})
		for i, mb := range m.Members {
			p := fmt.Sprintf("mixture.members[%d].", i)
			fields = append(fields, field{p + "params", mb.Params}, field{p + "shift", mb.Shift}, field{p + "scale", mb.Scale})
		}
	}
	for _, f := range fields {
		for i, v := range f.x {
			if v == nil {
				return fmt.Errorf("field %q: value %d is null, want a number", f.name, i)
			}
		}
	}
	return nil
}

func lineOf(b []byte, off int64) int {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return bytes.Count(b[:off], []byte{'\n'}) + 1
}

// check validates s and builds its family and layout.
func (s *Saved) check() error {
	if s.Format != SaveFormat {
		return fmt.Errorf("field \"format\": %q, want %q (is this a vigo fit file?)", s.Format, SaveFormat)
	}
	if s.Version < 1 || s.Version > SaveVersion {
		return fmt.Errorf("field \"version\": %d, this vigo reads versions 1 to %d", s.Version, SaveVersion)
	}
	if s.Recipe != nil {
		if err := s.Recipe.Validate(); err != nil {
			return fmt.Errorf("field \"recipe\": %w", err)
		}
	}
	if s.Family.Kind == KindMixture {
		return s.checkMixture()
	}
	if s.Mixture != nil {
		return fmt.Errorf("field \"mixture\": set for family kind %q, want it only for %q", s.Family.Kind, KindMixture)
	}
	fs := s.Family
	d := fs.Dim
	if d < 1 {
		return fmt.Errorf("field \"family.dim\": %d, want ≥ 1", d)
	}
	// Every length is checked against the file before anything of size d is allocated: every
	// family has at least 2d parameters, so once that holds d is bounded by the file's length
	// and d² cannot overflow; the parameter count of each family is computed in closed form (a
	// flow's by flow.Spec.NumParams) and compared with the saved parameters before the family
	// is built.
	what := fmt.Sprintf("%s in d=%d", fs.Kind, d)
	if d > len(s.Params)/2 {
		return fmt.Errorf("field \"params\": %d values, %s needs at least %d", len(s.Params), what, 2*uint64(d))
	}
	var opts []family.Option
	pos := family.Exp
	switch {
	case fs.Kind == KindFlow:
	case fs.Positivity == family.Exp.String():
	case fs.Positivity == family.Softplus.String():
		pos = family.Softplus
		opts = append(opts, family.WithPositivity(family.Softplus))
	default:
		return fmt.Errorf("field \"family.positivity\": %q, want %q or %q", fs.Positivity, family.Exp, family.Softplus)
	}
	// scales is where the raw scale parameters (σ = exp or softplus of them) start in params.
	var need, scales int
	switch fs.Kind {
	case KindFlow:
		if fs.Flow == nil {
			return fmt.Errorf("field \"family.kind\": %q without a \"family.flow\" description", KindFlow)
		}
		if s.Version < flowVersion {
			return fmt.Errorf("field \"version\": %d, a %s family needs version %d", s.Version, KindFlow, flowVersion)
		}
		need = len(s.Params) // flowFamily compares it with the spec's count
	case KindMeanField:
		need, scales = 2*d, d
	case KindFullRank:
		need, scales = 2*d+d*(d-1)/2, d
	case KindLowRank:
		if fs.Rank < 1 || fs.Rank > d {
			return fmt.Errorf("field \"family.rank\": %d, want 1 to %d", fs.Rank, d)
		}
		need, scales = 2*d+d*fs.Rank, d+d*fs.Rank
	default:
		return fmt.Errorf("field \"family.kind\": %q, want %s, %s, %s, %s or %s", fs.Kind, KindMeanField, KindFullRank, KindLowRank, KindFlow, KindMixture)
	}
	if err := finiteLen("params", s.Params, need, what); err != nil {
		return err
	}
	if err := checkModes(s, d, what); err != nil {
		return err
	}
	if err := finiteLen("shift", s.Shift, d, what); err != nil {
		return err
	}
	ns := d * d
	if s.ScaleDiag {
		ns = d
	}
	if err := finiteLen("scale", s.Scale, ns, what); err != nil {
		return err
	}
	if !s.ScaleDiag {
		if err := lowerTriangular(s.Scale, d); err != nil {
			return err
		}
	}
	if fs.Kind != KindFlow {
		if err := positiveScales(s.Params[scales:scales+d], scales, pos); err != nil {
			return err
		}
	}
	var base family.Family
	switch fs.Kind {
	case KindFlow:
		var err error
		if base, err = flowFamily(fs, len(s.Params)); err != nil {
			return err
		}
	case KindMeanField:
		base = family.NewMeanField(d, opts...)
	case KindFullRank:
		base = family.NewFullRank(d, opts...)
	case KindLowRank:
		base = family.NewLowRank(d, fs.Rank, opts...)
	}
	aff, err := family.NewAffine(base, s.Shift, s.Scale, s.ScaleDiag)
	if err != nil {
		return fmt.Errorf("field \"scale\": %w", err)
	}
	if err := usable(aff, s.Params); err != nil {
		return err
	}
	// The constrained values number at most 4d + (number of parameters) (a Cholesky factor of
	// a correlation matrix has K² values for K(K−1)/2 coordinates): refuse more before
	// building names for them.
	total := 0
	for _, p := range s.Layout {
		n := 1
		for _, dim := range p.Dims {
			if dim < 0 || dim > 4*d+1 {
				return fmt.Errorf("field \"layout\": parameter %s: dims %v do not fit dimension %d", p.Name, p.Dims, d)
			}
			n *= dim
			if n > 4*d+1 {
				return fmt.Errorf("field \"layout\": parameter %s: dims %v do not fit dimension %d", p.Name, p.Dims, d)
			}
		}
		total += n
	}
	if total > 4*d+len(s.Layout) {
		return fmt.Errorf("field \"layout\": %d constrained values for dimension %d", total, d)
	}
	lay, err := model.LayoutFromSpec(s.Layout)
	if err != nil {
		return fmt.Errorf("field \"layout\": %w", err)
	}
	if lay.Dim() != d {
		return fmt.Errorf("field \"layout\": %d unconstrained coordinates, family dimension %d", lay.Dim(), d)
	}
	if got := lay.Names(); len(s.Names) != 0 && !slices.Equal(got, s.Names) {
		return fmt.Errorf("field \"names\": %d names do not match the layout's %d", len(s.Names), len(got))
	}
	s.Names = lay.Names()
	s.aff, s.lay = aff, lay
	return nil
}

// checkMixture validates a saved ensemble: every member as a saved fit of its own (same
// checks, same error messages under "mixture.members[s]"), of the mixture's dimension, the
// weights, and the top-level params equal to the members' parameters one after the other.
func (s *Saved) checkMixture() error {
	if s.Version < mixtureVersion {
		return fmt.Errorf("field \"version\": %d, a %s family needs version %d", s.Version, KindMixture, mixtureVersion)
	}
	mx := s.Mixture
	d := s.Family.Dim
	switch {
	case d < 1:
		return fmt.Errorf("field \"family.dim\": %d, want ≥ 1", d)
	case mx == nil:
		return fmt.Errorf("field \"family.kind\": %q without a \"mixture\" description", KindMixture)
	case len(mx.Members) < 1 || len(mx.Members) > family.MaxMixtureMembers:
		return fmt.Errorf("field \"mixture.members\": %d members, want 1 to %d", len(mx.Members), family.MaxMixtureMembers)
	case len(mx.Weights) != len(mx.Members):
		return fmt.Errorf("field \"mixture.weights\": %d weights for %d members", len(mx.Weights), len(mx.Members))
	}
	fams := make([]family.Family, len(mx.Members))
	var params []float64
	var lay *model.Layout
	for i, m := range mx.Members {
		if m.Family.Kind == KindMixture {
			return fmt.Errorf("field \"mixture.members[%d].family.kind\": %q, a member cannot be a mixture", i, m.Family.Kind)
		}
		if m.Family.Dim != d {
			return fmt.Errorf("field \"mixture.members[%d].family.dim\": %d, the mixture's dimension is %d", i, m.Family.Dim, d)
		}
		ms := &Saved{Format: s.Format, Version: s.Version, Family: m.Family, Params: m.Params, Shift: m.Shift,
			Scale: m.Scale, ScaleDiag: m.ScaleDiag, Layout: s.Layout, Names: s.Names}
		if err := ms.check(); err != nil {
			return fmt.Errorf("field \"mixture.members[%d]\": %w", i, err)
		}
		fams[i] = ms.aff
		params = append(params, m.Params...)
		lay = ms.lay
	}
	if !slices.Equal(params, s.Params) {
		return fmt.Errorf("field \"params\": %d values, want the %d parameters of the mixture's members one after the other", len(s.Params), len(params))
	}
	mix, err := family.NewMixture(fams, mx.Weights)
	if err != nil {
		return fmt.Errorf("field \"mixture.weights\": %w", err)
	}
	if err := finiteLen("shift", s.Shift, d, "a mixture"); err != nil {
		return err
	}
	if err := finiteLen("scale", s.Scale, d, "a mixture (a diagonal identity)"); err != nil {
		return err
	}
	for i := range d {
		if s.Shift[i] != 0 || s.Scale[i] != 1 || !s.ScaleDiag {
			return fmt.Errorf("field \"scale\": a mixture's shift and scale are the identity (0 and a diagonal of 1), coordinate %d has %g and %g", i, s.Shift[i], s.Scale[i])
		}
	}
	aff, err := family.NewAffine(mix, s.Shift, s.Scale, true)
	if err != nil {
		return fmt.Errorf("field \"scale\": %w", err)
	}
	if err := usable(aff, s.Params); err != nil {
		return err
	}
	s.Names = lay.Names()
	s.aff, s.lay = aff, lay
	return nil
}

// lowerTriangular checks that the d×d row-major scale has zeros above its diagonal: Affine
// reads only the lower triangle in some operations and the whole matrix in others, so an
// entry above the diagonal would make draws and densities disagree.
func lowerTriangular(scale []float64, d int) error {
	for i := range d {
		for j := i + 1; j < d; j++ {
			if v := scale[i*d+j]; v != 0 {
				return fmt.Errorf("field \"scale\": value %d (row %d, column %d) is %g above the diagonal of a lower-triangular scale, want 0", i*d+j, i, j, v)
			}
		}
	}
	return nil
}

// positiveScales checks that the raw scale parameters raw (params[off:off+d]) give scales
// σ = pos(raw) that are finite and > 0: a log-sd of 800 is finite but exp(800) = +Inf, and
// one of −800 gives σ = 0; either makes every draw or log density non-finite.
func positiveScales(raw []float64, off int, pos family.Positivity) error {
	for i, r := range raw {
		sigma := math.Exp(r)
		if pos == family.Softplus {
			sigma = mathx.Log1pExp(r)
		}
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return fmt.Errorf("field \"params\": value %d (the scale of coordinate %d) is %g: %s(%g) = %g, want a finite scale > 0", off+i, i, r, pos, r, sigma)
		}
	}
	return nil
}

// usableDraws is the number of test draws usable makes.
const usableDraws = 4

// usable checks that q can be used: a few draws from it (stream 2 of seed 0) and their log densities are finite. The closed-form checks above bound each Gaussian
// scale, but not their products with the saved affine map nor a flow's scales, which are exp
// of a network's output and have no closed form: a flow with a log-scale bias of 800 is
// caught here. A q whose draws overflow only far in its tails passes. Cost: usableDraws draws
// of the family, O(d²) each for full rank.
func usable(aff *family.Affine, params []float64) error {
	z, logq := sampleAffine(aff, params, 0, usableDraws)
	d := aff.Dim()
	for i, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("field \"params\": q is not usable: coordinate %d of a test draw is %g (are the parameters or the scale overflowing?)", i%d, v)
		}
	}
	for _, v := range logq {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("field \"params\": q is not usable: log q of a test draw is %g", v)
		}
	}
	return nil
}

func finiteLen(field string, x []float64, n int, what string) error {
	if len(x) != n {
		return fmt.Errorf("field %q: %d values, %s needs %d", field, len(x), what, n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("field %q: value %d is %g, want finite", field, i, v)
		}
	}
	return nil
}

// Seed is the seed of the saved fit: its recipe's, or the configuration's in files written
// before version 3.
func (s *Saved) Seed() uint64 {
	switch {
	case s.Recipe != nil:
		return s.Recipe.Seed
	case s.Config != nil:
		return s.Config.Seed
	}
	return 0
}

// Approximation returns q: the base family pushed through the saved affine map, and its
// parameters.
func (s *Saved) Approximation() (*family.Affine, []float64) { return s.aff, s.Params }

// ParamLayout returns the layout that maps z to the Stan parameters (Names order).
func (s *Saved) ParamLayout() *model.Layout { return s.lay }

// Dim returns the dimension of z.
func (s *Saved) Dim() int { return s.Family.Dim }

// Sample draws n points z ~ q (n × Dim, row-major) with their log q(z). The draws come from
// stream 2 of seed, the stream Fit uses for its diagnostic draws, so Sample(cfg.Seed, n) of a
// saved fit repeats the first n rows of Result.Draws and Result.LogQ bit for bit. Cost: n
// draws of the family, O(n·d²) for full rank.
func (s *Saved) Sample(seed uint64, n int) (z, logq []float64) {
	return sampleAffine(s.aff, s.Params, seed, n)
}

func sampleAffine(aff *family.Affine, params []float64, seed uint64, n int) (z, logq []float64) {
	d := aff.Dim()
	stream := rng.New(seed, drawStream)
	if _, ok := aff.Base.(*family.Mixture); ok { // an ensemble: stratified over its members
		z, logq = make([]float64, n*d), make([]float64, n)
		family.SampleStratified(aff, params, n, stream.NormFloat64, z, logq)
		return z, logq
	}
	eps := make([]float64, aff.NoiseDim())
	z = make([]float64, n*d)
	logq = make([]float64, n)
	for i := range n {
		for k := range eps {
			eps[k] = stream.NormFloat64()
		}
		logq[i] = aff.Sample(params, eps, z[i*d:(i+1)*d])
	}
	return z, logq
}

// Constrain writes the Stan parameters (Names order) at z into x and returns x; x is
// allocated when nil.
func (s *Saved) Constrain(x, z []float64) []float64 {
	if x == nil {
		x = make([]float64, s.lay.Len())
	}
	s.lay.ConstrainValues(z, x)
	return x
}

// checkModes checks the saved multi-start search: counts within the starts, and each mode's
// point and sds of length d, finite (sds > 0).
func checkModes(s *Saved, d int, what string) error {
	if s.Starts < 0 || s.Starts > MaxStarts || s.StartsFailed < 0 || s.StartsFailed > s.Starts || len(s.Modes) > s.Starts {
		return fmt.Errorf("field \"starts\": %d starts, %d failed and %d modes do not fit together", s.Starts, s.StartsFailed, len(s.Modes))
	}
	for i, m := range s.Modes {
		if err := finiteLen(fmt.Sprintf("modes[%d].z", i), m.Z, d, what); err != nil {
			return err
		}
		if err := finiteLen(fmt.Sprintf("modes[%d].sd", i), m.SD, d, what); err != nil {
			return err
		}
		for j, v := range m.SD {
			if !(v > 0) {
				return fmt.Errorf("field \"modes[%d].sd\": value %d is %g, want > 0", i, j, v)
			}
		}
	}
	return nil
}
