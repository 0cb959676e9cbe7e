// Package output writes what vigo fit writes, for any model: the draws as Stan CSV, the
// summaries (text, CSV, JSON), the saved fit (fit.json), the ELBO trace and marginal plots,
// and the comparison with reference draws. It sits above package fit, so the VI loop's import
// graph stays free of the plotting library.
package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
)

// Info is what the files say about a fit that its Result does not know.
type Info struct {
	Vigo      string // vigo version, for the header and fit.json
	Model     string // model name
	Posterior string // posteriordb posterior name, if any
	Data      string // where the data came from ("embedded", a path)
	// Layout is the model's parameter layout: fit.json maps its draws to the parameters with it.
	Layout *model.Layout
	// Draws is the number of rows of draws.csv (at most the fit's diagnostic draws); 0: all.
	Draws int
	// PSISResample picks draws.csv's rows with replacement by their PSIS weights when k̂ is
	// below its threshold (as Stan's Pathfinder does), seeded by the recipe's seed; the summary
	// then describes the PSIS-corrected approximation.
	PSISResample bool
	// Reference, when not nil, are reference draws (posteriordb's) to compare with;
	// ReferenceName names them in the notes.
	Reference     *diag.Draws
	ReferenceName string
	// Auto is the automatic family search that chose the fit, if any.
	Auto *fit.AutoResult
	// MaxPanels caps the panels of marginals.png; 0: 36.
	MaxPanels int
}

// Report is what Write wrote and computed.
type Report struct {
	Summary  *diag.Summary
	Distance *diag.Distance // nil without reference draws
	Files    []string       // the files written, in order
	Resample string         // what PSISResample did, in words; "" without it
	// Unsaved says why fit.json was not written ("" when it was): the model's layout holds a
	// transform fit.json cannot describe (model.ErrUndescribed).
	Unsaved string
}

// Files are the names Write writes into its directory.
func Files() []string {
	return []string{"draws.csv", "summary.txt", "summary.csv", "summary.json", "fit.json", "elbo.png", "marginals.png"}
}

// Write writes the outputs of a fit of the model whose output columns are cols into dir:
// draws.csv (Stan CSV: lp__, lp_approx__, cols.Columns()), summary.txt|csv|json, fit.json,
// elbo.png and marginals.png (reference draws overlaid). The files are a Set: written into a
// temporary directory inside dir and moved into place together only when every one succeeded,
// so a failure leaves dir as it was; every file of Files this run does not write (elbo.png of
// a fit without a trace) is removed, so dir never holds a mix of two runs. Files are FileMode;
// symlinks in dir are replaced, never followed. Cost: one cols.Row per written draw, the
// summary's O(n log n) per column, the plots, and one fsync per file.
func Write(dir string, res *fit.Result, cols fit.Columns, info Info) (*Report, error) {
	if res == nil || res.Family == nil {
		return nil, errors.New("output: Write: no fit")
	}
	if info.Layout == nil {
		return nil, errors.New("output: Write: Info.Layout is nil")
	}
	set, err := NewSet(dir)
	if err != nil {
		return nil, fmt.Errorf("output: Write: %w", err)
	}
	defer set.Close()
	rep, err := write(set, res, cols, info)
	if err != nil {
		return nil, err
	}
	if rep.Files, err = set.Commit(Files()...); err != nil {
		return nil, fmt.Errorf("output: Write: %w", err)
	}
	order := Files() // the files in Files' order, whatever order they were written in
	slices.SortStableFunc(rep.Files, func(a, b string) int {
		return slices.Index(order, filepath.Base(a)) - slices.Index(order, filepath.Base(b))
	})
	return rep, nil
}

