package bnn

import (
	"fmt"
	"github.com/vigo-bayes/vigo/internal/idx"
	"path/filepath"
)

// LoadFashionMNIST reads Fashion-MNIST (Xiao, Rasul & Vollgraf 2017: 60,000 training and
// 10,000 test 28×28 grey images of ten clothing classes) from dir: the training set
// (train = true: train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz) or the test set
// (t10k-…), only the first limit images when limit > 0. It returns the images as rows×784 values in [0, 1] (pixel/255, row-major 28×28 per
// image, the layout of a 28×28×1 ConvNet input), the labels in [0, 10) and rows. Errors name
// the file and what is wrong.
func LoadFashionMNIST(dir string, train bool, limit int) (X []float64, y []int, rows int, err error) {
	pre := "t10k"
	if train {
		pre = "train"
	}
	X, rows, h, w, err := ReadIDXImages(filepath.Join(dir, pre+"-images-idx3-ubyte.gz"), limit)
	if err != nil {
		return nil, nil, 0, err
	}
	lp := filepath.Join(dir, pre+"-labels-idx1-ubyte.gz")
	y, err = ReadIDXLabels(lp, limit)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(y) != rows {
		return nil, nil, 0, fmt.Errorf("bnn: LoadFashionMNIST: %s has %d labels for %d images", lp, len(y), rows)
	}
	if h != 28 || w != 28 {
		return nil, nil, 0, fmt.Errorf("bnn: LoadFashionMNIST: images are %d×%d, want 28×28 (dir=%s)", h, w, dir)
	}
	for i, c := range y {
		if c >= 10 {
			return nil, nil, 0, fmt.Errorf("bnn: LoadFashionMNIST: %s: label %d outside [0, 10) (item=%d)", lp, c, i)
		}
	}
	return X, y, rows, nil
}

// IDX magic numbers: two zero bytes, type 0x08 (unsigned byte), number of dimensions.
const (
	idxImages = idx.Images
	idxLabels = idx.Labels
)

// ReadIDXImages reads a gzipped IDX file of unsigned-byte images (magic 0x803: count, height,
// width as big-endian uint32, then the pixels) and returns them scaled to [0, 1], one image of
// h·w values per row; only the first limit images when limit > 0.
func ReadIDXImages(path string, limit int) (X []float64, rows, h, w int, err error) {
	raw, dims, err := idx.Read(path, idxImages, 3, limit)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	X = make([]float64, len(raw))
	for i, b := range raw {
		X[i] = float64(b) / 255
	}
	return X, dims[0], dims[1], dims[2], nil
}

// ReadIDXLabels reads a gzipped IDX file of unsigned-byte labels (magic 0x801: count, then
// one byte per label); only the first limit labels when limit > 0.
func ReadIDXLabels(path string, limit int) ([]int, error) {
	raw, _, err := idx.Read(path, idxLabels, 1, limit)
	if err != nil {
		return nil, err
	}
	y := make([]int, len(raw))
	for i, b := range raw {
		y[i] = int(b)
	}
	return y, nil
}
