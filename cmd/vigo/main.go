// Command vigo is the vigo command line: variational inference with checked diagnostics, a
// NUTS sampler, summaries and the benchmarks, for the model zoo. It is cli.Main with no models
// of its own; a Go program that passes its models to cli.Main gets the same commands for them
// (examples/usermodel).
package main

import (
	"os"

	"github.com/vigo-bayes/vigo/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
