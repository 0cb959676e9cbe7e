package stan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// Checking a compiled posteriordb posterior against rstan's log_prob (the reference files
// rstan-logprob/NAME.json of the posteriordb-full snapshot; see their README).

// Tolerances of the corpus check: log densities (differences between points, so that
// dropped constants cancel) to LPTol relative, gradients to GradTol relative, constrained
// values to ValueTol relative (each relative to max(1, |reference|)).
const (
	LPTol    = 1e-8
	GradTol  = 1e-7
	ValueTol = 1e-8
)

// CorpusResult is the outcome of one posterior: which stages passed and the first failure.
type CorpusResult struct {
	Posterior string
	Model     string
	Data      string
	// Stages, in order; a stage is attempted only when the previous one passed.
	Parsed, Checked, Loaded, LP, Grad, Values bool
	// Skip says why the posterior has no verdict (no reference, no data file); empty otherwise.
	Skip string
	// Err is the first failure (the unsupported construct, the error, or the mismatch).
	Err string
	// MaxLP and MaxGrad are the largest relative errors seen (NaN when not computed).
	MaxLP, MaxGrad float64
	Dim            int
	// Seconds is the wall time of the whole check (compile and 10 points).
	Seconds float64
}

// Pass reports whether every stage passed.
func (r *CorpusResult) Pass() bool {
	return r.Parsed && r.Checked && r.Loaded && r.LP && r.Grad && r.Values
}

type refPoint struct {
	UparsRaw    any       `json:"upars"`
	Upars       []float64 `json:"-"`
	LPJac       any       `json:"lp_jacobian"`
	LPNoJac     any       `json:"lp_no_jacobian"`
	Grad        any       `json:"grad_jacobian"`
	Constrained any       `json:"constrained"`
}

type refFile struct {
	Posterior string     `json:"posterior"`
	Model     string     `json:"model"`
	Data      string     `json:"data"`
	Status    string     `json:"status"`
	NUpars    int        `json:"n_upars"`
	Points    []refPoint `json:"points"`
}

// num decodes a reference number: a JSON number, or "Inf", "-Inf", "NaN"; an "error: …"
// string is NaN with ok false.
func num(v any) (x float64, ok bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case []any:
		if len(v) == 1 {
			return num(v[0])
		}
	case string:
		switch strings.ToLower(v) {
		case "inf", "+inf":
			return math.Inf(1), true
		case "-inf":
			return math.Inf(-1), true
		case "nan":
			return math.NaN(), true
		}
	}
	return math.NaN(), false
}

// flatten appends the numbers of a nested JSON list, outermost first (row-major).
func flatten(v any, out []float64) []float64 {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			out = flatten(e, out)
		}
	default:
		x, _ := num(v)
		out = append(out, x)
	}
	return out
}

func relErr(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(1, math.Abs(b))
}

// CheckPosterior compiles posterior name of the posteriordb-full snapshot at root (its
// posteriors/, models/, data/ and rstan-logprob/ folders) and compares it with rstan.
func CheckPosterior(root, name string) CorpusResult {
	start := time.Now()
	r := checkPosterior(root, name)
	r.Seconds = time.Since(start).Seconds()
	return r
}

