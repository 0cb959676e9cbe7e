// Package archtest holds the test that keeps vigo's package layering honest (DESIGN.md §1):
// a package may import only packages at a strictly lower level, or at its own level when the
// table below says so. It has no non-test code.
package archtest
