package kernel

import (
	"runtime"
	"syscall"
	"testing"
)

// threadCPU returns the CPU time the calling thread has used, in nanoseconds (Linux
// RUSAGE_THREAD). On a machine shared with other work, CPU time per operation is far steadier
// than wall time, which also counts the time the thread waits for a core.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchCPU runs f in a benchmark loop and reports the thread's CPU time per call as cpu-ns/op
// next to the wall time.
func benchCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	t0 := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
}
