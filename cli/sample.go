package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
)

// sampleFlags are the options of vigo sample.
type sampleFlags struct {
	chains, warmup, draws, thin, maxDepth int
	seed                                  uint64
	out, posteriordb, metric, format      string
	data, init                            string
	delta                                 float64
	saveWarmup, quiet                     bool
}

func newSampleCmd(reg *registry) *cobra.Command {
	var f sampleFlags
	cmd := &cobra.Command{
		Use:   "sample [MODEL]",
		Short: "Sample a zoo model's posterior with NUTS and write Stan CSV draws and a summary",
		Long: `vigo sample draws from the posterior of a zoo model (default: eight_schools, whose data
is embedded) with the No-U-Turn sampler as Stan runs it: multinomial NUTS, dual-averaging step
size and windowed adaptation of the metric during warmup. The default metric, auto_e, is
dense in the adaptation windows whose draws are strongly correlated and diagonal otherwise;
--metric diag_e is Stan's default, dense_e and unit_e Stan's others, fisher_diag_e nutpie's
diagonal from draws and gradients. Chains run in parallel; the draws depend only on --seed.

It writes one Stan CSV file per chain into --out (MODEL-1.csv, …), with CmdStan's sampler
columns (lp__, accept_stat__, stepsize__, treedepth__, n_leapfrog__, divergent__, energy__)
and the model's columns — the parameters on the constrained scale, then its derived quantities
(theta_trans.1, …, mu, tau, theta.1, … for eight_schools), as vigo fit's draws.csv — and prints a summary with R-hat and
bulk/tail ESS, the sampler diagnostics (divergences, tree depth, E-BFMI) and warnings in words.
vigo summary summarises the files again.

The files of a run replace the earlier ones together; a rerun with fewer chains removes the
earlier run's extra chain files (MODEL-5.csv, …) and says so.

Exit codes: 0 done, 3 done but R-hat above 1.01 for some parameter, 1 error, 130 cancelled
(Ctrl-C or SIGTERM; a second one exits at once): the draws made so far are written to --out,
or to --out/cancelled when --out holds an earlier run's MODEL-1.csv, which is kept.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "eight_schools"
			if len(args) == 1 {
				name = args[0]
			}
			return runSample(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), reg, name, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.chains, "chains", 4, "number of chains, run in parallel")
	fl.IntVar(&f.warmup, "warmup", 1000, "warmup (adaptation) iterations per chain")
	fl.IntVar(&f.draws, "draws", 1000, "iterations kept per chain")
	fl.IntVar(&f.thin, "thin", 1, "keep every n-th draw (at least 1)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed; chain c uses stream c")
	fl.StringVar(&f.out, "out", ".", "directory for the Stan CSV files")
	fl.StringVar(&f.posteriordb, "posteriordb", "", datadir.PosteriorDBHelp+" (eight_schools needs none)")
	fl.StringVar(&f.data, "data", "", "data file for the model (CmdStan JSON, .json.zip or CSV with a header)")
	fl.StringVar(&f.init, "init", "", "initial values: a CmdStan init JSON file with every parameter's constrained value by name, used by every chain (default: uniform(−2, 2) on the unconstrained scale, as Stan)")
	fl.StringVar(&f.metric, "metric", "auto_e", "metric: auto_e, diag_e (Stan's default), dense_e, unit_e or fisher_diag_e")
	fl.Float64Var(&f.delta, "adapt-delta", 0.8, "target acceptance statistic of step-size adaptation, in (0, 1)")
	fl.IntVar(&f.maxDepth, "max-depth", 10, "maximum NUTS tree depth, in 1..30")
	fl.BoolVar(&f.saveWarmup, "save-warmup", false, "write the warmup iterations to the CSV files too")
	fl.StringVar(&f.format, "format", "text", "summary format: text, csv or json")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	return cmd
}

// validate checks the numeric flags: mcmc.Config reads a zero as "the default", so a zero
// (or any value out of range) given on the command line is an error naming the flag here.
func (f sampleFlags) validate() error {
	bad := func(flag, want string, v any) error {
		return fmt.Errorf("sample: --%s must be %s (%s=%v)", flag, want, flag, v)
	}
	switch {
	case f.chains < 1:
		return bad("chains", "at least 1", f.chains)
	case f.warmup < 0:
		return bad("warmup", "at least 0", f.warmup)
	case f.draws < 1:
		return bad("draws", "at least 1", f.draws)
	case f.thin < 1:
		return bad("thin", "at least 1", f.thin)
	case f.maxDepth < 1 || f.maxDepth > 30:
		return bad("max-depth", "in 1..30", f.maxDepth)
	case !(f.delta > 0 && f.delta < 1):
		return bad("adapt-delta", "in (0, 1)", f.delta)
	}
	return nil
}

func runSample(ctx context.Context, stdout, stderr io.Writer, reg *registry, name string, f sampleFlags) error {
	switch f.format {
	case "text", "csv", "json":
	default:
		return fmt.Errorf("sample: unknown --format %q (want text, csv or json)", f.format)
	}
	metric, err := mcmc.ParseMetric(f.metric)
	if err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	m, err := reg.load(name, f.data, f.posteriordb)
	if err != nil {
		return err
	}
	if err := output.CheckDir(f.out); err != nil {
		return fmt.Errorf("sample: --out %s: %w", f.out, err)
	}
	init, err := loadInit(f.init, m.Layout)
	if err != nil {
		return fmt.Errorf("sample: %w", err)
	}
	cfg := mcmc.Config{
		Chains: f.chains, Warmup: f.warmup, NoWarmup: f.warmup == 0, Draws: f.draws, Thin: f.thin,
		Seed: f.seed, Metric: metric, TargetAccept: f.delta, MaxDepth: f.maxDepth, SaveWarmup: f.saveWarmup,
	}
	if init != nil {
		cfg.Inits = [][]float64{init}
	}
	if !f.quiet {
		total := f.warmup + f.draws
		cfg.ProgressEvery = max(total/4, 1)
		var mu sync.Mutex
		cfg.Progress = func(p mcmc.Progress) {
			mu.Lock()
			defer mu.Unlock()
			phase := "sampling"
			switch {
			case p.Done:
				phase = "done"
			case p.Warmup:
				phase = "warmup"
			}
			fmt.Fprintf(stderr, "chain %d: %d/%d (%s)\n", p.Chain+1, p.Iteration, p.Total, phase)
		}
		fmt.Fprintf(stderr, "sampling %s: %d chains × (%d warmup + %d draws), seed %d\n", m.Name, f.chains, f.warmup, f.draws, f.seed)
	}
	res, err := mcmc.Sample(ctx, m, cfg)
	if res == nil {
		return err
	}
	cancelled := errors.Is(err, context.Canceled)
	if err != nil && !cancelled {
		return err
	}
	dir, kept := outputDir(f.out, chainFile(m.Name, 0), cancelled)
	paths, stale, werr := writeChainCSVs(dir, m, res)
	if werr != nil {
		return werr
	}
	if len(stale) > 0 {
		fmt.Fprintf(stderr, "removed %s from %s: chain files of an earlier run with more chains\n", strings.Join(stale, ", "), dir)
	}
	if cancelled {
		fmt.Fprintf(stderr, "cancelled: wrote the %d draws per chain made so far to %s\n", res.Len(), strings.Join(paths, ", "))
		if kept {
			fmt.Fprintf(stderr, "the earlier run's chain files in %s are kept\n", f.out)
		}
		return err
	}
	if res.Len() < 4 {
		return fmt.Errorf("sample: %d draws per chain are too few to summarise (wrote %s)", res.Len(), strings.Join(paths, ", "))
	}
	sum, err := diag.Summarize(res.Draws(m.Columns(), m.Row), nil)
	if err != nil {
		return err
	}
	d := res.Diagnostics()
	sum.Notes = append(sum.Notes,
		fmt.Sprintf("%s: %d chains × %d draws, seed %d; %s", m.label(), len(res.Chains), res.Len(), f.seed, d.Summary()),
		fmt.Sprintf("%d gradient evaluations in %.2f s wall; step sizes %s", res.GradEvals, res.Wall.Seconds(), fmtStepSizes(d.StepSizes)),
		"draws: "+strings.Join(paths, ", "))
	warn := append(d.Warnings(), mcmc.SummaryWarnings(sum, len(res.Chains))...)
	for _, w := range warn {
		sum.Notes = append(sum.Notes, "Warning: "+w)
	}
	if err := writeSummaryAs(stdout, sum, f.format); err != nil {
		return err
	}
	for _, r := range sum.Rows {
		if r.Rhat > mcmc.RhatThreshold {
			return errNotConverged
		}
	}
	return nil
}

func fmtStepSizes(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmt.Sprintf("%.3g", v)
	}
	return strings.Join(s, " ")
}

// chainFile is the name of chain c's Stan CSV (c from 0): MODEL-1.csv, ….
func chainFile(model string, c int) string { return fmt.Sprintf("%s-%d.csv", model, c+1) }

// writeChainCSVs writes one Stan CSV per chain into dir and returns the paths. The columns
// after the sampler's are the model's (parameters, then derived quantities), as in vigo fit's
// draws.csv. The files are an output.Set: they replace the earlier ones together or not at all,
// and the chain files of an earlier run with more chains (MODEL-5.csv after a 4-chain rerun)
// are removed with them, so dir never mixes two runs; stale lists the names removed.
func writeChainCSVs(dir string, m *loadedModel, res *mcmc.Result) (paths, stale []string, err error) {
	set, err := output.NewSet(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sample: %w", err)
	}
	defer set.Close()
	names := m.Columns()
	for c := range res.Chains {
		name := chainFile(m.Name, c)
		doc := res.StanCSV(c, m.label(), names, m.Row)
		if err := writeStanCSVFile(set.Path(name), doc); err != nil {
			return nil, nil, fmt.Errorf("sample: writing %s: %w", filepath.Join(dir, name), err)
		}
	}
	stale, err = staleChainFiles(dir, m.Name, len(res.Chains))
	if err != nil {
		return nil, nil, fmt.Errorf("sample: %w", err)
	}
	if paths, err = set.Commit(stale...); err != nil {
		return nil, nil, fmt.Errorf("sample: %w", err)
	}
	return paths, stale, nil
}

// writeStanCSVFile writes doc to the new file path.
func writeStanCSVFile(path string, doc *model.StanCSV) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	err = model.WriteStanCSV(fh, doc)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// staleChainFiles lists the chain files MODEL-N.csv in dir with N above chains.
func staleChainFiles(dir, model string, chains int) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range es {
		num, ok := strings.CutPrefix(e.Name(), model+"-")
		if !ok {
			continue
		}
		if num, ok = strings.CutSuffix(num, ".csv"); !ok {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > chains && chainFile(model, n-1) == e.Name() {
			stale = append(stale, e.Name())
		}
	}
	return stale, nil
}

// writeSummaryAs writes s as text (with notes), CSV or JSON.
func writeSummaryAs(w io.Writer, s *diag.Summary, format string) error {
	switch format {
	case "csv":
		return s.WriteCSV(w)
	case "json":
		return s.WriteJSON(w)
	}
	return s.WriteText(w)
}
