package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/stan"
)

func newCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check MODEL.stan...",
		Short: "Parse and type-check Stan programs (no data, no fit)",
		Long: `vigo check parses and type-checks each Stan program as vigo fit would before compiling it,
and prints its warnings (deprecated syntax, integer division, …) and errors, each as
file:line:column, the offending line and a caret under the column, in stanc3's wording where
it has one. It exits with status 1 if any program has an error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
}

// runCheck checks each file, printing diagnostics to stderr and one line per good file to
// stdout.
func runCheck(stdout, stderr io.Writer, files []string) error {
	tb := stan.Builtins()
	nerr := 0
	bad := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		prog, err := stan.Parse(f, src)
		if err == nil {
			err = prog.Check(tb)
		}
		for _, w := range prog.Warnings {
			fmt.Fprintf(stderr, "Warning: %v\n\n", w)
		}
		if err != nil {
			var es stan.Errors
			if errors.As(err, &es) {
				nerr += len(es)
			} else {
				nerr++
			}
			bad++
			fmt.Fprintf(stderr, "%v\n\n", err)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%d warning%s)\n", f, len(prog.Warnings), plural(len(prog.Warnings)))
	}
	if nerr > 0 {
		return fmt.Errorf("check: %d error%s in %d of %d file%s", nerr, plural(nerr), bad, len(files), plural(len(files)))
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
