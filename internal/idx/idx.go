// Package idx reads the IDX files of MNIST and Fashion-MNIST (gzipped: a magic number, the
// big-endian uint32 dimensions, then the bytes), for bnn's and imagecomp's loaders.
package idx

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The magic numbers of unsigned-byte IDX files: images (3 dimensions) and labels (1).
const (
	Images = 0x00000803
	Labels = 0x00000801
)

// Read returns the payload and dimensions of a gzipped IDX file with the given magic, cut
// to the first limit items (first dimension) when 0 < limit < the file's count (Decode).
func Read(path string, magic uint32, ndim, limit int) ([]byte, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("idx: read: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, nil, fmt.Errorf("idx: read: %s: not gzip: %w", path, err)
	}
	defer zr.Close()
	return Decode(path, zr, magic, ndim, limit)
}

// Decode reads an uncompressed IDX stream (name is for errors): the magic, ndim
// big-endian uint32 dimensions (each 1 to 2²⁶, product at most 2³¹), then the payload. The
// payload is read as it arrives, not allocated from the header's sizes, so a short file that
// declares 2³¹ bytes costs what it holds, not 2 GB.
func Decode(name string, r io.Reader, magic uint32, ndim, limit int) ([]byte, []int, error) {
	hdr := make([]byte, 4*(1+ndim))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("idx: read: %s: short header (%d bytes wanted): %w", name, len(hdr), err)
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		return nil, nil, fmt.Errorf("idx: read: %s: bad magic (got=%#08x, want=%#08x)", name, got, magic)
	}
	dims := make([]int, ndim)
	total := 1
	for i := range dims {
		d := binary.BigEndian.Uint32(hdr[4*(i+1):])
		if d == 0 || d > 1<<26 {
			return nil, nil, fmt.Errorf("idx: read: %s: implausible dimension %d (size=%d)", name, i, d)
		}
		dims[i] = int(d)
		if i == 0 && limit > 0 && limit < dims[0] {
			dims[0] = limit
		}
		total *= dims[i]
		if total > 1<<31 {
			return nil, nil, fmt.Errorf("idx: read: %s: too large (dims=%v)", name, dims[:i+1])
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r, int64(total)))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, fmt.Errorf("idx: read: %s: %w", name, err)
	}
	if len(raw) < total {
		return nil, nil, fmt.Errorf("idx: read: %s: short file (%d of %d data bytes)", name, len(raw), total)
	}
	return raw, dims, nil
}
