package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
)

// The trust benchmark (issue 14 item 5) asks of each fit what a user asks: when the verdict
// vigo fit prints says the approximation is reliable or usable, is it? On posteriors that are
// multimodal or have a local mode where the mode search starts, and on synthetic ones whose
// truth is known, it runs the fits a user runs (the methods come from the command line's own
// recipe code, see cli/bench_trust.go), classifies each fit's verdict, and measures against
// the reference draws on the reported scale
//
//	W1/sd (mean) = (1/P) Σ_p W1(x_p, ref_p)/sd(ref_p)   (diag.Compare)
//	W1/sd (max)  = max_p W1(x_p, ref_p)/sd(ref_p)
//
// and, where log Z is known, the errors of the fit's two estimates of it: the ELBO (a lower
// bound) and the importance-sampling estimate log (1/S) Σ_s exp(log p(z_s) − log q(z_s)) on
// the fit's S diagnostic draws. A fit is a false reassurance when its verdict is reliable or
// usable while W1/sd (mean) > FalseReassuranceW1.

// FalseReassuranceW1 is the mean W1/sd above which a reliable or usable verdict is a false
// reassurance (issue 14).
const FalseReassuranceW1 = 0.1

// TrustPosterior is one posterior of the trust benchmark.
type TrustPosterior struct {
	Name, About string
	Target      model.Target
	// Names are the reported quantities, matched by name with the reference draws; Constrain
	// maps an unconstrained z to them (nil: the identity, z itself).
	Names     []string
	Constrain func(dst, z []float64) []float64
	// LogZ is the log normalising constant of Target's density over z (NaN: unknown).
	LogZ      float64
	RefSource string // where the reference draws come from, in words
	// Ref makes or loads the reference draws of Names.
	Ref func() (*diag.Draws, error)
}

// TrustFit is what a method returns for one fit: the result whose verdict the command line
// prints and the cost of the whole run (for --family auto, every stage).
type TrustFit struct {
	Result    *fit.Result
	GradEvals int
	Family    string // the family of Result, in words (auto: the chosen stage)
	// Reassuring, when not nil, is the library's judgement of whether Result.Verdict tells
	// the user the draws can be used; nil: judged from the verdict's words (VerdictClass).
	Reassuring *bool
}

// TrustMethod is one way a user fits: Fit runs it on a target with a seed.
type TrustMethod struct {
	Name, About string
	Fit         func(ctx context.Context, target model.Target, seed uint64) (TrustFit, error)
}

// TrustRun is one fit: posterior × method × seed. Non-finite numbers are NaN (null in JSON).
type TrustRun struct {
	Posterior string `json:"posterior"`
	Method    string `json:"method"`
	Seed      uint64 `json:"seed"`
	Family    string `json:"family"`
	Verdict   string `json:"verdict"`
	// Class is the verdict's class (VerdictClass).
	Class     string `json:"class"`
	KHat      JFloat `json:"khat"`
	W1SD      JFloat `json:"w1sd_mean"`
	W1SDMax   JFloat `json:"w1sd_max"`
	LogZ      JFloat `json:"logz_true"`
	ELBO      JFloat `json:"elbo"`
	LogZIS    JFloat `json:"logz_is"`
	Wall      JFloat `json:"wall_s"`
	GradEvals int    `json:"grad_evals"`
	// Reassuring is the library's own judgement, when the method gives one (TrustFit);
	// nil: Reassuring(Class).
	Reassuring *bool  `json:"reassuring,omitempty"`
	Err        string `json:"error,omitempty"`
}

// FalseReassurance reports whether the run's verdict reassures (reliable or usable) while its
// mean W1/sd exceeds FalseReassuranceW1.
func (r TrustRun) FalseReassurance() bool {
	return r.Err == "" && r.reassuring() && float64(r.W1SD) > FalseReassuranceW1
}

// reassuring is Reassuring when set, else Reassuring(Class).
func (r TrustRun) reassuring() bool {
	if r.Reassuring != nil {
		return *r.Reassuring
	}
	return Reassuring(r.Class)
}

// JFloat is a float64 that is null in JSON when not finite (NaN when read back).
type JFloat float64

