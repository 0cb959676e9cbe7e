//go:build !unix

package bench

import "time"

// processCPU is not available on this system: ok is false and callers use wall time.
func processCPU() (time.Duration, bool) { return 0, false }
