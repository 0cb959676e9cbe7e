package bnn

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// fmnistOrSkip loads Fashion-MNIST ($VIGO_FASHION_MNIST, else Debian's location) or skips
// the test.
func fmnistOrSkip(t *testing.T, train bool, limit int) ([]float64, []int, int) {
	t.Helper()
	X, y, n, err := LoadFashionMNIST(datadir.FashionMNISTOrSkip(t), train, limit)
	if err != nil {
		t.Fatal(err)
	}
	return X, y, n
}

func TestLoadFashionMNIST(t *testing.T) {
	X, y, n := fmnistOrSkip(t, false, 0)
	if n != 10000 || len(X) != n*784 || len(y) != n {
		t.Fatalf("test set: rows %d, len(X) %d, len(y) %d", n, len(X), len(y))
	}
	var counts [10]int
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range y {
		counts[c]++
	}
	for _, x := range X {
		lo, hi = min(lo, x), max(hi, x)
	}
	// The test set is balanced, 1,000 per class (Xiao et al. 2017), and uses the full byte range.
	for c, k := range counts {
		if k != 1000 {
			t.Errorf("class %d: %d images, want 1000", c, k)
		}
	}
	if lo != 0 || hi != 1 {
		t.Errorf("pixel range [%g, %g], want [0, 1]", lo, hi)
	}
}

// writeGz writes b gzipped to dir/name and returns the path.
func writeGz(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

// TestReadIDX: a well-formed file round-trips (pixels scaled by 1/255); a wrong magic, a short
// header and a short payload are errors that name the file and the problem.
func TestReadIDX(t *testing.T) {
	dir := t.TempDir()
	img := writeGz(t, dir, "img.gz", idxBytes(idxImages, []uint32{2, 2, 3}, []byte{0, 51, 255, 1, 2, 3, 4, 5, 6, 7, 8, 9}))
	X, rows, h, w, err := ReadIDXImages(img, 0)
	if err != nil || rows != 2 || h != 2 || w != 3 || X[1] != 0.2 || X[2] != 1 {
		t.Fatalf("ReadIDXImages: rows %d, %d×%d, X[:3] %v, err %v", rows, h, w, X[:3], err)
	}
	lab := writeGz(t, dir, "lab.gz", idxBytes(idxLabels, []uint32{3}, []byte{7, 0, 9}))
	if y, err := ReadIDXLabels(lab, 0); err != nil || len(y) != 3 || y[0] != 7 || y[2] != 9 {
		t.Fatalf("ReadIDXLabels: %v, %v", y, err)
	}
	for _, tc := range []struct {
		name, want string
		read       func(string) error
		content    []byte
	}{
		{"magic.gz", "bad magic", func(p string) error { _, err := ReadIDXLabels(p, 0); return err }, idxBytes(idxImages, []uint32{3}, []byte{1, 2, 3})},
		{"header.gz", "short header", func(p string) error { _, _, _, _, err := ReadIDXImages(p, 0); return err }, []byte{0, 0, 8, 3, 0}},
		{"payload.gz", "short file", func(p string) error { _, _, _, _, err := ReadIDXImages(p, 0); return err }, idxBytes(idxImages, []uint32{2, 2, 2}, []byte{1, 2, 3})},
	} {
		p := writeGz(t, dir, tc.name, tc.content)
		err := tc.read(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
	if y, err := ReadIDXLabels(lab, 2); err != nil || len(y) != 2 || y[1] != 0 {
		t.Errorf("ReadIDXLabels with limit 2: %v, %v", y, err)
	}
	if _, err := ReadIDXLabels(filepath.Join(dir, "absent.gz"), 0); err == nil || !strings.Contains(err.Error(), "absent.gz") {
		t.Errorf("missing file: %v", err)
	}
}

// TestFitFashionMNISTSubset trains a small all-convolutional net (6 and 12 channels, 32 hidden
// units, prior precision 10) on the first 2,000 training images for 2 epochs (126 Adam steps of
// 32) and checks the error on the first 500 test images. Measured (seed 1): vbp 0.264, mfvi
// 0.246, against 0.90 for chance; the bound 0.40 leaves room for a different platform's
// rounding or noise stream while still failing a net that learned little. About 2.5 s of CPU.
func TestFitFashionMNISTSubset(t *testing.T) {
	const ntr, nte = 2000, 500
	Xtr, ytr, _ := fmnistOrSkip(t, true, ntr)
	Xte, yte, _ := fmnistOrSkip(t, false, nte)
	for _, meth := range []Method{VBP, MonteCarlo} {
		t.Run(meth.String(), func(t *testing.T) {
			net := ConvNet{Height: 28, Width: 28, Channels: 1, Method: meth,
				Conv:  []ConvSpec{{Out: 6, Kernel: 5, Stride: 2}, {Out: 12, Kernel: 5, Stride: 2}},
				Dense: []int{32, 10}, PriorPrec: 10}
			start := time.Now()
			c, err := FitClassifier(context.Background(), net, Xtr[:ntr*784], ytr[:ntr], ntr,
				ClassifierConfig{Epochs: 2, BatchSize: 32, LR: 0.01, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			probs := c.Predict(Xte[:nte*784], nte, 4, 2)
			wrong, ll := 0, 0.0
			for i, yi := range yte[:nte] {
				p := probs[i*10 : (i+1)*10]
				best := 0
				for j := range p {
					if p[j] > p[best] {
						best = j
					}
				}
				if best != yi {
					wrong++
				}
				ll += math.Log(p[yi])
			}
			e := float64(wrong) / nte
			t.Logf("%s: test error %.3f, test LL %.3f, %v", meth, e, ll/nte, time.Since(start).Round(time.Millisecond))
			if e > 0.4 {
				t.Errorf("test error %.3f", e)
			}
		})
	}
}
