package imagecomp

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/rng"
)

func TestCoords(t *testing.T) {
	x := Coords()
	if len(x) != 2*Pixels {
		t.Fatalf("len %d", len(x))
	}
	// Pixel (row 0, col 27) is index 27: x = (1, −1); pixel (row 27, col 0): (−1, 1).
	if x[2*27] != 1 || x[2*27+1] != -1 || x[2*(27*28)] != -1 || x[2*(27*28)+1] != 1 {
		t.Fatalf("corners: %v %v / %v %v", x[54], x[55], x[2*756], x[2*756+1])
	}
	if math.Abs(x[2*1]-(-1+2.0/27)) > 1e-15 {
		t.Fatalf("spacing: %v", x[2])
	}
}

func TestBinarise(t *testing.T) {
	got := Binarise([]float64{0, 127.0 / 255, 128.0 / 255, 0.5, 1})
	want := []float64{0, 0, 1, 1, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Binarise = %v, want %v", got, want)
		}
	}
}

func TestSquaredError(t *testing.T) {
	e, err := SquaredError([]float64{0, 0.5, 1, 0.2}, []float64{0, 0.25, math.NaN(), 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.0625 + 1; e != want {
		t.Fatalf("E = %v, want %v", e, want)
	}
	// NaN counts 1.0 even where the truth is 0 (the border of a digit).
	if e, _ := SquaredError([]float64{0, 0}, []float64{math.NaN(), math.NaN()}); e != 2 {
		t.Fatalf("all NaN: %v, want 2", e)
	}
	if _, err := SquaredError([]float64{0}, []float64{0, 1}); err == nil {
		t.Fatal("length mismatch accepted")
	}
	if _, err := SquaredError([]float64{math.NaN()}, []float64{0}); err == nil {
		t.Fatal("NaN original accepted")
	}
}

func TestLinearInterpolateAffineAndObserved(t *testing.T) {
	img := make([]float64, Pixels)
	for i := range img {
		img[i] = 0.1 + 0.02*float64(i%Side) + 0.01*float64(i/Side) // affine in (col, row)
	}
	r := rng.New(7, 0)
	m := RandomMask(0.2, r)
	got, err := LinearInterpolate(img, m)
	if err != nil {
		t.Fatal(err)
	}
	inside := 0
	for i := range img {
		switch {
		case m[i]:
			if got[i] != img[i] {
				t.Fatalf("observed pixel %d changed: %v → %v", i, img[i], got[i])
			}
		case math.IsNaN(got[i]):
		default:
			inside++
			// Barycentric weights are exact rationals rounded once each; the error is a few ulps.
			if math.Abs(got[i]-img[i]) > 1e-12 {
				t.Fatalf("affine image, pixel %d: %v, want %v", i, got[i], img[i])
			}
		}
	}
	if inside < 300 {
		t.Fatalf("only %d interpolated pixels; the test would pass vacuously", inside)
	}
	// A non-affine image: the interpolant stays within the observed range.
	for i := range img {
		img[i] = float64((i*7919)%255) / 255
	}
	got, _ = LinearInterpolate(img, m)
	for i := range got {
		if !math.IsNaN(got[i]) && (got[i] < -1e-12 || got[i] > 1+1e-12) {
			t.Fatalf("pixel %d: %v outside [0, 1]", i, got[i])
		}
	}
}

func TestLinearInterpolateHull(t *testing.T) {
	// Observed: the 4×4 block of rows/cols 10..13 minus its interior, plus (12, 20).
	img := make([]float64, Pixels)
	m := make(Mask, Pixels)
	set := func(r, c int, v float64) { m[r*Side+c] = true; img[r*Side+c] = v }
	for k := 10; k <= 13; k++ {
		set(10, k, 1)
		set(13, k, 1)
		set(k, 10, 1)
		set(k, 13, 1)
	}
	set(20, 12, 0.5)
	got, err := LinearInterpolate(img, m)
	if err != nil {
		t.Fatal(err)
	}
	// Outside: a corner pixel, and (20, 11), left of the apex.
	for _, p := range [][2]int{{0, 0}, {20, 11}, {9, 12}, {11, 14}} {
		if v := got[p[0]*Side+p[1]]; !math.IsNaN(v) {
			t.Fatalf("pixel %v outside the hull = %v, want NaN", p, v)
		}
	}
	// Inside the block: value 1 (all observed values there are 1).
	if v := got[11*Side+11]; math.Abs(v-1) > 1e-15 {
		t.Fatalf("interior = %v, want 1", v)
	}
	// On the hull boundary: add (10, 16); the hull edge (10, 13) → (10, 16) passes through the
	// unobserved (10, 14) and (10, 15), which count as inside and interpolate along the edge.
	set(10, 16, 0)
	got, _ = LinearInterpolate(img, m)
	if v := got[10*Side+15]; math.IsNaN(v) || math.Abs(v-1.0/3) > 1e-15 {
		t.Fatalf("hull-boundary pixel (10, 15) = %v, want 1/3 (inside, on the edge)", v)
	}
	if _, err := LinearInterpolate(img[:10], m); err == nil {
		t.Fatal("short image accepted")
	}
}

// The mask tests use z = 4.5 standard errors; the false-failure rate of each comparison
// is 2Φ(−4.5) ≈ 6.8e-6, about 1e-4 over the ≈ 15 comparisons below (and the seeds are fixed).
const zTol = 4.5

func TestMaskFractions(t *testing.T) {
	// RandomMask: 400 masks at p = 0.3; the count is Binomial(400·784, 0.3).
	r := rng.New(11, 0)
	n, k := 0, 0
	for range 400 {
		m := RandomMask(0.3, r)
		n += len(m)
		k += m.Count()
	}
	if sd := math.Sqrt(0.3 * 0.7 / float64(n)); math.Abs(float64(k)/float64(n)-0.3) > zTol*sd {
		t.Fatalf("fraction %v, want 0.3 ± %v", float64(k)/float64(n), zTol*sd)
	}
	// Training masks: per image p ~ U[0.05, 0.95], so the observed fraction f has mean 0.5
	// and variance Var p + E[p(1−p)]/784 = 0.81/12 + (0.5 − (0.81/12 + 0.25))/784.
	const nImg = 1000
	masks, err := TrainMasks(nImg, 5)
	if err != nil {
		t.Fatal(err)
	}
	sum, below, above := 0.0, 0, 0
	for _, m := range masks {
		f := float64(m.Count()) / Pixels
		sum += f
		if f < 0.05-zTol*math.Sqrt(0.05*0.95/Pixels) || f > 0.95+zTol*math.Sqrt(0.05*0.95/Pixels) {
			t.Fatalf("training mask fraction %v outside [0.05, 0.95] by more than %v sd", f, zTol)
		}
		if f < 0.5 {
			below++
		} else {
			above++
		}
	}
	v := 0.81/12 + (0.5-(0.81/12+0.25))/Pixels
	if sd := math.Sqrt(v / nImg); math.Abs(sum/nImg-0.5) > zTol*sd {
		t.Fatalf("mean training fraction %v, want 0.5 ± %v", sum/nImg, zTol*sd)
	}
	// Masks are fixed: the same seed gives the same masks, a prefix does not depend on n.
	again, _ := TrainMasks(10, 5)
	for i := range again {
		for j := range again[i] {
			if again[i][j] != masks[i][j] {
				t.Fatalf("TrainMasks(10, 5)[%d] differs from TrainMasks(1000, 5)[%d]", i, i)
			}
		}
	}
	// Test masks: digit k's count is Binomial(784, p_k).
	for k, m := range TestMasks(0) {
		p := TestP()[k]
		sd := math.Sqrt(Pixels * p * (1 - p))
		if math.Abs(float64(m.Count())-Pixels*p) > zTol*sd {
			t.Fatalf("test mask %d: %d observed, want %v ± %v", k, m.Count(), Pixels*p, zTol*sd)
		}
	}
	if _, err := TrainMasks(-1, 0); err == nil {
		t.Fatal("negative n accepted")
	}
}

func TestSplitSynthetic(t *testing.T) {
	// 30 images with labels 0..9 repeating: the test digits are the k-th occurrences.
	s := &Set{}
	for i := range 30 {
		s.Images = append(s.Images, make([]float64, Pixels))
		s.Labels = append(s.Labels, i%10)
	}
	test, train, err := Split(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{7, 2, 1, 0, 4, 11, 14, 9, 5, 19}
	for i := range want {
		if test[i] != want[i] {
			t.Fatalf("test = %v, want %v", test, want)
		}
	}
	if len(train) != 20 {
		t.Fatalf("train has %d, want 20", len(train))
	}
	if _, _, err := Split(&Set{Images: s.Images[:5], Labels: s.Labels[:5]}); err == nil {
		t.Fatal("a pool without a 7 accepted")
	}
	if _, err := TrainTasks(s, 21, 0); err == nil {
		t.Fatal("n larger than the pool accepted")
	}
}

func TestMNIST(t *testing.T) {
	dir := filepath.Join(datadir.SharedOrSkip(t), "data", "mnist-10k")
	s, err := LoadMNIST(dir)
	if err != nil {
		t.Skipf("MNIST-10k not readable: %v", err)
	}
	if len(s.Images) != 10000 {
		t.Fatalf("%d images, want 10000", len(s.Images))
	}
	tasks, err := TestTasks(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, tk := range tasks {
		if tk.Label != TestLabels()[k] {
			t.Fatalf("test digit %d has label %d", k, tk.Label)
		}
		x, y := tk.Context()
		if len(x) != 2*len(y) || len(y) != tk.Mask.Count() {
			t.Fatalf("context sizes %d, %d for %d observed", len(x), len(y), tk.Mask.Count())
		}
		xt, yt := tk.Targets()
		if len(yt)+len(y) != Pixels || len(xt) != 2*len(yt) {
			t.Fatal("targets do not complement the context")
		}
	}
	train, err := TrainTasks(s, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(train) != 9990 {
		t.Fatalf("training pool %d, want 9990", len(train))
	}
	if _, err := LoadMNIST(t.TempDir()); err == nil {
		t.Fatal("empty directory accepted")
	}
}

func TestSplitTasksSynthetic(t *testing.T) {
	mk := func(n int) *Set {
		s := &Set{}
		for i := range n {
			img := make([]float64, Pixels)
			img[0] = float64(i) / float64(n)
			s.Images = append(s.Images, img)
			s.Labels = append(s.Labels, i%10)
		}
		return s
	}
	train, test := mk(25), mk(12)
	tt, pool, err := SplitTasks(train, test, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt) != 10 || len(pool) != 25 {
		t.Fatalf("%d test tasks and a pool of %d, want 10 and 25", len(tt), len(pool))
	}
	masks, tm := TestMasks(3), mustTrainMasks(t, 25, 3)
	for k, tk := range tt {
		// The first ten test images in file order, with the protocol's test masks.
		if tk.Index != k || &tk.Image[0] != &test.Images[k][0] || !slices.Equal(tk.Mask, masks[k]) {
			t.Fatalf("test task %d is not test image %d with test mask %d", k, k, k)
		}
	}
	for i, tk := range pool {
		if tk.Index != i || &tk.Image[0] != &train.Images[i][0] || !slices.Equal(tk.Mask, tm[i]) {
			t.Fatalf("pool task %d is not training image %d with training mask %d", i, i, i)
		}
	}
	if _, p5, err := SplitTasks(train, test, 5, 3); err != nil || len(p5) != 5 || !slices.Equal(p5[4].Mask, tm[4]) {
		t.Fatalf("n = 5: pool %d, err %v (a mask must not depend on n)", len(p5), err)
	}
	if _, _, err := SplitTasks(train, mk(9), 0, 3); err == nil {
		t.Fatal("a test split of 9 images accepted")
	}
	if _, _, err := SplitTasks(train, test, 26, 3); err == nil {
		t.Fatal("n larger than the training split accepted")
	}
}

func mustTrainMasks(t *testing.T, n int, seed uint64) []Mask {
	t.Helper()
	m, err := TrainMasks(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFashionMNIST(t *testing.T) {
	dir, _ := datadir.FashionMNIST("")
	train, test, err := LoadFashionMNIST(dir)
	if err != nil {
		t.Skipf("Fashion-MNIST not readable (Debian package dataset-fashion-mnist): %v", err)
	}
	if len(train.Images) != 60000 || len(test.Images) != 10000 {
		t.Fatalf("%d training and %d test images, want 60000 and 10000", len(train.Images), len(test.Images))
	}
	tt, pool, err := SplitTasks(train, test, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The first ten test labels of Fashion-MNIST's t10k-labels-idx1-ubyte (read with Python's
	// gzip module): ankle boot, pullover, trouser, trouser, shirt, trouser, coat, shirt, sandal,
	// sneaker.
	want := []int{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}
	for k, tk := range tt {
		if tk.Label != want[k] {
			t.Fatalf("test image %d has label %d, want %d", k, tk.Label, want[k])
		}
	}
	if len(pool) != 60000 {
		t.Fatalf("pool of %d, want 60000", len(pool))
	}
	if _, _, err := LoadFashionMNIST(t.TempDir()); err == nil {
		t.Fatal("empty directory accepted")
	}
}