func (f JFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func (f *JFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = JFloat(math.NaN())
		return nil
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*f = JFloat(v)
	return err
}

// Verdict classes (VerdictClass).
const (
	ClassReliable   = "reliable"
	ClassUsable     = "usable"
	ClassUnreliable = "unreliable"
	ClassNoTrust    = "do not trust"
	ClassMultimodal = "multimodal"
	ClassOther      = "other"
)

// VerdictClass classifies a verdict line of vigo fit by its words: "multimodal" when it says
// the posterior is (or may be) multimodal, then "do not trust", "unreliable", "usable",
// "reliable" (in that order: "unreliable" contains "reliable"), else "other". A verdict that
// reports several modes but keeps a reassuring k̂ verdict ("2 modes 60 nats apart … the
// others' mass is negligible; k̂ = 0.4: reliable") is classed by its k̂ words.
func VerdictClass(v string) string {
	l := strings.ToLower(v)
	switch {
	case strings.Contains(l, "multimodal"):
		return ClassMultimodal
	case strings.Contains(l, "do not trust"):
		return ClassNoTrust
	case strings.Contains(l, "unreliable"):
		return ClassUnreliable
	case strings.Contains(l, "usable"):
		return ClassUsable
	case strings.Contains(l, "reliable"):
		return ClassReliable
	}
	return ClassOther
}

// Reassuring reports whether a verdict class tells the user the draws can be used.
func Reassuring(class string) bool { return class == ClassReliable || class == ClassUsable }

// TrustConfig says what the trust benchmark runs.
type TrustConfig struct {
	Posteriors []TrustPosterior
	Methods    []TrustMethod
	Seeds      int // seeds 1..Seeds; 0 means 3
	// Progress, when not nil, is called after every run.
	Progress func(TrustRun)
}

// TrustSet is one labelled run of the benchmark ("before", "after") with the facts of its
// header, as saved in JSON so that a later run can print it beside its own.
type TrustSet struct {
	Label   string     `json:"label"`
	Command string     `json:"command"`
	Commit  string     `json:"commit"`
	Date    string     `json:"date"`
	Wall    JFloat     `json:"wall_s"`
	Load    string     `json:"load"`    // load averages at the start and the end
	Methods []string   `json:"methods"` // "name: about"
	Posts   []string   `json:"posteriors"`
	Runs    []TrustRun `json:"runs"`
}

// RunTrust runs every method on every posterior with seeds 1..Seeds, one fit at a time, and
// returns the runs under label. A fit that fails is recorded with its error. A cancelled
// context returns the runs so far with the context's error. Cost: the fits, plus each
// posterior's reference draws (made or loaded once).
func RunTrust(ctx context.Context, label string, cfg TrustConfig) (*TrustSet, error) {
	if cfg.Seeds == 0 {
		cfg.Seeds = 3
	}
	if cfg.Seeds < 0 {
		return nil, fmt.Errorf("bench: RunTrust: Seeds must be positive (Seeds=%d)", cfg.Seeds)
	}
	if len(cfg.Posteriors) == 0 || len(cfg.Methods) == 0 {
		return nil, fmt.Errorf("bench: RunTrust: no posteriors or no methods (posteriors=%d, methods=%d)", len(cfg.Posteriors), len(cfg.Methods))
	}
	set := &TrustSet{Label: label}
	for _, m := range cfg.Methods {
		set.Methods = append(set.Methods, m.Name+": "+m.About)
	}
	for _, p := range cfg.Posteriors {
		set.Posts = append(set.Posts, p.Name)
		ref, err := p.Ref()
		if err != nil {
			return set, fmt.Errorf("bench: RunTrust: %s: %w", p.Name, err)
		}
		if err := diag.CheckReference(ref); err != nil {
			return set, fmt.Errorf("bench: RunTrust: %s: reference: %w", p.Name, err)
		}
		for _, m := range cfg.Methods {
			for s := 1; s <= cfg.Seeds; s++ {
				r := trustOne(ctx, p, ref, m, uint64(s))
				if err := ctx.Err(); err != nil {
					return set, err
				}
				set.Runs = append(set.Runs, r)
				if cfg.Progress != nil {
					cfg.Progress(r)
				}
			}
		}
	}
	return set, nil
}

func trustOne(ctx context.Context, p TrustPosterior, ref *diag.Draws, m TrustMethod, seed uint64) TrustRun {
	nan := JFloat(math.NaN())
	r := TrustRun{Posterior: p.Name, Method: m.Name, Seed: seed, LogZ: JFloat(p.LogZ), KHat: nan, W1SD: nan, W1SDMax: nan, ELBO: nan, LogZIS: nan}
	start := time.Now()
	tf, err := m.Fit(ctx, p.Target, seed)
	r.Wall = JFloat(time.Since(start).Seconds())
	if tf.Result == nil {
		if err == nil {
			err = errors.New("no result")
		}
		r.Err, r.Class = err.Error(), ClassOther
		return r
	}
	res := tf.Result
	r.Family, r.GradEvals, r.Reassuring = tf.Family, tf.GradEvals, tf.Reassuring
	r.Verdict, r.Class = res.Verdict, VerdictClass(res.Verdict)
	r.KHat, r.ELBO = JFloat(res.KHat), JFloat(res.ELBO)
	if len(res.LogP) > 0 {
		lw := make([]float64, len(res.LogP))
		for i := range lw {
			lw[i] = res.LogP[i] - res.LogQ[i]
		}
		r.LogZIS = JFloat(mathx.LogSumExp(lw) - math.Log(float64(len(lw))))
	}
	if err != nil {
		r.Err = err.Error()
	}
	d := p.Target.Dim()
	n := len(res.Draws) / d
	rows := make([]float64, 0, n*len(p.Names))
	var x []float64
	for i := range n {
		z := res.Draws[i*d : (i+1)*d]
		if p.Constrain == nil {
			rows = append(rows, z...)
			continue
		}
		x = p.Constrain(x, z)
		rows = append(rows, x...)
	}
	dist, cerr := diag.Compare(&diag.Draws{Names: p.Names, Chains: [][]float64{rows}}, ref)
	if cerr != nil {
		r.Err = errors.Join(err, cerr).Error()
		return r
	}
	r.W1SD = JFloat(dist.W1SD)
	mx := 0.0
	for _, v := range dist.Vars {
		mx = max(mx, v.W1SD)
	}
	r.W1SDMax = JFloat(mx)
	return r
}

// ProgressLine is one line for stderr.
func (r TrustRun) ProgressLine() string {
	s := fmt.Sprintf("trust %s %s seed %d: %s (k̂ %.2f), W1/sd %.3f, %.1fs, %d gradients", r.Posterior, r.Method, r.Seed,
		r.Class, float64(r.KHat), float64(r.W1SD), float64(r.Wall), r.GradEvals)
	if r.FalseReassurance() {
		s += "  FALSE REASSURANCE"
	}
	if r.Err != "" {
		s += "  error: " + r.Err
	}
	return s
}

// JSON writes the set as indented JSON.
func (s *TrustSet) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(s)
}

