// Package zoo holds ready-made models: the 12 posteriors of posteriordb's public set
// (stan-dev/posteriordb) ported to Go as targets on the ad tape, with their data loaders and
// the paths of their reference draws.
//
// Each model is built from its posteriordb data file (Load, New) — eight schools also from
// data embedded in the binary (EightSchools) — and evaluates its log density over a flat
// unconstrained vector z: log prior + log likelihood with every normalising constant kept,
// plus the log-Jacobians of Stan's constraining transforms (package bijector) unless the
// Jacobian is switched off (WithJacobian). Likelihoods are fused, vectorised nodes: one node
// per likelihood term, linear regressions through a GLM kernel over a feature-major design
// matrix prepared once at load time, so a gradient costs O(data) with a handful of nodes.
//
// The parametrisations are the ones posteriordb's Stan programs use (MODELS.md in
// ../shared/data/posteriordb): eight_schools and gp_pois_regr are non-centred, and garch's
// beta1 lives on (0, 1 − alpha1). Each model declares its outputs as a model.Model does (Model):
// transformed parameters as derived quantities (theta in eight_schools, f in gp_pois_regr) and,
// for the regressions and eight schools, the per-observation log-likelihood. Reference draws
// report some transformed parameters and not the raw ones; Names, Constrain and Unconstrain
// work in those reported quantities, a selection of the model's columns, so reference draws and
// model output line up name by name.
//
// Models are immutable after construction and safe for concurrent use with one ad.Tape per
// goroutine. A steady-state gradient (one tape reused with Reset) allocates nothing.
//
// References: Magnusson, Torgander, Bürkner, Zhang, Carpenter, Vehtari (2024), "posteriordb:
// Testing, Benchmarking and Developing Bayesian Inference Algorithms", arXiv:2407.04967; the
// models' own sources are in each Description.
package zoo

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// Info describes a zoo model without its data.
type Info struct {
	// Name is the short name used by Get and Load: "eight_schools", "diamonds", ….
	Name string
	// Posterior is the posteriordb posterior name, "eight_schools-eight_schools_noncentered".
	Posterior string
	// Data is the posteriordb data name; the file is data/Data.json.zip.
	Data string
	// Description says in one paragraph what the model is and what makes it hard for VI.
	Description string
}

// DataPath returns the path of the model's data file under a posteriordb directory (the one
// holding data/, draws/ and posteriors/).
func (i Info) DataPath(dir string) string { return filepath.Join(dir, "data", i.Data+".json.zip") }

// DrawsPath returns the path of the posterior's reference draws under a posteriordb directory;
// model.LoadDraws reads them.
func (i Info) DrawsPath(dir string) string {
	return filepath.Join(dir, "draws", i.Posterior+".json.zip")
}

// entry is a registered model: its description and the constructor from data.
type entry struct {
	Info
	build func(d *model.Data) (impl, error)
}

// entries are the zoo's models, one constructor per file (no registry: the list is the one
// place that names them).
func entries() []entry {
	return []entry{arKEntry(), diamondsEntry(), earningsEntry(), eightSchoolsEntry(), garchEntry(),
		gpPoisRegrEntry(), hmmExampleEntry(), kidiqEntry(), lowDimGaussMixEntry(), mesquiteEntry(),
		nesEntry(), sblrcEntry()}
}

// Names returns the short names of all zoo models in sorted order.
func Names() []string {
	es := entries()
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name)
	}
	sort.Strings(names)
	return names
}

// Get returns the description of the named model (a short name from Names, or its
// posteriordb posterior name).
func Get(name string) (Info, error) {
	e, err := lookup(name)
	return e.Info, err
}

func lookup(name string) (entry, error) {
	es := entries()
	for _, e := range es {
		if e.Name == name {
			return e, nil
		}
	}
	for _, e := range es {
		if e.Posterior == name {
			return e, nil
		}
	}
	return entry{}, fmt.Errorf("zoo: Get: unknown model %q (have %s)", name, strings.Join(Names(), ", "))
}

// Load reads the named model's data file from the posteriordb directory dir (required: the
// library does not look for one) and builds the model. Errors name the file and the field.
func Load(name, dir string) (*Model, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, fmt.Errorf("zoo: Load: dir is empty: give the posteriordb directory (model=%s)", e.Name)
	}
	d, err := model.LoadData(e.DataPath(dir))
	if err != nil {
		return nil, err
	}
	return newModel(e, d)
}

// New builds the named model from data already loaded (for example from a file the user
// names, or from ParseData on a reader). Errors name the data and the field.
func New(name string, d *model.Data) (*Model, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return newModel(e, d)
}

