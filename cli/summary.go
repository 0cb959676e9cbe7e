package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

func newSummaryCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "summary FILE...",
		Short: "Summarise Stan CSV files (vigo's or CmdStan's), one chain per file",
		Long: `vigo summary reads Stan CSV files — written by vigo sample or vigo fit, or by CmdStan — and
prints, per variable, mean, median, sd, mad, 5% and 95% quantiles, bulk and tail ESS and
rank-normalised split R-hat (the definitions of R's posterior package). Each file is one chain.
Comment lines, CmdStan's adaptation lines and saved warmup rows are skipped; columns whose
names end in "__" (lp__, accept_stat__, …) are sampler or method columns, not variables.
For sampler output it also checks divergences, tree depth and E-BFMI and warns in words. The
first row of a CmdStan variational file (the approximation's mean) is left out; vigo's
own draws.csv has no such row.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch format {
			case "text", "csv", "json":
			default:
				return fmt.Errorf("summary: unknown --format %q (want text, csv or json)", format)
			}
			return runSummary(cmd.OutOrStdout(), args, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, csv or json")
	return cmd
}

// csvChains reads Stan CSV files as chains of the same variables: their draws (variables only,
// in the first file's order), their sampler diagnostics when every file has them, and notes
// on what was adjusted.
func csvChains(paths []string) (*diag.Draws, [][]mcmc.Stats, int, []string, error) {
	var (
		d        *diag.Draws
		stats    [][]mcmc.Stats
		maxDepth int
		notes    []string
		hasStats = true
	)
	n := -1
	for i, p := range paths {
		s, err := model.LoadStanCSV(p)
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("summary: %w", err)
		}
		// CmdStan's variational output starts with the approximation's mean; vigo's draws.csv
		// (its config has a "vigo" line) holds draws only, the mean being in fit.json.
		_, fromVigo := s.ConfigValue("vigo")
		if method, _ := s.ConfigValue("method"); method == "variational" && !fromVigo && s.NumDraws() > 0 {
			k := len(s.Names)
			s.Draws = s.Draws[k:]
			notes = append(notes, fmt.Sprintf("%s: first row (the variational mean) left out", p))
		}
		var names []string
		for _, name := range s.Names {
			if !strings.HasSuffix(name, "__") {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return nil, nil, 0, nil, fmt.Errorf("summary: %s: no variables (only columns ending in __)", p)
		}
		if s.NumDraws() == 0 {
			return nil, nil, 0, nil, fmt.Errorf("summary: %s: no draws", p)
		}
		if i == 0 {
			d = &diag.Draws{Names: names}
		} else if !slices.Equal(names, d.Names) {
			return nil, nil, 0, nil, fmt.Errorf("summary: %s has different variables from %s (%d vs %d columns)", p, paths[0], len(names), len(d.Names))
		}
		vs, err := (&diag.Draws{Names: s.Names, Chains: [][]float64{s.Draws}}).Select(names...)
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("summary: %s: %w", p, err)
		}
		d.Chains = append(d.Chains, vs.Chains[0])
		if n < 0 || s.NumDraws() < n {
			n = s.NumDraws()
		}
		st, md, ok := mcmc.StatsFromCSV(s)
		hasStats = hasStats && ok
		if ok {
			stats = append(stats, st)
			maxDepth = max(maxDepth, md)
		}
	}
	for c, ch := range d.Chains {
		if len(ch) > n*len(d.Names) {
			notes = append(notes, fmt.Sprintf("%s: %d draws, cut to the shortest file's %d", paths[c], len(ch)/len(d.Names), n))
			d.Chains[c] = ch[:n*len(d.Names)]
		}
	}
	if !hasStats {
		return d, nil, 0, notes, nil
	}
	for c := range stats {
		stats[c] = stats[c][:n]
	}
	return d, stats, maxDepth, notes, nil
}

func runSummary(w io.Writer, paths []string, format string) error {
	d, stats, maxDepth, notes, err := csvChains(paths)
	if err != nil {
		return err
	}
	sum, err := diag.Summarize(d, nil)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	sum.Notes = append(sum.Notes, fmt.Sprintf("%d chain(s) × %d draws from %s", len(d.Chains), d.Len()/len(d.Chains), strings.Join(paths, ", ")))
	sum.Notes = append(sum.Notes, notes...)
	var warn []string
	if stats != nil {
		diagn := mcmc.Diagnose(stats, maxDepth)
		sum.Notes = append(sum.Notes, diagn.Summary())
		warn = diagn.Warnings()
	}
	warn = append(warn, mcmc.SummaryWarnings(sum, len(d.Chains))...)
	for _, s := range warn {
		sum.Notes = append(sum.Notes, "Warning: "+s)
	}
	return writeSummaryAs(w, sum, format)
}
