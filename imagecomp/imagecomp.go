// Package imagecomp is the image-completion protocol of Rochussen (2023, "Amortised Inference
// in Bayesian Neural Networks", arXiv:2309.03018, §4.3 and Table 2; docs: ../shared/docs/apovi.md
// §1.7, §4.3, §5 E3): MNIST digits as regression datasets over pixel coordinates, the fixed
// per-image training masks, the ten fixed test digits with the thesis's mask probabilities, the
// squared-error metric (grey-scale target over all 784 pixels, a NaN prediction counts 1.0),
// and the linear-interpolation baseline (exact Delaunay triangulation + barycentric
// interpolation, NaN outside the convex hull of the observed pixels).
//
// Conventions (the thesis's code, apovi.md §4.3):
//   - an image is 784 grey values in [0, 1], row-major (index = 28·row + col);
//   - the input of pixel (row, col) is x = (lin[col], lin[row]) with lin = linspace(−1, 1, 28):
//     the first coordinate is the column;
//   - the regression target is the binarised image, 1 where grey ≥ 0.5 (torch.round's
//     half-to-even never matters for MNIST's k/255 values, which are never 0.5);
//   - context = observed pixels (mask true), targets = the others.
//
// The package depends only on rng; it reads IDX files itself (the same format as
// bnn.ReadIDXImages, which sits higher in the package table).
package imagecomp

import (
	"errors"
	"fmt"
	"github.com/vigo-bayes/vigo/internal/idx"
	"math"
	"path/filepath"

	"github.com/vigo-bayes/vigo/rng"
)

// Side is the image side; Pixels = Side² is the number of pixels (and of regression points) per image.
const (
	Side   = 28
	Pixels = Side * Side
)

// Set is a pool of grey-scale images with their labels.
type Set struct {
	Images [][]float64 // each Pixels values in [0, 1], row-major
	Labels []int       // in [0, 10)
}

// LoadMNIST reads images-idx3-ubyte.gz and labels-idx1-ubyte.gz (gzipped IDX, 28×28
// unsigned bytes, grey = byte/255) from dir, e.g. ../shared/data/mnist-10k (10,000 MNIST
// digits, class-interleaved; see its README). Errors name the file and what is wrong.
func LoadMNIST(dir string) (*Set, error) {
	return loadIDX("LoadMNIST", filepath.Join(dir, "images-idx3-ubyte.gz"), filepath.Join(dir, "labels-idx1-ubyte.gz"))
}

// LoadFashionMNIST reads Fashion-MNIST (Xiao, Rasul & Vollgraf 2017: 60,000 training and
// 10,000 test 28×28 grey images of ten clothing classes, the layout of MNIST) from dir, e.g.
// /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist): the training split
// (train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz) and the test split (t10k-…).
// Errors name the file and what is wrong.
func LoadFashionMNIST(dir string) (train, test *Set, err error) {
	if train, err = loadIDX("LoadFashionMNIST", filepath.Join(dir, "train-images-idx3-ubyte.gz"), filepath.Join(dir, "train-labels-idx1-ubyte.gz")); err != nil {
		return nil, nil, err
	}
	if test, err = loadIDX("LoadFashionMNIST", filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), filepath.Join(dir, "t10k-labels-idx1-ubyte.gz")); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// loadIDX reads one gzipped IDX image file (28×28) and its label file through internal/idx.
func loadIDX(fn, ip, lp string) (*Set, error) {
	raw, dims, err := idx.Read(ip, idx.Images, 3, 0)
	if err != nil {
		return nil, err
	}
	if dims[1] != Side || dims[2] != Side {
		return nil, fmt.Errorf("imagecomp: %s: %s: images are %d×%d, want %d×%d", fn, ip, dims[1], dims[2], Side, Side)
	}
	lab, ldims, err := idx.Read(lp, idx.Labels, 1, 0)
	if err != nil {
		return nil, err
	}
	if ldims[0] != dims[0] {
		return nil, fmt.Errorf("imagecomp: %s: %s has %d labels for %d images", fn, lp, ldims[0], dims[0])
	}
	s := &Set{Images: make([][]float64, dims[0]), Labels: make([]int, dims[0])}
	for i := range s.Images {
		img := make([]float64, Pixels)
		for j, b := range raw[i*Pixels : (i+1)*Pixels] {
			img[j] = float64(b) / 255
		}
		s.Images[i] = img
		if lab[i] > 9 {
			return nil, fmt.Errorf("imagecomp: %s: %s: label %d outside [0, 10) (item=%d)", fn, lp, lab[i], i)
		}
		s.Labels[i] = int(lab[i])
	}
	return s, nil
}

