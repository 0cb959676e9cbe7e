package cli

import (
	"errors"
	"fmt"
	"github.com/vigo-bayes/vigo/output"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"
)

// flagCheck checks one bench subcommand's numeric flags before the run, so that a bad value
// fails at once with the flag's name instead of panicking, being silently replaced by a
// default or failing every run hours later.
type flagCheck func(cmd *cobra.Command) error

// intsAtLeast requires every value of the named int or int-slice flags to be at least lo.
func intsAtLeast(lo int, names ...string) flagCheck {
	return func(cmd *cobra.Command) error {
		for _, n := range names {
			vs, err := intValues(cmd, n)
			if err != nil {
				return err
			}
			for _, v := range vs {
				if v < lo {
					return fmt.Errorf("bench %s: --%s must be at least %d (--%s=%s)", cmd.Name(), n, lo, n, cmd.Flags().Lookup(n).Value)
				}
			}
		}
		return nil
	}
}

// floatsIn requires every value of the named float64 or float64-slice flags to be finite and
// in the interval (lo, hi) with the ends included where loIn, hiIn say so; what describes it.
func floatsIn(lo, hi float64, loIn, hiIn bool, what string, names ...string) flagCheck {
	return func(cmd *cobra.Command) error {
		for _, n := range names {
			vs, err := floatValues(cmd, n)
			if err != nil {
				return err
			}
			for _, v := range vs {
				ok := !math.IsNaN(v) && !math.IsInf(v, 0) &&
					(v > lo || loIn && v == lo) && (v < hi || hiIn && v == hi)
				if !ok {
					return fmt.Errorf("bench %s: --%s must be %s (--%s=%s)", cmd.Name(), n, what, n, cmd.Flags().Lookup(n).Value)
				}
			}
		}
		return nil
	}
}

// positiveFloats requires the named flags to be positive and finite.
func positiveFloats(names ...string) flagCheck {
	return floatsIn(0, math.Inf(1), false, false, "positive and finite", names...)
}

// unitFloats requires the named flags to be in the open interval (0, 1).
func unitFloats(names ...string) flagCheck {
	return floatsIn(0, 1, false, false, "in (0, 1)", names...)
}

// checkFlags runs the checks in order and returns the first error.
func checkFlags(cmd *cobra.Command, checks ...flagCheck) error {
	for _, c := range checks {
		if err := c(cmd); err != nil {
			return err
		}
	}
	return nil
}

func intValues(cmd *cobra.Command, name string) ([]int, error) {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return nil, fmt.Errorf("bench %s: no flag --%s (a bug in the flag checks)", cmd.Name(), name)
	}
	switch f.Value.Type() {
	case "int":
		v, err := strconv.Atoi(f.Value.String())
		return []int{v}, err
	case "intSlice":
		return cmd.Flags().GetIntSlice(name)
	}
	return nil, fmt.Errorf("bench %s: --%s is a %s flag, not int (a bug in the flag checks)", cmd.Name(), name, f.Value.Type())
}

func floatValues(cmd *cobra.Command, name string) ([]float64, error) {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return nil, fmt.Errorf("bench %s: no flag --%s (a bug in the flag checks)", cmd.Name(), name)
	}
	switch f.Value.Type() {
	case "float64":
		v, err := cmd.Flags().GetFloat64(name)
		return []float64{v}, err
	case "float64Slice":
		return cmd.Flags().GetFloat64Slice(name)
	}
	return nil, fmt.Errorf("bench %s: --%s is a %s flag, not float64 (a bug in the flag checks)", cmd.Name(), name, f.Value.Type())
}

// checkOutput checks, before a benchmark runs, that the file named by flag (e.g. "out") can
// be written: its directory exists and a probe file can be created (and is removed) in it,
// and the name is not a directory. "" and "-" (standard output) need no check. Without it a
// run with a relative default such as bench/results/dncp.md, started outside the repository,
// would compute for hours and then fail to write its table.
func checkOutput(cmd *cobra.Command, flag, name string) error {
	if name == "" || name == "-" {
		return nil
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("bench %s: --%s %s: %s", cmd.Name(), flag, name, fmt.Sprintf(format, a...))
	}
	dir := filepath.Dir(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// Unlike output.CheckFile, do not create it: a missing directory here is most often a
		// relative default under bench/results used outside the repository.
		wd, _ := os.Getwd()
		hint := ""
		if !filepath.IsAbs(name) {
			hint = fmt.Sprintf(" (relative to the working directory %s; the defaults under bench/results are meant for a run from the repository root)", wd)
		}
		return fail("directory %s does not exist%s; create it, or give another file, or - for standard output", dir, hint)
	}
	if err := output.CheckFile(name); err != nil {
		return fail("%v", err)
	}
	return nil
}
