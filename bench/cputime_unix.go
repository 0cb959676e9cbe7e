//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) this process has used so far; ok is false
// where getrusage fails. On a shared machine it is the clock that does not count the time
// the process waited for a core.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