// TestLabels returns the labels of the ten test digits, in order: 7, 2, 1, 0, 4, 1, 4, 9, 5,
// 9, the labels of the first ten images of MNIST's test split that the thesis used.
func TestLabels() []int { return []int{7, 2, 1, 0, 4, 1, 4, 9, 5, 9} }

// TestP returns the thesis's mask probabilities of the ten test digits, p_i =
// numpy.random.uniform(0.1, 0.3, 10) after numpy.random.seed(0), to four decimals (apovi.md
// §4.3): test digit i observes each pixel with probability p_i.
func TestP() []float64 {
	return []float64{0.2098, 0.2430, 0.2206, 0.2090, 0.1847, 0.2292, 0.1875, 0.2784, 0.2927, 0.1767}
}

// Split chooses the ten test digits of a pool and returns their indices (in TestLabels order)
// and the indices of the training pool (all other images, in file order). The k-th test
// digit with label c is the j-th image of the pool with label c, where j counts how many
// times c already occurred in TestLabels before position k: so the labels 7, 2, 1, 0, 4
// take the first 7, 2, 1, 0, 4 of the file, the second 1 takes the second 1, and so on. On
// ../shared/data/mnist-10k (class-interleaved) these are all among the first 30 images.
func Split(s *Set) (test, train []int, err error) {
	if s == nil || len(s.Images) == 0 {
		return nil, nil, errors.New("imagecomp: Split: empty set (images=0)")
	}
	if len(s.Labels) != len(s.Images) {
		return nil, nil, fmt.Errorf("imagecomp: Split: %d labels for %d images", len(s.Labels), len(s.Images))
	}
	var used [10]int
	isTest := make(map[int]bool)
	for k, c := range TestLabels() {
		want := used[c]
		used[c]++
		found := -1
		for i, l := range s.Labels {
			if l == c {
				if want == 0 {
					found = i
					break
				}
				want--
			}
		}
		if found < 0 {
			return nil, nil, fmt.Errorf("imagecomp: Split: test digit %d needs %d images with label %d, the set has fewer", k, used[c], c)
		}
		test = append(test, found)
		isTest[found] = true
	}
	for i := range s.Images {
		if !isTest[i] {
			train = append(train, i)
		}
	}
	return test, train, nil
}

// Coords returns the Pixels×2 row-major matrix of pixel inputs: row 28·r + c is
// (lin[c], lin[r]) with lin[k] = −1 + 2k/27.
func Coords() []float64 {
	x := make([]float64, 2*Pixels)
	for r := range Side {
		for c := range Side {
			i := r*Side + c
			x[2*i] = lin(c)
			x[2*i+1] = lin(r)
		}
	}
	return x
}

func lin(k int) float64 { return -1 + 2*float64(k)/float64(Side-1) }

// Binarise returns the image thresholded at 0.5: 1 where grey ≥ 0.5, else 0.
func Binarise(img []float64) []float64 {
	b := make([]float64, len(img))
	for i, v := range img {
		if v >= 0.5 {
			b[i] = 1
		}
	}
	return b
}

// Mask marks the observed (context) pixels of one image.
type Mask []bool

// Count returns the number of observed pixels.
func (m Mask) Count() int {
	n := 0
	for _, o := range m {
		if o {
			n++
		}
	}
	return n
}

// RandomMask draws a mask of Pixels pixels, each observed independently with probability p
// (observed when u < p, u ~ U[0, 1) from r), as the thesis's random_mask does.
func RandomMask(p float64, r *rng.Stream) Mask {
	m := make(Mask, Pixels)
	for i := range m {
		m[i] = r.Float64() < p
	}
	return m
}