func checkPosterior(root, name string) CorpusResult {
	r := CorpusResult{Posterior: name, MaxLP: math.NaN(), MaxGrad: math.NaN()}
	info, err := model.LoadPosteriorInfo(filepath.Join(root, "posteriors", name+".json"))
	if err != nil {
		r.Skip = err.Error()
		return r
	}
	r.Model, r.Data = info.ModelName, info.DataName
	var ref refFile
	b, err := os.ReadFile(filepath.Join(root, "rstan-logprob", name+".json"))
	if err == nil {
		err = json.Unmarshal(b, &ref)
	}
	switch {
	case err != nil:
		r.Skip = "no rstan reference: " + err.Error()
	case ref.Status != "ok":
		r.Skip = "rstan reference: " + ref.Status
	}
	file := filepath.Join(root, "models", info.ModelName+".stan")
	src, err := os.ReadFile(file)
	if err != nil {
		r.Skip = err.Error()
		return r
	}
	prog, err := Parse(info.ModelName+".stan", src)
	if err != nil {
		r.Err = firstLine(err)
		return r
	}
	r.Parsed = true
	if err := prog.Check(Builtins()); err != nil {
		r.Err = firstLine(err)
		return r
	}
	r.Checked = true
	var data *model.Data
	if info.DataName != "" {
		if data, err = model.LoadData(filepath.Join(root, "data", info.DataName+".json.zip")); err != nil {
			if r.Skip == "" {
				r.Skip = "data: " + err.Error()
			}
			return r
		}
	}
	cp, err := compileProgram(prog, data)
	if err != nil {
		r.Err = firstLine(err)
		return r
	}
	m, err := cp.model()
	if err != nil {
		r.Err = firstLine(err)
		return r
	}
	r.Loaded = true
	r.Dim = m.Dim()
	if r.Skip != "" {
		return r
	}
	if m.Dim() != ref.NUpars {
		r.Err = fmt.Sprintf("unconstrained dimension %d, rstan %d", m.Dim(), ref.NUpars)
		return r
	}
	for i := range ref.Points {
		ref.Points[i].Upars = flatten(ref.Points[i].UparsRaw, nil)
	}
	r.LP, r.Grad, r.Values = true, true, true
	r.MaxLP, r.MaxGrad = 0, 0
	nj := *m
	nj.NoJacobian = true
	var t ad.Tape
	grad := make([]float64, m.Dim())
	fail := func(stage *bool, format string, a ...any) {
		*stage = false
		if r.Err == "" {
			r.Err = fmt.Sprintf(format, a...)
		}
	}
	type lpPair struct{ ours, ref float64 }
	var base [2]*lpPair
	for i, pt := range ref.Points {
		if len(pt.Upars) != m.Dim() {
			fail(&r.LP, "point %d: %d upars", i+1, len(pt.Upars))
			break
		}
		for k, tg := range []*model.Model{m, &nj} {
			want, ok := num([]any{pt.LPJac, pt.LPNoJac}[k])
			got := model.Gradient(&t, tg, pt.Upars, grad)
			if !ok || math.IsInf(want, 0) || math.IsNaN(want) {
				// rstan rejected the point: so must we.
				if !(math.IsNaN(got) || math.IsInf(got, -1)) {
					fail(&r.LP, "point %d: lp %g where rstan gave %v", i+1, got, []any{pt.LPJac, pt.LPNoJac}[k])
				}
				continue
			}
			if math.IsNaN(got) || math.IsInf(got, 0) {
				msg := ""
				if _, e := cp.logDensityAt(pt.Upars, k == 1); e != nil {
					msg = ": " + firstLine(e)
				}
				fail(&r.LP, "point %d: lp %g where rstan gave %g%s", i+1, got, want, msg)
				if k == 0 {
					r.Grad = false // not comparable
				}
				continue
			}
			if base[k] == nil {
				base[k] = &lpPair{got, want}
			} else {
				e := math.Abs((got-base[k].ours)-(want-base[k].ref)) / math.Max(1, math.Max(math.Abs(want), math.Abs(base[k].ref)))
				r.MaxLP = math.Max(r.MaxLP, e)
				if e > LPTol {
					which := []string{"with", "without"}[k]
					fail(&r.LP, "point %d: lp %s Jacobian differs by %.3g (relative %.2g) from point 1's offset", i+1, which, (got-base[k].ours)-(want-base[k].ref), e)
				}
			}
			if k == 0 {
				g := flatten(pt.Grad, nil)
				if len(g) != len(grad) {
					continue
				}
				for j := range g {
					e := relErr(grad[j], g[j])
					r.MaxGrad = math.Max(r.MaxGrad, e)
					if e > GradTol {
						fail(&r.Grad, "point %d: gradient[%d] %g, rstan %g", i+1, j+1, grad[j], g[j])
						break
					}
				}
			}
		}
		// Constrained values of the parameters and transformed parameters.
		if err := cp.compareValues(m, pt); err != nil {
			fail(&r.Values, "point %d: %v", i+1, err)
		}
	}
	return r
}

