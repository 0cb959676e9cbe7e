package imagecomp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkDelaunay verifies tr against the definition: every triangle counter-clockwise with
// positive area, no point strictly inside any triangle's circumcircle, every point a vertex,
// the triangle count 2n − 2 − h (h = points on the hull boundary, Euler's formula for a
// triangulation of a point set), and the total area equal to the convex hull's.
func checkDelaunay(t testing.TB, pts []Point, tr *Triangulation) {
	t.Helper()
	hull := convexHull(pts)
	if len(hull) < 3 {
		if len(tr.Triangles) != 0 {
			t.Fatalf("collinear set of %d points has %d triangles", len(pts), len(tr.Triangles))
		}
		return
	}
	used := make([]bool, len(pts))
	var area int64
	for _, tri := range tr.Triangles {
		a, b, c := pts[tri[0]], pts[tri[1]], pts[tri[2]]
		o := orient(a, b, c)
		if o <= 0 {
			t.Fatalf("triangle %v = %v %v %v is not counter-clockwise (orient=%d)", tri, a, b, c, o)
		}
		area += o
		for _, v := range tri {
			used[v] = true
		}
		for i, p := range pts {
			if i == tri[0] || i == tri[1] || i == tri[2] {
				continue
			}
			if inCircle(a, b, c, p) > 0 {
				t.Fatalf("point %v lies strictly inside the circumcircle of %v %v %v", p, a, b, c)
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Fatalf("point %d = %v is not a vertex", i, pts[i])
		}
	}
	var hullArea int64
	for i := range hull {
		hullArea += orient(hull[0], hull[i], hull[(i+1)%len(hull)])
	}
	if area != hullArea {
		t.Fatalf("triangles cover area %d/2, hull has %d/2", area, hullArea)
	}
	h := 0
	for _, p := range pts {
		for i := range hull {
			if onSegment(hull[i], hull[(i+1)%len(hull)], p) {
				h++
				break
			}
		}
	}
	if want := 2*len(pts) - 2 - h; len(tr.Triangles) != want {
		t.Fatalf("%d triangles, want 2n−2−h = %d (n=%d, h=%d)", len(tr.Triangles), want, len(pts), h)
	}
}

func onSegment(a, b, p Point) bool {
	return orient(a, b, p) == 0 && min(a.X, b.X) <= p.X && p.X <= max(a.X, b.X) && min(a.Y, b.Y) <= p.Y && p.Y <= max(a.Y, b.Y)
}

// convexHull is Andrew's monotone chain (strict: collinear points dropped), counter-clockwise.
func convexHull(pts []Point) []Point {
	p := slices.Clone(pts)
	slices.SortFunc(p, func(a, b Point) int {
		if a.X != b.X {
			return a.X - b.X
		}
		return a.Y - b.Y
	})
	if len(p) < 3 {
		return p
	}
	var h []Point
	for pass := 0; pass < 2; pass++ {
		start := len(h)
		for _, q := range p {
			for len(h) >= start+2 && orient(h[len(h)-2], h[len(h)-1], q) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, q)
		}
		h = h[:len(h)-1]
		slices.Reverse(p)
	}
	return h
}

func randomPoints(r *rand.Rand, n, side int) []Point {
	seen := map[Point]bool{}
	var pts []Point
	for len(pts) < n {
		p := Point{r.IntN(side), r.IntN(side)}
		if !seen[p] {
			seen[p] = true
			pts = append(pts, p)
		}
	}
	return pts
}

func TestTriangulateRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 3 + trial%60
		side := 6 + trial%40 // small sides: many collinear and co-circular points
		if n > side*side {
			n = side * side
		}
		pts := randomPoints(r, n, side)
		tr, err := Triangulate(pts)
		if err != nil {
			t.Fatal(err)
		}
		checkDelaunay(t, pts, tr)
	}
}

func TestTriangulateGrid(t *testing.T) {
	// Full lattices: every unit square's four corners are co-circular.
	for _, s := range [][2]int{{2, 2}, {3, 5}, {7, 7}, {28, 28}} {
		var pts []Point
		for y := range s[1] {
			for x := range s[0] {
				pts = append(pts, Point{x, y})
			}
		}
		tr, err := Triangulate(pts)
		if err != nil {
			t.Fatal(err)
		}
		checkDelaunay(t, pts, tr)
		if want := 2 * (s[0] - 1) * (s[1] - 1); len(tr.Triangles) != want {
			t.Fatalf("%v grid: %d triangles, want %d", s, len(tr.Triangles), want)
		}
	}
	// A circle of lattice points (all 12 points with x²+y² = 25) plus the centre.
	pts := []Point{{0, 0}}
	for x := -5; x <= 5; x++ {
		for y := -5; y <= 5; y++ {
			if x*x+y*y == 25 {
				pts = append(pts, Point{x, y})
			}
		}
	}
	tr, err := Triangulate(pts)
	if err != nil {
		t.Fatal(err)
	}
	checkDelaunay(t, pts, tr)
}