// Stream numbers of the masks: training image i (position i of the training pool) draws from
// rng.New(seed, trainStream+i), test digit k from rng.New(seed, testStream+k).
const (
	trainStream = 1 << 32
	testStream  = 1 << 33
)

// TrainMasks returns the fixed training masks of n training images: image i draws p_i ~
// U[0.05, 0.95] and then its pixels, from its own stream of seed, so a mask does not depend
// on n or on the other images. The thesis draws them once when the meta-dataset is built and
// reuses them in every iteration (apovi.md §2, §7 pitfall 8).
func TrainMasks(n int, seed uint64) ([]Mask, error) {
	if n < 0 {
		return nil, fmt.Errorf("imagecomp: TrainMasks: negative count (n=%d)", n)
	}
	out := make([]Mask, n)
	for i := range out {
		r := rng.New(seed, trainStream+uint64(i))
		p := 0.05 + 0.9*r.Float64()
		out[i] = RandomMask(p, r)
	}
	return out, nil
}

// TestMasks returns the masks of the ten test digits: digit k observes each pixel with
// probability TestP()[k], drawn from its own stream of seed (the thesis's pixel draws came
// from torch's generator and cannot be reproduced).
func TestMasks(seed uint64) []Mask {
	ps := TestP()
	out := make([]Mask, len(ps))
	for k, p := range ps {
		out[k] = RandomMask(p, rng.New(seed, testStream+uint64(k)))
	}
	return out
}

// Task is one image-completion problem: a grey-scale image, its mask, and where it came from.
type Task struct {
	Image []float64 // grey values, the metric's reference
	Mask  Mask
	Label int
	Index int // position in the Set
}

// Context returns the regression dataset that a model conditions on: the inputs of the
// observed pixels (n×2 row-major, Coords order) and their binarised values.
func (t Task) Context() (x, y []float64) {
	coords := Coords()
	for i, o := range t.Mask {
		if o {
			x = append(x, coords[2*i], coords[2*i+1])
			y = append(y, binary01(t.Image[i]))
		}
	}
	return x, y
}

// Targets returns the inputs and binarised values of the unobserved pixels.
func (t Task) Targets() (x, y []float64) {
	coords := Coords()
	for i, o := range t.Mask {
		if !o {
			x = append(x, coords[2*i], coords[2*i+1])
			y = append(y, binary01(t.Image[i]))
		}
	}
	return x, y
}

func binary01(v float64) float64 {
	if v >= 0.5 {
		return 1
	}
	return 0
}

// TestTasks returns the ten test problems of the protocol: the digits chosen by Split with
// the masks of TestMasks(seed).
func TestTasks(s *Set, seed uint64) ([]Task, error) {
	test, _, err := Split(s)
	if err != nil {
		return nil, err
	}
	masks := TestMasks(seed)
	out := make([]Task, len(test))
	for k, i := range test {
		out[k] = Task{Image: s.Images[i], Mask: masks[k], Label: s.Labels[i], Index: i}
	}
	return out, nil
}

// TrainTasks returns the first n problems of the training pool (the images Split leaves,
// in file order) with their fixed masks TrainMasks(n, seed); n = 0 means the whole pool.
// n larger than the pool is an error naming both.
func TrainTasks(s *Set, n int, seed uint64) ([]Task, error) {
	_, train, err := Split(s)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > len(train) {
		return nil, fmt.Errorf("imagecomp: TrainTasks: n=%d outside [0, %d] (the training pool)", n, len(train))
	}
	if n == 0 {
		n = len(train)
	}
	masks, err := TrainMasks(n, seed)
	if err != nil {
		return nil, err
	}
	out := make([]Task, n)
	for k := range out {
		i := train[k]
		out[k] = Task{Image: s.Images[i], Mask: masks[k], Label: s.Labels[i], Index: i}
	}
	return out, nil
}