func newModel(e entry, d *model.Data) (*Model, error) {
	im, err := e.build(d)
	if err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err)
	}
	tgt := model.Model{Layout: im.layout(), Density: im.density}
	if dq, ok := im.(deriver); ok {
		tgt.Derived, tgt.Derive = dq.derived(), dq.derive
	}
	if ll, ok := im.(likelihood); ok {
		tgt.NumObs, tgt.LogLik = ll.numObs(), ll.logLik
	}
	if err := tgt.Check(); err != nil {
		return nil, fmt.Errorf("zoo: %s: %w", e.Name, err) // a bug in the model's code
	}
	ref := tgt.Layout.Names()
	if r, ok := im.(referencer); ok {
		ref = r.referenceNames()
	}
	return withReported(&Model{Info: e.Info, impl: im, tgt: tgt}, ref)
}

// FromModel makes any model.Model — a Stan program compiled by package stan, a user's own
// model — a posteriordb posterior the benchmarks can run like the built-in ones. info names
// the posterior and its data (Info.DrawsPath locates the reference draws); reported are the
// reference draws' names, each a column of m (Columns: parameters or derived quantities).
// Unconstrain works only when reported are exactly m's parameters (Layout.Names), since the
// inverse of arbitrary derived quantities is unknown.
func FromModel(info Info, m *model.Model, reported []string) (*Model, error) {
	if m == nil || m.Layout == nil {
		return nil, fmt.Errorf("zoo: FromModel: no model or layout (posterior=%s)", info.Posterior)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("zoo: FromModel: %s: %w", info.Posterior, err)
	}
	return withReported(&Model{Info: info, impl: wrapped{m}, tgt: *m}, reported)
}

// wrapped is the impl of a FromModel model.
type wrapped struct{ m *model.Model }

func (w wrapped) layout() *model.Layout                 { return w.m.Layout }
func (w wrapped) density(t *ad.Tape, p []ad.Var) ad.Var { return w.m.Density(t, p) }

func withReported(m *Model, ref []string) (*Model, error) {
	tgt := m.tgt
	e := m.Info
	col := map[string]int{}
	for i, n := range tgt.Columns() {
		col[n] = i
	}
	for _, n := range ref {
		i, ok := col[n]
		if !ok {
			return nil, fmt.Errorf("zoo: %s: reported quantity %s is not a column of the model", e.Name, n)
		}
		m.ref = append(m.ref, i)
	}
	m.refNames = ref
	return m, nil
}

//go:embed data/eight_schools.json
var eightSchoolsJSON string

// EightSchools returns the eight-schools model (non-centred) built from a copy of
// posteriordb's eight_schools data embedded in the binary: it needs no files.
func EightSchools() *Model {
	d, err := model.ParseData("zoo/data/eight_schools.json", strings.NewReader(eightSchoolsJSON))
	if err != nil {
		panic("zoo: EightSchools: embedded data: " + err.Error()) // the file is part of the binary
	}
	m, err := New("eight_schools", d)
	if err != nil {
		panic("zoo: EightSchools: " + err.Error())
	}
	return m
}

// impl is what each model provides: the layout of its Stan parameters block and the log
// density (log prior + log likelihood, all constants kept) of the constrained parameters p,
// one node per layout parameter in declaration order.
type impl interface {
	layout() *model.Layout
	density(t *ad.Tape, p []ad.Var) ad.Var
}

// deriver is implemented by models with derived quantities (model.Model.Derived and Derive).
type deriver interface {
	derived() []model.Quantity
	derive(p, out [][]float64)
}

// likelihood is implemented by models with a per-observation log-likelihood
// (model.Model.NumObs and LogLik).
type likelihood interface {
	numObs() int
	logLik(p [][]float64, out []float64)
}

// referencer is implemented by models whose reference draws report derived quantities
// instead of some parameters (eight_schools: theta for theta_trans; gp_pois_regr: f for
// f_tilde). Without it the reported quantities are the layout's values.
type referencer interface {
	// referenceNames are the reported quantities in posteriordb's order, each a column of the
	// model.
	referenceNames() []string
	// freeReference writes the layout's constrained values for reported values x: the inverse
	// of the derived quantities that replace parameters.
	freeReference(dst, x []float64) error
}

// Model is a posteriordb posterior as a target over ℝ^Dim: LogDensity records log p(x(z)) +
// log J(z) on a tape (without log J after WithJacobian(false)). It implements model.Target;
// Layout maps z to the named constrained parameters of the Stan program.
type Model struct {
	Info
	impl     impl
	tgt      model.Model
	ref      []int    // columns of tgt.Row that are the reported quantities
	refNames []string // their names
}

