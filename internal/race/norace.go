//go:build !race

// Package race reports whether the race detector is on. Under -race, sync.Pool drops items at
// random and the instrumentation allocates, so tests that count allocations skip themselves.
package race

// Enabled reports whether the binary was built with the race detector.
const Enabled = false
