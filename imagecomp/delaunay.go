package imagecomp

import (
	"fmt"
	"math"
	"slices"
)

// Point is a point of the integer lattice: image pixels as (column, row).
type Point struct{ X, Y int }

// MaxCoord bounds |X| and |Y| of a Point given to Triangulate: with coordinate differences
// below 2¹³ every term of the in-circle determinant (degree 4) stays below 2⁵⁴, so the exact
// predicates fit in int64.
const MaxCoord = 1 << 12

// Triangulation is a Delaunay triangulation of a set of distinct lattice points: every
// triangle is counter-clockwise with positive area, and no point lies strictly inside the
// circumcircle of any triangle. The triangles cover the convex hull of the points exactly;
// points on the hull's boundary are vertices, so a collinear boundary run is split into
// several edges.
type Triangulation struct {
	Points    []Point
	Triangles [][3]int // indices into Points, counter-clockwise
}

// orient returns twice the signed area of (a, b, c): > 0 when c is left of a→b
// (counter-clockwise), 0 when collinear. Exact for |coords| ≤ MaxCoord.
func orient(a, b, c Point) int64 {
	return int64(b.X-a.X)*int64(c.Y-a.Y) - int64(b.Y-a.Y)*int64(c.X-a.X)
}

// inCircle returns > 0 when d lies strictly inside the circumcircle of the counter-clockwise
// triangle (a, b, c), 0 when on it, < 0 outside: the 3×3 lifted determinant of Guibas &
// Stolfi (1985, "Primitives for the manipulation of general subdivisions", ACM TOG 4(2)),
// exact in int64 for |coords| ≤ MaxCoord.
func inCircle(a, b, c, d Point) int64 {
	adx, ady := int64(a.X-d.X), int64(a.Y-d.Y)
	bdx, bdy := int64(b.X-d.X), int64(b.Y-d.Y)
	cdx, cdy := int64(c.X-d.X), int64(c.Y-d.Y)
	al := adx*adx + ady*ady
	bl := bdx*bdx + bdy*bdy
	cl := cdx*cdx + cdy*cdy
	return al*(bdx*cdy-bdy*cdx) - bl*(adx*cdy-ady*cdx) + cl*(adx*bdy-ady*bdx)
}

// Triangulate returns a Delaunay triangulation of pts (distinct, |X|, |Y| ≤ MaxCoord).
//
// Method: (1) sort the points lexicographically by (X, Y) and build a triangulation by
// sweeping: each new point lies outside the current hull and is joined to every hull edge it
// sees strictly (a run of collinear leading points is a chain until the first point off their
// line, which is fanned to the whole chain); (2) Lawson's edge flips: an interior edge (a, b)
// with triangles (a, b, c) and (b, a, d) is flipped to (c, d) when d lies strictly inside
// the circumcircle of (a, b, c). Every flip strictly raises the sorted angle vector, so this
// terminates, and a triangulation whose edges are all locally Delaunay is globally Delaunay
// (Lawson 1977; de Berg et al., "Computational Geometry", 3rd ed., §9.1–9.2). All predicates
// are exact integer arithmetic.
//
// Ties: when four or more points are co-circular (common on a lattice) the Delaunay
// triangulation is not unique. Only strictly illegal edges are flipped, so among co-circular
// configurations the diagonal left by the sweep is kept: the result is a deterministic
// function of the point set (not of its order in pts), but it need not match Qhull's choice.
//
// Fewer than three points, or all points collinear, give no triangles (and no error).
// Cost: O(n log n) for the sweep plus the flips (O(n²) in the worst case, near linear on
// typical sets).
func Triangulate(pts []Point) (*Triangulation, error) {
	seen := make(map[Point]int, len(pts))
	for i, p := range pts {
		if p.X > MaxCoord || p.X < -MaxCoord || p.Y > MaxCoord || p.Y < -MaxCoord {
			return nil, fmt.Errorf("imagecomp: Triangulate: point %d = (%d, %d) outside |coord| ≤ %d", i, p.X, p.Y, MaxCoord)
		}
		if j, dup := seen[p]; dup {
			return nil, fmt.Errorf("imagecomp: Triangulate: points %d and %d are both (%d, %d)", j, i, p.X, p.Y)
		}
		seen[p] = i
	}
	tr := &Triangulation{Points: pts}
	n := len(pts)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if pts[i].X != pts[j].X {
			return pts[i].X - pts[j].X
		}
		return pts[i].Y - pts[j].Y
	})
	// Collinear leading run.
	k := 2
	for k < n && orient(pts[order[0]], pts[order[1]], pts[order[k]]) == 0 {
		k++
	}
	if n < 3 || k == n {
		return tr, nil
	}
	m := newMesh(pts)
	c := order[k]
	// The chain order[0..k-1] is sorted along its line; fan c to every chain segment, each
	// triangle made counter-clockwise.
	for i := 0; i+1 < k; i++ {
		a, b := order[i], order[i+1]
		if orient(pts[a], pts[b], pts[c]) > 0 {
			m.add(a, b, c)
		} else {
			m.add(b, a, c)
		}
	}
	// hull: counter-clockwise cycle of vertex indices.
	var hull []int
	if orient(pts[order[0]], pts[order[1]], pts[c]) > 0 {
		// c left of the chain direction: CCW hull goes along the chain, then c.
		hull = append(hull, order[:k]...)
		hull = append(hull, c)
	} else {
		for i := k - 1; i >= 0; i-- {
			hull = append(hull, order[i])
		}
		hull = append(hull, c)
	}
	for _, p := range order[k+1:] {
		hull = m.addOutside(hull, p)
	}
	m.legalise()
	tr.Triangles = m.triangles()
	return tr, nil
}

