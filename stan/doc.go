// Package stan compiles programs written in the Stan language (Stan Development Team, "Stan
// Reference Manual", version 2.36, https://mc-stan.org/docs/reference-manual/) into
// model.Model values on vigo's tape, so that a Stan program and its data go through the same
// Recipe, CLI and outputs as a model written in Go.
//
// The pipeline is lexer → parser (AST) → type checker (against the built-in signature table,
// Builtins) → compiler (closures over tape nodes, once per program and data) → model.Model.
//
// Values at run time (Value) keep every real quantity as one tape node, row-major; integers are
// Go ints. Stan's column-major order appears only at the boundaries (unconstrained vector order,
// draws and data files).
package stan
