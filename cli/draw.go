package cli

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
	"github.com/vigo-bayes/vigo/zoo"
)

type drawFlags struct {
	draws int
	seed  uint64
	out   string
	data  string
}

func newDrawCmd(reg *registry) *cobra.Command {
	var f drawFlags
	cmd := &cobra.Command{
		Use:   "draw FIT.json",
		Short: "Draw from a saved fit (fit.json) and write Stan CSV, without the training data",
		Long: `vigo draw samples the approximation saved by vigo fit and writes the draws as Stan CSV
(to --out, or standard output).

Without data it writes the Stan parameters on the constrained scale, from the parameter
layout saved in fit.json, with lp__ = nan (the model's log density needs the data) and
lp_approx__ = log q. With the data — --data FILE, or the embedded eight-schools data when the
fit used it — it rebuilds the model and writes lp__ and the model's transformed parameters
too, exactly the columns of vigo fit's draws.csv.

The default --seed is the fit's seed: the first N draws then equal the first N rows of the
fit's draws.csv.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			seedSet := cmd.Flags().Changed("seed")
			return runDraw(cmd.OutOrStdout(), reg, args[0], f, seedSet)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.draws, "draws", 1000, "number of draws")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed (default: the fit's seed)")
	fl.StringVar(&f.out, "out", "", "output file (default standard output)")
	fl.StringVar(&f.data, "data", "", "the model's data, to add lp__ and transformed parameters")
	return cmd
}

func runDraw(stdout io.Writer, reg *registry, path string, f drawFlags, seedSet bool) error {
	if f.draws < 1 {
		return fmt.Errorf("--draws: %d, want a positive value", f.draws)
	}
	if f.draws > fit.MaxDrawValues {
		return drawsLimit(f.draws, 1)
	}
	if f.out != "" {
		if err := output.CheckFile(f.out); err != nil {
			return fmt.Errorf("--out %s: %w", f.out, err)
		}
	}
	s, err := fit.Load(path)
	if err != nil {
		return err
	}
	seed := s.Seed()
	if seedSet {
		seed = f.seed
	}
	m, err := drawModel(reg, s, f.data)
	if err != nil {
		return err
	}
	d := s.Dim()
	cols := 2 + len(s.Names)
	if m != nil {
		cols = 2 + len(m.Columns())
	}
	if per := max(d, cols); f.draws > fit.MaxDrawValues/per {
		return drawsLimit(f.draws, per)
	}
	z, logq := s.Sample(seed, f.draws)
	var names []string
	var fill func(row, z []float64)
	lp := func([]float64) float64 { return math.NaN() }
	if m != nil {
		names = append([]string{"lp__", "lp_approx__"}, m.Columns()...)
		fill = func(row, z []float64) { m.Row(row[2:], z) }
		lp = logDensity(m.Model)
	} else {
		names = append([]string{"lp__", "lp_approx__"}, s.Names...)
		fill = func(row, z []float64) { s.Constrain(row[2:], z) }
	}
	k := len(names)
	vals := make([]float64, f.draws*k)
	for i := range f.draws {
		row := vals[i*k : (i+1)*k]
		zi := z[i*d : (i+1)*d]
		row[0], row[1] = lp(zi), logq[i]
		fill(row, zi)
	}
	comments := []string{
		"vigo = " + vigoVersion(),
		"method = variational (draws from a saved fit)",
		"fit = " + path,
		"model = " + s.Model,
		"family = " + savedDesc(s),
		fmt.Sprintf("seed = %d", seed),
		fmt.Sprintf("draws = %d", f.draws),
		"fit_status = " + s.Diagnostics.Status,
		"fit_verdict = " + s.Diagnostics.Verdict,
	}
	if m == nil {
		comments = append(comments, "lp__ = nan: the model's log density needs the data (pass --data to add it and the transformed parameters).",
			"lp_approx__ = log q(z), the normalised log density of the approximation at the unconstrained draw z.")
	} else {
		comments = append(comments, "data = "+m.data, fit.StanCSVNote)
	}
	doc := &model.StanCSV{Config: comments, Names: names, Draws: vals}
	if f.out == "" {
		var buf bytes.Buffer
		if err := model.WriteStanCSV(&buf, doc); err != nil {
			return err
		}
		_, err = stdout.Write(buf.Bytes())
		return err
	}
	if err := output.WriteFile(f.out, func(w io.Writer) error { return model.WriteStanCSV(w, doc) }); err != nil {
		return fmt.Errorf("--out %s: %w", f.out, err)
	}
	return nil
}

// drawModel rebuilds the fit's model when its data is at hand (--data, or embedded), or returns
// nil. A rebuilt model must have the saved layout.
func drawModel(reg *registry, s *fit.Saved, dataPath string) (*loadedModel, error) {
	um, user := reg.user(s.Model)
	if dataPath == "" && s.Data != "embedded" && !(user && s.Data == "built-in" && um.Data != nil) {
		return nil, nil
	}
	if _, err := zoo.Get(s.Model); err != nil && !user {
		if dataPath == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("--data: fit is of model %q, which is neither in the zoo nor one of this program's models: %w", s.Model, err)
	}
	m, err := reg.load(s.Model, dataPath, "")
	if err != nil {
		return nil, err
	}
	if m.Dim() != s.Dim() || !slices.Equal(m.Layout.Names(), s.Names) {
		return nil, fmt.Errorf("--data %s: model %s built from it has %d parameters (%d unconstrained), the fit %d (%d): not the data of this fit",
			dataPath, m.Name, m.Layout.Len(), m.Dim(), len(s.Names), s.Dim())
	}
	return m, nil
}

// logDensity returns z ↦ log p(z) for m on a reused tape.
func logDensity(m *model.Model) func(z []float64) float64 {
	var t ad.Tape
	return func(z []float64) float64 {
		t.Reset()
		return t.Float(m.LogDensity(&t, t.Input(z)))
	}
}

// savedFamilyDesc names a saved family: its kind, or a flow's name ("maf (flow)").
func savedFamilyDesc(f fit.FamilySpec) string {
	if f.Kind == fit.KindFlow {
		return f.Name + " (flow)"
	}
	return f.Kind
}

// savedDesc names a saved fit's approximation: its family, or an ensemble's members
// ("mixture of 3: meanfield, meanfield, meanfield").
func savedDesc(s *fit.Saved) string {
	if s.Mixture == nil {
		return savedFamilyDesc(s.Family)
	}
	names := make([]string, len(s.Mixture.Members))
	for i, m := range s.Mixture.Members {
		names[i] = savedFamilyDesc(m.Family)
	}
	return fmt.Sprintf("mixture of %d (ensemble; draws stratified over the members): %s", len(names), strings.Join(names, ", "))
}

// drawsLimit is the error of a --draws that would hold more than fit.MaxDrawValues values of
// per values each in memory.
func drawsLimit(draws, per int) error {
	return fmt.Errorf("--draws: %d, want at most %d for %d values per draw: vigo draw holds at most fit.MaxDrawValues = %d values in memory (a hard cap; write more in several runs with different --seed values)",
		draws, fit.MaxDrawValues/per, per, fit.MaxDrawValues)
}