// Model returns the model as a model.Model: its layout, log density, derived quantities
// (Columns and Row give every column a draws file holds) and per-observation log-likelihood.
// The copy shares m's data and Jacobian setting.
func (m *Model) Model() *model.Model {
	c := m.tgt
	return &c
}

// Dim returns the number of unconstrained coordinates.
func (m *Model) Dim() int { return m.tgt.Dim() }

// Jacobian reports whether LogDensity adds the log-Jacobian of the constraining transforms.
func (m *Model) Jacobian() bool { return !m.tgt.NoJacobian }

// WithJacobian returns a copy of m whose LogDensity adds the log-Jacobian (on, the default and
// what a sampler or VI in ℝ^Dim needs) or leaves it out (off: ℓ, the log posterior density of
// the constrained parameters as a function of z, which is what MODELS.md's Δ compares, and what
// a posterior-mode search on the constrained scale maximises). The copy shares m's data.
func (m *Model) WithJacobian(on bool) *Model {
	c := *m
	c.tgt.NoJacobian = !on
	return &c
}

// LogDensity records the log density at the unconstrained vector z (a node of size Dim) on t
// and returns it as a scalar node. It panics if z has the wrong size.
func (m *Model) LogDensity(t *ad.Tape, z ad.Var) ad.Var { return m.tgt.LogDensity(t, z) }

// Layout returns the layout of the model's parameters (the Stan program's parameters block:
// theta_trans, not theta, for eight_schools). Its Free and ConstrainValues map between z and
// those parameters; Unconstrain and Constrain map between z and the reported quantities.
func (m *Model) Layout() *model.Layout { return m.impl.layout() }

// Names returns the reported quantities in posteriordb's order, with Stan's flattened names
// ("theta[1]", …): the names of the reference draws, a selection of Model().Columns(). They
// include transformed parameters a posterior reports (theta in eight_schools, f in
// gp_pois_regr) and equal Layout().Names() for the other models.
func (m *Model) Names() []string { return slices.Clone(m.refNames) }

// Constrain writes the reported values (Names order) at the unconstrained z into dst and
// returns it; dst is allocated when nil. They are picked from Model().Row. It panics if a
// length is wrong.
func (m *Model) Constrain(dst, z []float64) []float64 {
	lay := m.tgt.Layout
	if len(z) != lay.Dim() {
		panic(fmt.Sprintf("zoo: %s: Constrain: len(z)=%d, want %d", m.Name, len(z), lay.Dim()))
	}
	dst = sized(dst, len(m.ref), m.Name, "Constrain")
	row := m.tgt.Row(nil, z)
	for k, i := range m.ref {
		dst[k] = row[i]
	}
	return dst
}

// Unconstrain writes the unconstrained vector for reported values x (Names order, e.g. one
// reference draw) into dst and returns it; dst is allocated when nil. It returns an error when
// x is outside the support. It panics if a length is wrong.
func (m *Model) Unconstrain(dst, x []float64) ([]float64, error) {
	lay := m.tgt.Layout
	if len(x) != len(m.ref) {
		panic(fmt.Sprintf("zoo: %s: Unconstrain: len(x)=%d, want %d", m.Name, len(x), len(m.ref)))
	}
	par := x
	if _, ok := m.impl.(wrapped); ok && !slices.Equal(m.refNames, lay.Names()) {
		return nil, fmt.Errorf("zoo: %s: Unconstrain: the reported quantities are not the model's parameters (%d reported, %d parameter values)", m.Name, len(x), lay.Len())
	}
	if r, ok := m.impl.(referencer); ok {
		par = make([]float64, lay.Len())
		if err := r.freeReference(par, x); err != nil {
			return nil, fmt.Errorf("zoo: %s: Unconstrain: %w", m.Name, err)
		}
	}
	dst = sized(dst, lay.Dim(), m.Name, "Unconstrain")
	if err := lay.Free(par, dst); err != nil {
		return nil, fmt.Errorf("zoo: %s: Unconstrain: %w", m.Name, err)
	}
	return dst, nil
}

func sized(dst []float64, n int, name, fn string) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("zoo: %s: %s: len(dst)=%d, want %d", name, fn, len(dst), n))
	}
	return dst
}

// flatNames returns Stan's flattened names name[1] … name[n].
func flatNames(name string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s[%d]", name, i+1)
	}
	return s
}