// LoadTrustSet reads a set written by TrustSet.JSON.
func LoadTrustSet(path string) (*TrustSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: LoadTrustSet: %w", err)
	}
	var s TrustSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("bench: LoadTrustSet: %s: %w", path, err)
	}
	return &s, nil
}

// TrustReport is the markdown of one or more sets (before, after) over the same posteriors.
type TrustReport struct {
	Sets       []*TrustSet
	Posteriors []TrustPosterior // for the table of posteriors (names, sizes, log Z, reference)
}

// Markdown writes the header, the table of posteriors, the false-reassurance rates per method
// and set, a summary per posterior × method × set, and every run.
func (rep *TrustReport) Markdown(w io.Writer, h resultmd.Header) error {
	if err := resultmd.Write(w, "Trust on multimodal and badly started posteriors (issue 14)", h); err != nil {
		return err
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("\n")
	p("Each fit is run as `vigo fit` runs it (the recipe built by the command line's own code, one worker) with seeds 1..N; ")
	p("its verdict is the line `vigo fit` prints (`fit.Result.Verdict`), classified by its words ")
	p("(multimodal / do not trust / unreliable / usable / reliable). W1/sd is measured on the reported (constrained) quantities ")
	p("against the reference draws: **mean** over the quantities (diag.Compare; the flag uses it) and max. ")
	p("A run is a **false reassurance** (FR) when its verdict reassures — the library's own judgement where the method records one ")
	p("(`fit.Assess(res).Reassuring`, the judgement behind the printed verdict), else a reliable or usable class — ")
	p("while W1/sd (mean) > %.2f. ", FalseReassuranceW1)
	p("ΔlogZ is the estimate minus the true log Z (synthetic targets only): the ELBO, and importance sampling ")
	p("log mean exp(log p − log q) on the fit's diagnostic draws. Wall time and gradient count are the whole fit's ")
	p("(for auto, every stage). W1/sd between two exact samples of 1,000 and 10,000 draws is ≈ 0.02–0.04, ")
	p("so values below ≈ 0.05 are at the Monte Carlo floor.\n\n")
	for _, s := range rep.Sets {
		p("- **%s**: `%s`, commit %s, %s, wall %.0f s, load %s\n", s.Label, s.Command, s.Commit, s.Date, float64(s.Wall), s.Load)
		for _, m := range s.Methods {
			p("  - %s\n", m)
		}
	}
	p("\n## Posteriors\n\n| posterior | d | about | log Z (truth) | reference |\n|---|---:|---|---:|---|\n")
	for _, q := range rep.Posteriors {
		lz := "unknown"
		if !math.IsNaN(q.LogZ) {
			lz = fmt.Sprintf("%.6f", q.LogZ)
		}
		p("| %s | %d | %s | %s | %s |\n", q.Name, q.Target.Dim(), mdCell(q.About), lz, mdCell(q.RefSource))
	}
	p("\n## False-reassurance rate\n\n| set | method | runs | reassuring verdicts | false reassurances | rate | median W1/sd |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, s := range rep.Sets {
		for _, m := range methodNames(s) {
			var n, reass, fr int
			var w1 []float64
			for _, r := range s.Runs {
				if r.Method != m {
					continue
				}
				n++
				if r.Err == "" && r.reassuring() {
					reass++
				}
				if r.FalseReassurance() {
					fr++
				}
				w1 = append(w1, float64(r.W1SD))
			}
			p("| %s | %s | %d | %d | %d | %s | %.3f |\n", s.Label, m, n, reass, fr, rate(fr, n), medianNaN(w1))
		}
	}
	p("\n## Per posterior (over seeds)\n\n| posterior | method | set | verdicts | W1/sd mean (per seed) | FR | ΔlogZ ELBO (median) | ΔlogZ IS (median) | wall s (median) | gradients (median) |\n|---|---|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, q := range rep.Posteriors {
		for _, m := range methodNames(rep.Sets[0]) {
			for _, s := range rep.Sets {
				var runs []TrustRun
				for _, r := range s.Runs {
					if r.Posterior == q.Name && r.Method == m {
						runs = append(runs, r)
					}
				}
				if len(runs) == 0 {
					continue
				}
				p("| %s | %s | %s | %s | %s | %d | %s | %s | %.2f | %.0f |\n", q.Name, m, s.Label, classCounts(runs), seedW1(runs), countFR(runs),
					fmtNum(medianOf(runs, func(r TrustRun) float64 { return float64(r.ELBO - r.LogZ) }), 3),
					fmtNum(medianOf(runs, func(r TrustRun) float64 { return float64(r.LogZIS - r.LogZ) }), 3),
					medianOf(runs, func(r TrustRun) float64 { return float64(r.Wall) }),
					medianOf(runs, func(r TrustRun) float64 { return float64(r.GradEvals) }))
			}
		}
	}
	p("\n## Every run\n\n| set | posterior | method | seed | family | k̂ | class | W1/sd mean | W1/sd max | ΔlogZ ELBO | ΔlogZ IS | wall s | gradients | FR | verdict |\n|---|---|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, s := range rep.Sets {
		for _, r := range s.Runs {
			fr := ""
			if r.FalseReassurance() {
				fr = "**FR**"
			}
			v := r.Verdict
			if r.Err != "" {
				v = "error: " + r.Err
			}
			p("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %.2f | %d | %s | %s |\n", s.Label, r.Posterior, r.Method, r.Seed, r.Family,
				fmtNum(float64(r.KHat), 2), r.Class, fmtNum(float64(r.W1SD), 3), fmtNum(float64(r.W1SDMax), 3),
				fmtNum(float64(r.ELBO-r.LogZ), 3), fmtNum(float64(r.LogZIS-r.LogZ), 3), float64(r.Wall), r.GradEvals, fr, mdCell(v))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func methodNames(s *TrustSet) []string {
	var out []string
	for _, r := range s.Runs {
		if !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	return out
}

func rate(k, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(k)/float64(n))
}

func countFR(runs []TrustRun) int {
	n := 0
	for _, r := range runs {
		if r.FalseReassurance() {
			n++
		}
	}
	return n
}

func classCounts(runs []TrustRun) string {
	var order []string
	count := map[string]int{}
	for _, r := range runs {
		c := r.Class
		if r.Err != "" {
			c = "error"
		}
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	var parts []string
	for _, c := range order {
		parts = append(parts, fmt.Sprintf("%d %s", count[c], c))
	}
	return strings.Join(parts, ", ")
}

func seedW1(runs []TrustRun) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, fmtNum(float64(r.W1SD), 3))
	}
	return strings.Join(parts, " / ")
}

func medianOf(runs []TrustRun, f func(TrustRun) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	return medianNaN(v)
}

// medianNaN is the median of the finite values (NaN when there are none).
func medianNaN(v []float64) float64 {
	var f []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			f = append(f, x)
		}
	}
	if len(f) == 0 {
		return math.NaN()
	}
	slices.Sort(f)
	n := len(f)
	if n%2 == 1 {
		return f[n/2]
	}
	return 0.5 * (f[n/2-1] + f[n/2])
}

func fmtNum(x float64, prec int) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// mdCell escapes a table cell: pipes and newlines.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
