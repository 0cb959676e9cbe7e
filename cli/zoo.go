package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

func newZooCmd(reg *registry) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "zoo [MODEL]",
		Short: "List the model zoo, or evaluate one model's log density and gradient",
		Long: `Without arguments, vigo zoo lists the zoo's models and evaluates the embedded
eight-schools model's log density and gradient. With a model name it evaluates that model
at the first posteriordb reference draw. The posteriordb directory is --posteriordb, else
$` + datadir.PosteriorDBEnv + `, else ../shared/data/posteriordb when run inside a vigo checkout
(found by walking up from the working directory); without one, only the embedded
eight-schools model can be evaluated.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			resolved, _, dirErr := datadir.PosteriorDB(dir)
			name := "eight_schools"
			if len(args) == 0 {
				if err := listZoo(out, reg, resolved); err != nil {
					return err
				}
				fmt.Fprintln(out)
			} else {
				name = args[0]
			}
			if _, user := reg.user(name); !user && name != "eight_schools" && dirErr != nil {
				return fmt.Errorf("zoo %s: %w", name, dirErr)
			}
			m, err := reg.load(name, "", dir)
			if err != nil {
				return err
			}
			return evalModel(out, m, resolved)
		},
	}
	cmd.Flags().StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	return cmd
}

// listZoo prints the zoo's models; dir is the posteriordb directory, "" when there is none.
func listZoo(w io.Writer, reg *registry, dir string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tposteriordb posterior\tdata\tabout")
	for _, name := range zoo.Names() {
		info, err := zoo.Get(name)
		if err != nil {
			return err
		}
		where := "embedded"
		if name != "eight_schools" {
			where = "needs posteriordb"
			if dir != "" {
				where = "found"
			}
		}
		about := info.Description
		about = firstSentence(about)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, info.Posterior, where, about)
	}
	for _, m := range reg.models {
		where := "--data"
		if m.Data != nil {
			where = "built-in"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, "(this program's)", where, m.About)
	}
	return tw.Flush()
}

// evalModel prints the model's log density and its gradient at the first posteriordb reference
// draw when it is a zoo model whose draws are in the posteriordb directory dir ("" when there
// is none), else at z = 0, and its columns there (parameters, then derived quantities).
func evalModel(w io.Writer, m *loadedModel, dir string) error {
	z := make([]float64, m.Dim())
	at := "z = 0 (unconstrained)"
	if m.zoo != nil && dir != "" {
		draws, err := model.LoadDraws(m.zoo.DrawsPath(dir))
		if err == nil {
			sel, err := draws.Select(m.zoo.Names()...)
			if err != nil {
				return err
			}
			if _, err := m.zoo.Unconstrain(z, sel.Row(0, 0)); err != nil {
				return err
			}
			at = "the first posteriordb reference draw"
		}
	}
	var t ad.Tape
	grad := make([]float64, m.Dim())
	lp := model.Gradient(&t, m.Model, z, grad)
	fmt.Fprintf(w, "%s (%s): %d unconstrained parameters\n", m.Name, m.label(), m.Dim())
	fmt.Fprintf(w, "log density (with Jacobian) at %s: %.10g\n", at, lp)
	// z follows the Stan program's parameters block (theta_trans, not theta, for eight schools).
	params := m.Layout.Names()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "parameter\tunconstrained z\t∂ log p/∂z\t")
	for i := range z {
		fmt.Fprintf(tw, "%s\t%.6g\t%.6g\t\n", params[i], z[i], grad[i])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "columns (constrained scale, then derived quantities):")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	row := m.Row(nil, z)
	for i, name := range m.Columns() {
		fmt.Fprintf(tw, "%s\t%.6g\t\n", name, row[i])
	}
	return tw.Flush()
}

// sentenceEnd is a full stop followed by a capital letter: "ch. 4" and "§5.5" do not end one.
var sentenceEnd = regexp.MustCompile(`\.\s+[A-Z]`)

func firstSentence(s string) string {
	if i := strings.Index(s, ": "); i > 0 {
		s = s[:i]
	}
	if loc := sentenceEnd.FindStringIndex(s); loc != nil {
		return s[:loc[0]+1]
	}
	return s
}
