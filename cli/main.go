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
	"syscall"

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
// models beside the zoo's, and returns the exit code: ExitOK, ExitError, ExitNotConverged (a
// fit or sampler that stopped without converging: its files are written) or ExitCancelled.
// Errors go to standard error.
//
// An interrupt (Ctrl-C, SIGINT) or SIGTERM (what schedulers and `kill` send) cancels the run:
// it stops, writes its partial results and returns ExitCancelled. A second signal exits the
// process at once with ExitCancelled, without waiting for the partial results.
func Main(args []string, models ...Model) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "\nvigo: %v: stopping and writing the partial results (send it again to exit at once)\n", s)
			cancel(signalCause{s})
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "vigo: second %v: exiting now, the partial results may be missing\n", s)
			os.Exit(ExitCancelled)
		case <-done:
		}
	}()
	return Run(ctx, args, os.Stdout, os.Stderr, models...)
}

// signalCause is the cancellation cause of a run stopped by a signal; it is a context.Canceled.
type signalCause struct{ sig os.Signal }

func (e signalCause) Error() string { return "cancelled by " + e.sig.String() }
func (e signalCause) Unwrap() error { return context.Canceled }

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
	root.AddCommand(newFitCmd(reg), newSampleCmd(reg), newDrawCmd(reg), newSummaryCmd(), newZooCmd(reg), newBenchCmd(), newCheckCmd(), newPredictCmd())
	return root, nil
}