// SplitTasks is the protocol on a data set that comes with its own test split, as the thesis
// used MNIST (apovi.md §4.3): the ten test problems are the first ten images of test, in file
// order, with the masks of TestMasks(seed) (the thesis's p_i); the training pool is the
// first n images of train (n = 0: all of them) with their fixed masks TrainMasks(n, seed).
// A test split of fewer than ten images, or n outside [0, len(train)], is an error naming
// the count.
func SplitTasks(train, test *Set, n int, seed uint64) (testTasks, pool []Task, err error) {
	if test == nil || len(test.Images) < len(TestP()) {
		return nil, nil, fmt.Errorf("imagecomp: SplitTasks: the test split has fewer than %d images", len(TestP()))
	}
	if train == nil || n < 0 || n > len(train.Images) {
		size := 0
		if train != nil {
			size = len(train.Images)
		}
		return nil, nil, fmt.Errorf("imagecomp: SplitTasks: n=%d outside [0, %d] (the training split)", n, size)
	}
	for _, s := range []*Set{train, test} {
		if len(s.Labels) != len(s.Images) {
			return nil, nil, fmt.Errorf("imagecomp: SplitTasks: %d labels for %d images", len(s.Labels), len(s.Images))
		}
	}
	for k, m := range TestMasks(seed) {
		testTasks = append(testTasks, Task{Image: test.Images[k], Mask: m, Label: test.Labels[k], Index: k})
	}
	if n == 0 {
		n = len(train.Images)
	}
	masks, err := TrainMasks(n, seed)
	if err != nil {
		return nil, nil, err
	}
	pool = make([]Task, n)
	for i := range pool {
		pool[i] = Task{Image: train.Images[i], Mask: masks[i], Label: train.Labels[i], Index: i}
	}
	return testTasks, pool, nil
}

// SquaredError is the thesis's metric for one image (apovi.md §5 E3, pixelwise_sq_error):
// E = Σ over all pixels of (orig_i − pred_i)², where a NaN prediction adds 1.0 instead. orig
// is the grey-scale image (not binarised); pred is the predicted mean. Lengths must agree;
// a NaN in orig is an error naming the pixel.
func SquaredError(orig, pred []float64) (float64, error) {
	if len(orig) != len(pred) {
		return 0, fmt.Errorf("imagecomp: SquaredError: %d predictions for %d pixels", len(pred), len(orig))
	}
	e := 0.0
	for i, o := range orig {
		if math.IsNaN(o) {
			return 0, fmt.Errorf("imagecomp: SquaredError: original pixel %d is NaN", i)
		}
		if math.IsNaN(pred[i]) {
			e++
			continue
		}
		d := o - pred[i]
		e += d * d
	}
	return e, nil
}

// LinearInterpolate is the thesis's linear-interpolation baseline (scipy griddata, method
// "linear", in pixel coordinates (column, row); apovi.md §1.7): the Delaunay triangulation
// of the observed pixels (Triangulate, with its tie-breaking on co-circular pixels) and
// barycentric interpolation of the grey-scale observed values. Observed pixels keep their
// values exactly; pixels outside the convex hull of the observed ones are NaN; pixels on the
// hull's boundary count as inside. Cost O(Pixels · #triangles).
func LinearInterpolate(img []float64, m Mask) ([]float64, error) {
	if len(img) != Pixels || len(m) != Pixels {
		return nil, fmt.Errorf("imagecomp: LinearInterpolate: image has %d values and mask %d, want %d each", len(img), len(m), Pixels)
	}
	var pts []Point
	var vals []float64
	for i, o := range m {
		if o {
			pts = append(pts, Point{X: i % Side, Y: i / Side})
			vals = append(vals, img[i])
		}
	}
	tr, err := Triangulate(pts)
	if err != nil {
		return nil, fmt.Errorf("imagecomp: LinearInterpolate: %w", err)
	}
	out := make([]float64, Pixels)
	for i := range out {
		if m[i] {
			out[i] = img[i]
			continue
		}
		out[i] = tr.Interpolate(vals, Point{X: i % Side, Y: i / Side})
	}
	return out, nil
}
