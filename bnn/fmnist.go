package bnn

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
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
	idxImages = 0x00000803
	idxLabels = 0x00000801
)

// ReadIDXImages reads a gzipped IDX file of unsigned-byte images (magic 0x803: count, height,
// width as big-endian uint32, then the pixels) and returns them scaled to [0, 1], one image of
// h·w values per row; only the first limit images when limit > 0.
func ReadIDXImages(path string, limit int) (X []float64, rows, h, w int, err error) {
	raw, dims, err := readIDX(path, idxImages, 3, limit)
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
	raw, _, err := readIDX(path, idxLabels, 1, limit)
	if err != nil {
		return nil, err
	}
	y := make([]int, len(raw))
	for i, b := range raw {
		y[i] = int(b)
	}
	return y, nil
}

// readIDX returns the payload and dimensions of a gzipped IDX file with the given magic, cut
// to the first limit items (first dimension) when 0 < limit < the file's count (decodeIDX).
func readIDX(path string, magic uint32, ndim, limit int) ([]byte, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("bnn: read IDX: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, nil, fmt.Errorf("bnn: read IDX: %s: not gzip: %w", path, err)
	}
	defer zr.Close()
	return decodeIDX(path, zr, magic, ndim, limit)
}

// decodeIDX reads an uncompressed IDX stream (name is for errors): the magic, ndim
// big-endian uint32 dimensions (each 1 to 2²⁶, product at most 2³¹), then the payload. The
// payload is read as it arrives, not allocated from the header's sizes, so a short file that
// declares 2³¹ bytes costs what it holds, not 2 GB.
func decodeIDX(name string, r io.Reader, magic uint32, ndim, limit int) ([]byte, []int, error) {
	hdr := make([]byte, 4*(1+ndim))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("bnn: read IDX: %s: short header (%d bytes wanted): %w", name, len(hdr), err)
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		return nil, nil, fmt.Errorf("bnn: read IDX: %s: bad magic (got=%#08x, want=%#08x)", name, got, magic)
	}
	dims := make([]int, ndim)
	total := 1
	for i := range dims {
		d := binary.BigEndian.Uint32(hdr[4*(i+1):])
		if d == 0 || d > 1<<26 {
			return nil, nil, fmt.Errorf("bnn: read IDX: %s: implausible dimension %d (size=%d)", name, i, d)
		}
		dims[i] = int(d)
		if i == 0 && limit > 0 && limit < dims[0] {
			dims[0] = limit
		}
		total *= dims[i]
		if total > 1<<31 {
			return nil, nil, fmt.Errorf("bnn: read IDX: %s: too large (dims=%v)", name, dims[:i+1])
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r, int64(total)))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, fmt.Errorf("bnn: read IDX: %s: %w", name, err)
	}
	if len(raw) < total {
		return nil, nil, fmt.Errorf("bnn: read IDX: %s: short file (%d of %d data bytes)", name, len(raw), total)
	}
	return raw, dims, nil
}