// mesh is a triangle soup with a directed-edge index: edge (a, b) → the triangle that has
// a→b as one of its counter-clockwise edges.
type mesh struct {
	pts  []Point
	tri  [][3]int
	dead []bool
	edge map[[2]int]int
}

func newMesh(pts []Point) *mesh {
	return &mesh{pts: pts, edge: make(map[[2]int]int, 6*len(pts))}
}

func (m *mesh) add(a, b, c int) int {
	id := len(m.tri)
	m.tri = append(m.tri, [3]int{a, b, c})
	m.dead = append(m.dead, false)
	m.edge[[2]int{a, b}] = id
	m.edge[[2]int{b, c}] = id
	m.edge[[2]int{c, a}] = id
	return id
}

func (m *mesh) remove(id int) {
	t := m.tri[id]
	m.dead[id] = true
	for i := range 3 {
		e := [2]int{t[i], t[(i+1)%3]}
		if m.edge[e] == id {
			delete(m.edge, e)
		}
	}
}

// addOutside joins p, which lies outside the counter-clockwise hull, to every hull edge
// (h_i, h_{i+1}) that sees p strictly (orient(h_i, h_{i+1}, p) < 0), and returns the new
// hull. The visible edges form one contiguous run (the hull is convex and p is outside), so
// the hull is updated by replacing the run's interior vertices with p.
func (m *mesh) addOutside(hull []int, p int) []int {
	h := len(hull)
	vis := make([]bool, h)
	sees := false
	for i := range h {
		a, b := hull[i], hull[(i+1)%h]
		if orient(m.pts[a], m.pts[b], m.pts[p]) < 0 {
			vis[i] = true
			sees = true
			m.add(b, a, p)
		}
	}
	if !sees {
		// Cannot happen for a point lexicographically after all hull points (it is outside
		// or on the extension of an edge, and an extension is never the only contact);
		// kept as a guard so that a broken invariant shows up as a test failure.
		return hull
	}
	// Find the start of the visible run: vis[s] true and vis[s-1] false.
	s := 0
	for i := range h {
		if vis[i] && !vis[(i-1+h)%h] {
			s = i
			break
		}
	}
	e := s
	for vis[(e+1)%h] {
		e = (e + 1) % h
	}
	// Visible edges s..e: vertices hull[s+1..e] (mod h) are removed, p goes after hull[s].
	out := make([]int, 0, h+1)
	i := (e + 1) % h // first vertex kept after the run
	for {
		out = append(out, hull[i])
		if i == s {
			break
		}
		i = (i + 1) % h
	}
	out = append(out, p)
	return out
}

