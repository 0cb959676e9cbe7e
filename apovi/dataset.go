package apovi

import (
	"fmt"
	"math"
)

// Dataset is one regression or classification dataset: N rows of inputs X (N×DX, row-major)
// and outputs Y (N×DY, row-major). For a Bernoulli likelihood Y holds 0 or 1.
type Dataset struct {
	X, Y      []float64
	N, DX, DY int
}

// Validate reports the first problem with d: N, DX or DY below 1, X or Y of the wrong length,
// or a non-finite entry. Errors name the field (apovi: Dataset.Validate: …).
func (d Dataset) Validate() error {
	switch {
	case d.N < 1:
		return fmt.Errorf("apovi: Dataset.Validate: no data points (N=%d)", d.N)
	case d.DX < 1:
		return fmt.Errorf("apovi: Dataset.Validate: input dimension must be ≥ 1 (DX=%d)", d.DX)
	case d.DY < 1:
		return fmt.Errorf("apovi: Dataset.Validate: output dimension must be ≥ 1 (DY=%d)", d.DY)
	case len(d.X) != d.N*d.DX:
		return fmt.Errorf("apovi: Dataset.Validate: len(X)=%d, want N·DX=%d", len(d.X), d.N*d.DX)
	case len(d.Y) != d.N*d.DY:
		return fmt.Errorf("apovi: Dataset.Validate: len(Y)=%d, want N·DY=%d", len(d.Y), d.N*d.DY)
	}
	for i, v := range d.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("apovi: Dataset.Validate: X[%d]=%v is not finite (row %d)", i, v, i/d.DX)
		}
	}
	for i, v := range d.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("apovi: Dataset.Validate: Y[%d]=%v is not finite (row %d)", i, v, i/d.DY)
		}
	}
	return nil
}

// concat returns the rows of a followed by those of b (either may be empty).
func concat(a, b Dataset) Dataset {
	if b.N == 0 {
		return a
	}
	if a.N == 0 {
		return b
	}
	return Dataset{
		X: append(append(make([]float64, 0, len(a.X)+len(b.X)), a.X...), b.X...),
		Y: append(append(make([]float64, 0, len(a.Y)+len(b.Y)), a.Y...), b.Y...),
		N: a.N + b.N, DX: a.DX, DY: a.DY,
	}
}

// checkData validates d (name says which argument) against the model's dimensions.
func checkData(fn, name string, d Dataset, dx, dy int) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("apovi: %s: %s: %w", fn, name, err)
	}
	if d.DX != dx {
		return fmt.Errorf("apovi: %s: %s.DX=%d, the model's input dimension is %d", fn, name, d.DX, dx)
	}
	if d.DY != dy {
		return fmt.Errorf("apovi: %s: %s.DY=%d, the model's output dimension is %d", fn, name, d.DY, dy)
	}
	return nil
}
