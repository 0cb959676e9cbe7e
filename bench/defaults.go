package bench

// setDefault sets *p to v when *p is its zero value: a config field left zero takes the
// default.
func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// setDefaultSlice sets *p to v when *p is nil (an empty, non-nil slice is kept).
func setDefaultSlice[T any](p *[]T, v []T) {
	if *p == nil {
		*p = v
	}
}