// legalise runs Lawson's flips until every interior edge is locally Delaunay (no strictly
// illegal edge remains).
func (m *mesh) legalise() {
	stack := make([][2]int, 0, len(m.edge))
	for e := range m.edge {
		stack = append(stack, e)
	}
	// Map iteration order is random; sort so the flip sequence (and so the tie-breaking
	// result) is deterministic.
	// The order is by the edges' coordinates, not their indices, so that the result does not
	// depend on the order of the input points.
	cmp := func(p, q Point) int {
		if p.X != q.X {
			return p.X - q.X
		}
		return p.Y - q.Y
	}
	slices.SortFunc(stack, func(x, y [2]int) int {
		if c := cmp(m.pts[x[0]], m.pts[y[0]]); c != 0 {
			return c
		}
		return cmp(m.pts[x[1]], m.pts[y[1]])
	})
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		a, b := e[0], e[1]
		t1, ok1 := m.edge[[2]int{a, b}]
		t2, ok2 := m.edge[[2]int{b, a}]
		if !ok1 || !ok2 {
			continue
		}
		c := third(m.tri[t1], a, b)
		d := third(m.tri[t2], b, a)
		if inCircle(m.pts[a], m.pts[b], m.pts[c], m.pts[d]) <= 0 {
			continue
		}
		m.remove(t1)
		m.remove(t2)
		m.add(a, d, c)
		m.add(d, b, c)
		stack = append(stack, [2]int{a, d}, [2]int{d, b}, [2]int{b, c}, [2]int{c, a})
	}
}

// third returns the vertex of t that is neither a nor b.
func third(t [3]int, a, b int) int {
	for _, v := range t {
		if v != a && v != b {
			return v
		}
	}
	return -1
}

func (m *mesh) triangles() [][3]int {
	var out [][3]int
	for i, t := range m.tri {
		if !m.dead[i] {
			out = append(out, t)
		}
	}
	return out
}

// Locate returns the index of a triangle that contains q (interior or boundary) and q's
// barycentric weights in it, or −1 when q is outside the convex hull of the points (or
// there are no triangles). A q on an edge shared by two triangles gets the first one;
// barycentric interpolation is continuous across edges, so the choice does not change an
// interpolated value. Cost O(#triangles).
func (tr *Triangulation) Locate(q Point) (int, [3]float64) {
	for i, t := range tr.Triangles {
		a, b, c := tr.Points[t[0]], tr.Points[t[1]], tr.Points[t[2]]
		wa := orient(b, c, q)
		if wa < 0 {
			continue
		}
		wb := orient(c, a, q)
		if wb < 0 {
			continue
		}
		wc := orient(a, b, q)
		if wc < 0 {
			continue
		}
		s := float64(wa + wb + wc)
		return i, [3]float64{float64(wa) / s, float64(wb) / s, float64(wc) / s}
	}
	return -1, [3]float64{}
}

// Interpolate returns the piecewise-linear (barycentric) interpolant of the values vals
// (one per point) at q: Σ_k w_k vals[t_k] over the triangle containing q, NaN outside the
// convex hull. With no triangles (fewer than three points, or all collinear) the hull is a
// segment or a point: q on it gets the linear interpolant along the segment (the value at a
// single point), anything else NaN.
func (tr *Triangulation) Interpolate(vals []float64, q Point) float64 {
	if len(tr.Triangles) == 0 {
		return tr.segment(vals, q)
	}
	i, w := tr.Locate(q)
	if i < 0 {
		return math.NaN()
	}
	t := tr.Triangles[i]
	return w[0]*vals[t[0]] + w[1]*vals[t[1]] + w[2]*vals[t[2]]
}

// segment interpolates along a collinear point set (the degenerate hull).
func (tr *Triangulation) segment(vals []float64, q Point) float64 {
	p := tr.Points
	switch len(p) {
	case 0:
		return math.NaN()
	case 1:
		if q == p[0] {
			return vals[0]
		}
		return math.NaN()
	}
	if orient(p[0], p[1], q) != 0 {
		return math.NaN()
	}
	// Parameter along the line by the dominant axis (exact on integers).
	dx, dy := p[1].X-p[0].X, p[1].Y-p[0].Y
	pos := func(r Point) int {
		if abs(dx) >= abs(dy) {
			return r.X
		}
		return r.Y
	}
	tq := pos(q)
	lo, hi := -1, -1
	for i, r := range p {
		tr := pos(r)
		if tr == tq {
			return vals[i]
		}
		if tr < tq && (lo < 0 || tr > pos(p[lo])) {
			lo = i
		}
		if tr > tq && (hi < 0 || tr < pos(p[hi])) {
			hi = i
		}
	}
	if lo < 0 || hi < 0 {
		return math.NaN()
	}
	f := float64(tq-pos(p[lo])) / float64(pos(p[hi])-pos(p[lo]))
	return (1-f)*vals[lo] + f*vals[hi]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
