// Command vigo is the command-line face of the vigo library: it lists the model zoo, evaluates
// log densities and gradients, and (as the VI engine lands) fits posteriors. Flags map onto the
// library's Config structs; files in, files out.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"
)

// Exit codes, as documented in README.md.
const (
	exitOK           = 0
	exitError        = 1
	exitNotConverged = 3
	exitCancelled    = 130
)

// errNotConverged marks a run that finished without converging: exit code 3, not an error.
var errNotConverged = errors.New("not converged")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root := newRoot()
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		os.Exit(exitOK)
	case errors.Is(err, errNotConverged):
		os.Exit(exitNotConverged)
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "vigo: cancelled")
		os.Exit(exitCancelled)
	default:
		fmt.Fprintln(os.Stderr, "vigo:", err)
		os.Exit(exitError)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "vigo",
		Short:         "Bayesian inference for Go: variational inference with checked diagnostics",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

// commands holds the subcommand constructors; each command's file registers itself in an
// init function, so adding a command touches only its own file.
var commands []func() *cobra.Command
