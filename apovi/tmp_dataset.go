package apovi

// TEMPORARY until h16-model's skeleton lands.
type Dataset struct {
	X, Y   []float64
	DX, DY int
}

func newDataset1D(x, y []float64) Dataset { return Dataset{X: x, Y: y, DX: 1, DY: 1} }

func (d Dataset) N() int { return len(d.X) / d.DX }