func TestTriangulateOrderInvariant(t *testing.T) {
	// The result is a function of the point set: shuffling the input gives the same
	// triangles (as sets of points).
	r := rand.New(rand.NewPCG(3, 4))
	pts := randomPoints(r, 80, 12)
	key := func(pts []Point, tr *Triangulation) map[[3]Point]bool {
		m := map[[3]Point]bool{}
		for _, tri := range tr.Triangles {
			v := [3]Point{pts[tri[0]], pts[tri[1]], pts[tri[2]]}
			slices.SortFunc(v[:], func(a, b Point) int {
				if a.X != b.X {
					return a.X - b.X
				}
				return a.Y - b.Y
			})
			m[v] = true
		}
		return m
	}
	tr1, _ := Triangulate(pts)
	k1 := key(pts, tr1)
	for range 5 {
		q := slices.Clone(pts)
		r.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
		tr2, _ := Triangulate(q)
		k2 := key(q, tr2)
		if len(k1) != len(k2) {
			t.Fatalf("shuffled input: %d triangles, want %d", len(k2), len(k1))
		}
		for k := range k1 {
			if !k2[k] {
				t.Fatalf("shuffled input lost triangle %v", k)
			}
		}
	}
}

func TestTriangulateDegenerate(t *testing.T) {
	for _, pts := range [][]Point{nil, {{1, 1}}, {{1, 1}, {2, 3}}, {{0, 0}, {1, 1}, {2, 2}, {5, 5}}} {
		tr, err := Triangulate(pts)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Triangles) != 0 {
			t.Fatalf("%v: %d triangles, want 0", pts, len(tr.Triangles))
		}
	}
	// Collinear set: interpolation along the segment, NaN off it and beyond its ends.
	tr, _ := Triangulate([]Point{{0, 0}, {4, 2}, {2, 1}})
	vals := []float64{0, 4, 2}
	if got := tr.Interpolate(vals, Point{3, 0}); !math.IsNaN(got) {
		t.Fatalf("off the segment: %v, want NaN", got)
	}
	if got := tr.Interpolate(vals, Point{6, 3}); !math.IsNaN(got) {
		t.Fatalf("beyond the segment: %v, want NaN", got)
	}
	if got := tr.Interpolate(vals, Point{2, 1}); got != 2 {
		t.Fatalf("at a point: %v, want 2", got)
	}
	if _, err := Triangulate([]Point{{1, 2}, {1, 2}}); err == nil {
		t.Fatal("duplicate points accepted")
	}
	if _, err := Triangulate([]Point{{MaxCoord + 1, 0}}); err == nil {
		t.Fatal("out-of-range coordinate accepted")
	}
}

// FuzzTriangulate triangulates small lattice point sets (coordinates in [0, 16), so
// co-circular and collinear configurations are frequent) and checks the Delaunay property.
// Run: go test -fuzz FuzzTriangulate ./imagecomp
func FuzzTriangulate(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 1, 1, 1})
	f.Add([]byte{0x00, 0x11, 0x22, 0x33, 0x03, 0x30, 0x12, 0x21})
	f.Add([]byte{0x00, 0x10, 0x20, 0x30, 0x40, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 120 {
			b = b[:120]
		}
		seen := map[Point]bool{}
		var pts []Point
		for _, v := range b {
			p := Point{int(v & 15), int(v >> 4)}
			if !seen[p] {
				seen[p] = true
				pts = append(pts, p)
			}
		}
		tr, err := Triangulate(pts)
		if err != nil {
			t.Fatal(err)
		}
		checkDelaunay(t, pts, tr)
		// Barycentric weights reproduce the query point and an affine function.
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = 0.5 + 0.25*float64(p.X) - 0.125*float64(p.Y)
		}
		for x := range 16 {
			for y := range 16 {
				q := Point{x, y}
				got := tr.Interpolate(vals, q)
				if math.IsNaN(got) {
					continue
				}
				want := 0.5 + 0.25*float64(x) - 0.125*float64(y)
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("affine at %v: %v, want %v", q, got, want)
				}
			}
		}
	})
}