func write(set *Set, res *fit.Result, cols fit.Columns, info Info) (*Report, error) {
	n := info.Draws
	if n <= 0 || n > len(res.LogQ) {
		n = len(res.LogQ)
	}
	rows, note, err := pickRows(res, n, info.PSISResample)
	if err != nil {
		return nil, err
	}
	rep := &Report{Resample: note}
	path := set.Path
	header := Header(res, info, n)
	if note != "" {
		header = append(header, "psis_resample = "+note)
	}
	doc, err := res.StanCSV(cols, rows, header)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := model.WriteStanCSV(&buf, doc); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path("draws.csv"), buf.Bytes(), 0o644); err != nil {
		return nil, err
	}

	// Summary of the output columns (lp__ and lp_approx__ left out).
	k := len(doc.Names)
	pn := doc.Names[2:]
	pv := make([]float64, 0, n*len(pn))
	for i := range n {
		pv = append(pv, doc.Draws[i*k+2:(i+1)*k]...)
	}
	draws := &diag.Draws{Names: pn, Chains: [][]float64{pv}}
	sum, err := diag.Summarize(draws, nil)
	if err != nil {
		return nil, fmt.Errorf("output: summary: %w", err)
	}
	sum.Notes = append(sum.Notes, Notes(res)...)
	if note != "" {
		sum.Notes = append(sum.Notes, "PSIS resampling: "+note)
	}
	if info.Auto != nil {
		sum.Notes = append(sum.Notes, AutoNotes(info.Auto)...)
	}
	// The approximation (before the summaries, which say when it cannot be saved).
	var reported []string
	if names := cols.Columns(); !slices.Equal(names, info.Layout.Names()) {
		reported = names
	}
	saved, err := fit.NewSaved(res, fit.SaveInfo{Vigo: info.Vigo, Model: info.Model, Posterior: info.Posterior,
		Data: info.Data, Layout: info.Layout, Reported: reported})
	switch {
	case errors.Is(err, model.ErrUndescribed):
		rep.Unsaved = err.Error()
		sum.Notes = append(sum.Notes, "fit.json not written: "+err.Error()+" (draws.csv and the summaries are complete; vigo draw needs fit.json)")
	case err != nil:
		return nil, err
	}
	rep.Summary = sum
	if info.Reference != nil {
		dist, dnote, err := compareReference(draws, info.Reference, info.ReferenceName)
		if err != nil {
			return nil, err
		}
		rep.Distance = dist
		sum.Notes = append(sum.Notes, dnote)
	}
	// Plots (before the summaries, which say when one could not be drawn: a plot is not worth
	// losing the fit's outputs for).
	title := fmt.Sprintf("%s, %s", info.Model, FamilyDesc(res))
	if len(res.Trace) > 0 {
		if err := PlotELBO(path("elbo.png"), "ELBO: "+title, res.Trace, res.ELBO); err != nil {
			sum.Notes = append(sum.Notes, "elbo.png not drawn: "+err.Error())
		}
	}
	margs := make([]Marginal, len(pn))
	for j, nm := range pn {
		col := make([]float64, n)
		for i := range n {
			col[i] = pv[i*len(pn)+j]
		}
		margs[j] = Marginal{Name: nm, Draws: col}
		if ref := info.Reference; ref != nil {
			if p := ref.Index(nm); p >= 0 {
				margs[j].Ref = slices.Concat(ref.Var(p)...)
			}
		}
	}
	maxPanels := info.MaxPanels
	if maxPanels <= 0 {
		maxPanels = 36
	}
	mt := "marginals: " + title
	if len(margs) > maxPanels {
		mt += fmt.Sprintf(" (first %d of %d)", maxPanels, len(margs))
	}
	if err := PlotMarginals(path("marginals.png"), mt, margs, maxPanels); err != nil {
		sum.Notes = append(sum.Notes, "marginals.png not drawn: "+err.Error())
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{{"summary.txt", sum.WriteText}, {"summary.csv", sum.WriteCSV}, {"summary.json", sum.WriteJSON}} {
		buf.Reset()
		if err := w.write(&buf); err != nil {
			return nil, fmt.Errorf("output: %s: %w", w.name, err)
		}
		if err := os.WriteFile(path(w.name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}

	if saved != nil && rep.Unsaved == "" {
		if err := saved.Save(path("fit.json")); err != nil {
			return nil, err
		}
	}

	return rep, nil
}

// Header is the comment header of draws.csv: the recipe that ran and the diagnostics, for n
// written draws. It holds nothing that changes between runs with the same seed.
func Header(res *fit.Result, info Info, n int) []string {
	h := []string{
		"vigo = " + info.Vigo,
		"method = variational",
		"model = " + info.Model,
		"posterior = " + info.Posterior,
		"data = " + info.Data,
		"family = " + FamilyDesc(res),
	}
	if r := res.Recipe; r != nil {
		h = append(h,
			fmt.Sprintf("seed = %d", r.Seed),
			fmt.Sprintf("draws = %d (k̂ on %d)", n, len(res.LogQ)),
			fmt.Sprintf("iter = %d", r.MaxIter),
			fmt.Sprintf("estimator = %s (S = %d, K = %d)", r.Objective.Estimator, r.Objective.Samples, r.Objective.K),
			fmt.Sprintf("optimizer = %s (lr = %g)", r.Optimizer.Name, r.Optimizer.LR),
			fmt.Sprintf("stop = %s (tol = %g, window = %d, every %d steps, average = %d)", r.Stop.Rule, r.Stop.Tol, r.Stop.Window, r.Stop.EvalEvery, r.Stop.Average),
			"warm_start = "+r.WarmStart,
		)
	}
	h = append(h,
		"init = "+res.InitNote,
		"status = "+res.Status.String(),
		"reason = "+res.Reason,
		fmt.Sprintf("iterations = %d", res.Iterations),
		fmt.Sprintf("grad_evals = %d", res.GradEvals),
		fmt.Sprintf("skipped_steps = %d", res.Skipped),
		fmt.Sprintf("elbo = %.6g", res.ELBO),
		fmt.Sprintf("elbo_mcse = %.3g", res.ELBOSE),
		"khat = "+diag.FormatKhat(res.KHat),
		fmt.Sprintf("khat_threshold = %.3g", res.KHatThreshold),
		fmt.Sprintf("khat_sd = %.2g", res.KHatSD),
		"verdict = "+res.Verdict,
	)
	if info.Auto != nil {
		h = append(h, AutoNotes(info.Auto)...)
	}
	return h
}

// FamilyDesc names the fitted family from its recipe: "meanfield", "lowrank (rank 3)",
// "bernstein (flow, degree 20, normal base), 4630 parameters".
func FamilyDesc(res *fit.Result) string {
	if res.Recipe == nil {
		return fmt.Sprintf("%T", res.Family.Base)
	}
	desc := res.Recipe.Family.Describe(res.Family.Dim())
	if en := res.Ensemble; en != nil {
		return fmt.Sprintf("ensemble of %d × %s", len(en.Members), desc)
	}
	if fit.IsFlowKind(res.Recipe.Family.Kind) {
		desc += fmt.Sprintf(", %d parameters", res.Family.NumParams())
	}
	return desc
}

// AutoNotes are the stage lines of an automatic family search and its choice.
func AutoNotes(a *fit.AutoResult) []string {
	var out []string
	for _, s := range a.Stages {
		out = append(out, "auto: "+s.Line)
	}
	return append(out, fmt.Sprintf("auto: chose %s: %s", a.Stages[a.Chosen].Family, a.Reason))
}

// Notes are the summary's notes on a fit: the verdict, k̂, the ELBO and why it stopped.
func Notes(res *fit.Result) []string {
	return []string{
		res.Verdict,
		fmt.Sprintf("k̂ = %s ± %.2f on %d draws (threshold %.2f), PSIS ESS %.0f", diag.FormatKhat(res.KHat), res.KHatSD, len(res.LogQ), res.KHatThreshold, res.PSISESS),
		fmt.Sprintf("ELBO = %.6g ± %.2g (MCSE, %d draws)", res.ELBO, res.ELBOSE, len(res.LogQ)),
		fmt.Sprintf("%s: %s", res.Status, res.Reason),
	}
}

// pickRows returns which diagnostic draws go to draws.csv's n rows: the first n, or, with
// resample and k̂ below its threshold, n draws picked with replacement by their PSIS weights
// (seeded by the recipe's seed, so the output stays reproducible). The note says what was done.
func pickRows(res *fit.Result, n int, resample bool) ([]int, string, error) {
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	if !resample {
		return identity, "", nil
	}
	lw := make([]float64, len(res.LogQ))
	for i := range lw {
		lw[i] = res.LogP[i] - res.LogQ[i]
	}
	ps, err := diag.PSIS(lw)
	if err != nil || !ps.Reliable() {
		return identity, fmt.Sprintf("not done: k̂ = %s is not below its threshold %.2f, so the weights cannot correct q; the draws are q's own", diag.FormatKhat(res.KHat), res.KHatThreshold), nil
	}
	var seed uint64
	if res.Recipe != nil {
		seed = res.Recipe.Seed
	}
	r := rand.New(rand.NewPCG(seed, 0x7073697372)) // stream "psisr", apart from the fit's
	idx, err := ps.Resample(n, r.Float64)
	if err != nil {
		return nil, "", fmt.Errorf("output: PSIS resampling: %w", err)
	}
	distinct := make(map[int]bool, n)
	for _, j := range idx {
		distinct[j] = true
	}
	return idx, fmt.Sprintf("%d draws picked with replacement from %d by their PSIS weights (k̂ = %s, PSIS ESS %.0f; %d distinct draws; the summary's ess columns count rows, not independent draws)", n, len(lw), diag.FormatKhat(ps.K), ps.ESS, len(distinct)), nil
}

// compareReference measures the draws against the reference draws on the variables both have.
func compareReference(draws, ref *diag.Draws, refName string) (*diag.Distance, string, error) {
	var keep []string
	for _, n := range draws.Names {
		if ref.Index(n) >= 0 {
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 {
		return nil, "", fmt.Errorf("output: reference %s: no variable in common with the model (it has %s, …)", refName, strings.Join(ref.Names[:min(3, len(ref.Names))], ", "))
	}
	sel, err := draws.Select(keep...)
	if err != nil {
		return nil, "", err
	}
	dist, err := diag.Compare(sel, ref)
	if err != nil {
		return nil, "", fmt.Errorf("output: reference %s: %w", refName, err)
	}
	note := fmt.Sprintf("vs reference %s (%d variables): W1/sd %.3g (mean), sd ratio %.3g (mean), max |Δmean|/sd %.3g",
		filepath.Base(refName), len(keep), dist.W1SD, dist.SDRatio, dist.MaxMeanDiffSD)
	return dist, note, nil
}
