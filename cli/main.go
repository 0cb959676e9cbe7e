// Package cli is the vigo command line as a library: Main runs it, so a Go user gets the whole
// CLI — vigo fit, sample, draw, summary, zoo and bench, with every output file — for their own
// models in their own binary:
//
//	func main() { os.Exit(cli.Main(os.Args[1:], cli.Model{Name: "mine", New: newMine})) }
//
// cmd/vigo is exactly that with no models of its own. Flags map onto the library's Recipe and
// bench configs; files in, files out.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// Exit codes, as documented in README.md.
const (
	ExitOK           = 0
	ExitError        = 1
	ExitNotConverged = 3
	ExitCancelled    = 130
)

// errNotConverged marks a run that finished without converging: exit code 3, not an error.
var errNotConverged = errors.New("not converged")

// Main runs the vigo command line with args (the program name left out) and the caller's
// models beside the zoo's, reading an interrupt (Ctrl-C) as cancellation, and returns the exit
// code: ExitOK, ExitError, ExitNotConverged (a fit or sampler that stopped without converging:
// its files are written) or ExitCancelled (interrupted: the partial results are written).
// Errors go to standard error.
func Main(args []string, models ...Model) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Run(ctx, args, os.Stdout, os.Stderr, models...)
}

// Run is Main with the context and the output streams given: what a test or a host program
// calls.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, models ...Model) int {
	root, err := NewRoot(models...)
	if err != nil {
		fmt.Fprintln(stderr, "vigo:", err)
		return ExitError
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errNotConverged):
		return ExitNotConverged
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "vigo: cancelled")
		return ExitCancelled
	default:
		fmt.Fprintln(stderr, "vigo:", err)
		return ExitError
	}
}

// NewRoot returns the vigo command with its subcommands, for the zoo's models and the
// caller's. It fails when a model has no name or constructor, or two share a name (a model
// may not take a zoo model's name).
func NewRoot(models ...Model) (*cobra.Command, error) {
	reg, err := newRegistry(models)
	if err != nil {
		return nil, err
	}
	root := &cobra.Command{
		Use:           "vigo",
		Short:         "Bayesian inference for Go: variational inference with checked diagnostics",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newFitCmd(reg), newSampleCmd(reg), newDrawCmd(reg), newSummaryCmd(), newZooCmd(reg), newBenchCmd())
	return root, nil
}
