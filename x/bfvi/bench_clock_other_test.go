//go:build !linux

package bfvi_test

// threadClock is threadCPU where clock_gettime(CLOCK_THREAD_CPUTIME_ID) is not used.
func threadClock() int64 { return threadCPU() }
