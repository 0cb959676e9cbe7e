package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func init() {
	commands = append(commands, newBenchCmd)
	benchCommands = append(benchCommands, newBenchPosteriordbCmd)
}

// benchCommands holds the constructors of vigo bench's subcommands; a benchmark's file
// appends to it in an init function, as the top-level commands do with commands.
var benchCommands []func() *cobra.Command

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run vigo's benchmarks and write markdown tables",
		Args:  cobra.NoArgs,
	}
	for _, c := range benchCommands {
		cmd.AddCommand(c())
	}
	return cmd
}

func newBenchPosteriordbCmd() *cobra.Command {
	var (
		methods, posteriors, out, dir string
		cfg                           bench.Config
	)
	cmd := &cobra.Command{
		Use:   "posteriordb",
		Short: "Fit the public posteriordb posteriors and compare with the reference draws and Stan ADVI",
		Long: `vigo bench posteriordb runs every method on every public posteriordb posterior with
seeds 1..N, measures W1/sd, sd ratio and max|Δmean|/sd against the 10,000 reference draws on
the constrained scale, k̂, wall time and gradient evaluations, and writes a markdown table of
medians over seeds with Stan ADVI's numbers (../shared/docs/targets.md) beside them and a
verdict per posterior. Progress goes to stderr, one line per run.

Methods: ` + strings.Join(bench.MethodNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Methods = splitList(methods)
			if posteriors != "all" {
				cfg.Posteriors = splitList(posteriors)
			}
			d, _, err := datadir.PosteriorDB(dir)
			if err != nil {
				return fmt.Errorf("bench posteriordb: %w", err)
			}
			cfg.Dir = d
			errw := cmd.ErrOrStderr()
			cfg.Progress = func(r bench.SeedResult) {
				if r.Err != nil {
					fmt.Fprintf(errw, "%s %s seed %d: aborted after %.1fs: %v\n", r.Posterior, r.Method, r.Seed, r.Wall.Seconds(), r.Err)
					return
				}
				fmt.Fprintf(errw, "%s %s seed %d: %.1fs, %d grad evals, k̂ %.2f, W1/sd %.3g, sd ratio %.3g (%s)\n",
					r.Posterior, r.Method, r.Seed, r.Wall.Seconds(), r.GradEvals, r.KHat, r.W1SD, r.SDRatio, r.Status)
			}
			h := bench.Header{Date: time.Now(), Command: commandLine(), Commit: gitCommit(), LoadStart: bench.LoadAvg()}
			rep, err := bench.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			h.LoadEnd = bench.LoadAvg()
			w := cmd.OutOrStdout()
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("bench posteriordb: %w", err)
				}
				if err := rep.Markdown(f, h); err != nil {
					f.Close()
					return fmt.Errorf("bench posteriordb: write %s: %w", out, err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("bench posteriordb: write %s: %w", out, err)
				}
				fmt.Fprintln(errw, "wrote", out)
				return nil
			}
			return rep.Markdown(w, h)
		},
	}
	f := cmd.Flags()
	f.StringVar(&methods, "methods", strings.Join(bench.DefaultMethods, ","), "comma-separated methods ("+strings.Join(bench.MethodNames(), ", ")+")")
	f.IntVar(&cfg.Seeds, "seeds", 3, "number of seeds; runs use seeds 1..N")
	f.StringVar(&posteriors, "posteriors", "all", "all, or comma-separated zoo or posteriordb names")
	f.StringVar(&out, "out", "", "write the markdown table to FILE instead of stdout")
	f.StringVar(&dir, "posteriordb", "", datadir.PosteriorDBHelp)
	f.IntVar(&cfg.MaxIter, "max-iter", 0, "iteration cap per fit (0: the fit's default)")
	f.IntVar(&cfg.Workers, "workers", 1, "goroutines per fit (results do not depend on it; 1 compares with Stan's single core)")
	f.IntVar(&cfg.Draws, "draws", 0, "draws per run compared with the reference and used for k̂ (0: 1000)")
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// commandLine is the command as typed, program name reduced to "vigo".
func commandLine() string {
	args := append([]string{"vigo"}, os.Args[1:]...)
	return strings.Join(args, " ")
}

// gitCommit returns the commit the binary was built from (Go's VCS stamp), else the
// checkout's HEAD, with "+dirty" for uncommitted changes; "unknown" without either.
func gitCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	b, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(b))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "+dirty"
	}
	return rev
}
