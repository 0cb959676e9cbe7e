package bfvi_test

import (
	"syscall"
	"unsafe"
)

// threadClock returns the calling thread's CPU time in nanoseconds from
// clock_gettime(CLOCK_THREAD_CPUTIME_ID), which counts the scheduler's exact run time (the
// RUSAGE_THREAD times of threadCPU advance by whole ticks on some kernels, too coarse for
// blocks of a few milliseconds).
func threadClock() int64 {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return threadCPU()
	}
	return ts.Nano()
}