// logDensityAt evaluates the log density at z, returning the run-time error if any.
func (cp *compiled) logDensityAt(z []float64, noJac bool) (float64, error) {
	var t ad.Tape
	zv := t.Const(z...)
	p := make([]ad.Var, cp.lay.NumParams())
	lj := cp.lay.Constrain(&t, zv, p)
	lp, err := cp.logDensity(&t, p)
	if err != nil {
		return math.NaN(), err
	}
	v := t.Float(lp)
	if !noJac {
		v += t.Float(lj)
	}
	return v, nil
}

// compareValues compares our constrained parameters and transformed parameters at the point
// with rstan's.
func (cp *compiled) compareValues(m *model.Model, pt refPoint) error {
	// Our values by Stan name: the parameters (Layout, column-major names) and the transformed
	// parameters (row-major per quantity); rstan's lists are row-major.
	x := make([]float64, cp.lay.Len())
	cp.lay.ConstrainValues(pt.Upars, x)
	vals := map[string]float64{}
	for i, n := range cp.lay.Names() {
		vals[n] = x[i]
	}
	if len(cp.tparam) > 0 {
		var t ad.Tape
		p := make([]ad.Var, cp.lay.NumParams())
		cp.lay.Constrain(&t, t.Const(pt.Upars...), p)
		ps := make([][]float64, len(p))
		for i := range p {
			ps[i] = t.Value(p[i])
		}
		out := make([][]float64, len(cp.tparam))
		for i, g := range cp.tparam {
			out[i] = make([]float64, prod(g.dims))
		}
		cp.run(ps, out, false)
		for i, g := range cp.tparam {
			for j, v := range out[i] {
				vals[elemName(g.decl.Name, g.dims, j)] = v
			}
		}
	}
	check := func(g *global) error {
		cm, ok := pt.Constrained.(map[string]any)
		if !ok {
			return nil // rstan could not constrain the point (an error string)
		}
		want, ok := cm[g.decl.Name]
		if !ok {
			return nil
		}
		w := flatten(want, nil)
		n := prod(g.dims)
		if len(w) != n {
			if n == 0 {
				return nil
			}
			return fmt.Errorf("%s: %d values, rstan %d", g.decl.Name, n, len(w))
		}
		for j := 0; j < n; j++ {
			nm := elemName(g.decl.Name, g.dims, j)
			got, ok := vals[nm]
			if !ok {
				return fmt.Errorf("no column %s", nm)
			}
			if math.IsNaN(w[j]) {
				continue
			}
			if relErr(got, w[j]) > ValueTol && !(math.IsInf(got, 0) && got == w[j]) {
				return fmt.Errorf("%s = %g, rstan %g", nm, got, w[j])
			}
		}
		return nil
	}
	for _, g := range cp.params {
		if err := check(g); err != nil {
			return err
		}
	}
	for _, g := range cp.tparam {
		if err := check(g); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(err error) string {
	var es Errors
	if errors.As(err, &es) && len(es) > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", es[0].Pos.File, es[0].Pos.Line, es[0].Pos.Col, strings.ReplaceAll(es[0].Msg, "\n", " "))
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Posteriors lists the posterior names of the snapshot at root (posteriors/*.json), sorted.
func Posteriors(root string) ([]string, error) {
	ms, err := filepath.Glob(filepath.Join(root, "posteriors", "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = strings.TrimSuffix(filepath.Base(m), ".json")
	}
	return out, nil
}
