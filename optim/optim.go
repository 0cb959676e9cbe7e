package optim

import (
	"encoding"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// Optimizer is the interface shared by the optimisers of this package.
type Optimizer interface {
	// Step applies one update to params given the loss gradient grad (same length as
	// the optimiser). It panics on a length mismatch.
	Step(params, grad []float64)
	// Len is the number of parameters the optimiser was built for.
	Len() int
	// Steps is the number of steps taken so far.
	Steps() int
	// Rate is the step size the next Step will use: the base rate times the schedule.
	Rate() float64
	// Reset zeroes the moments and the step count.
	Reset()

	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	json.Marshaler
	json.Unmarshaler
}

// core holds what every optimiser shares: base rate, schedule, clipping, step count and
// the moment vectors (slots) that make up the state.
type core struct {
	kind      string
	lr        float64
	sched     Schedule
	clipNorm  float64
	clipValue float64
	t         int
	slots     [][]float64
}

func newCore(kind string, n int, lr, defLR float64, s Schedule, clipNorm, clipValue float64, nslots int) core {
	if n < 0 {
		panic(fmt.Sprintf("optim: New%s: negative length (n=%d)", kind, n))
	}
	if lr == 0 {
		lr = defLR
	}
	if s == nil {
		s = Constant{}
	}
	c := core{kind: kind, lr: lr, sched: s, clipNorm: clipNorm, clipValue: clipValue}
	c.slots = make([][]float64, nslots)
	for i := range c.slots {
		c.slots[i] = make([]float64, n)
	}
	return c
}

func (c *core) n() int {
	if len(c.slots) == 0 {
		return 0
	}
	return len(c.slots[0])
}

// Len returns the number of parameters.
func (c *core) Len() int { return c.n() }

// Steps returns the number of steps taken.
func (c *core) Steps() int { return c.t }

// Rate returns the step size of the next step: base rate × Schedule.Scale(Steps()).
func (c *core) Rate() float64 { return c.lr * c.sched.Scale(c.t) }

// Reset zeroes the moments and the step count.
func (c *core) Reset() {
	c.t = 0
	for _, s := range c.slots {
		clear(s)
	}
}

// begin checks lengths, advances the step counter and returns the step size of this step and
// the factor that applies global-norm clipping to the (value-clipped) gradient.
func (c *core) begin(params, grad []float64) (lr, scale float64) {
	n := c.n()
	if len(params) != n || len(grad) != n {
		panic(fmt.Sprintf("optim: %s.Step: length mismatch (n=%d, params=%d, grad=%d)", c.kind, n, len(params), len(grad)))
	}
	lr = c.Rate()
	c.t++
	scale = 1
	if c.clipNorm > 0 {
		if nrm := norm(grad, c.clipValue); nrm > c.clipNorm {
			scale = c.clipNorm / nrm
		}
	}
	return lr, scale
}

// g returns the clipped i-th gradient component.
func (c *core) g(grad []float64, i int, scale float64) float64 {
	g := grad[i]
	if c.clipValue > 0 {
		g = clamp(g, c.clipValue)
	}
	return g * scale
}

func clamp(g, v float64) float64 {
	if g > v {
		return v
	}
	if g < -v {
		return -v
	}
	return g
}

// norm returns the Euclidean norm of g with each component first clamped to [−v, v] when
// v > 0. A second, rescaled pass avoids overflow when Σg² overflows.
func norm(g []float64, v float64) float64 {
	comp := func(x float64) float64 {
		if v > 0 {
			return clamp(x, v)
		}
		return x
	}
	var ss float64
	for _, x := range g {
		x = comp(x)
		ss += x * x
	}
	if !math.IsInf(ss, 0) {
		return math.Sqrt(ss)
	}
	var m float64
	for _, x := range g {
		m = math.Max(m, math.Abs(comp(x)))
	}
	if math.IsInf(m, 0) {
		return m
	}
	ss = 0
	for _, x := range g {
		x = comp(x) / m
		ss += x * x
	}
	return math.Sqrt(ss) * m
}

// Norm returns the Euclidean norm ‖g‖₂, safe against overflow of the sum of squares.
func Norm(g []float64) float64 { return norm(g, 0) }

// ClipNorm rescales g in place so that ‖g‖₂ ≤ max (TensorFlow's clip_by_global_norm on one
// flattened vector) and returns the norm before clipping. max ≤ 0 leaves g unchanged.
func ClipNorm(g []float64, max float64) float64 {
	nrm := Norm(g)
	if max > 0 && nrm > max {
		s := max / nrm
		for i := range g {
			g[i] *= s
		}
	}
	return nrm
}

// ClipValue clamps each component of g in place to [−v, v] and returns how many were
// clamped. v ≤ 0 leaves g unchanged.
func ClipValue(g []float64, v float64) int {
	if v <= 0 {
		return 0
	}
	k := 0
	for i, x := range g {
		if y := clamp(x, v); y != x {
			g[i] = y
			k++
		}
	}
	return k
}

// Binary state layout (little endian):
//
//	"VOPT" | version u8 = 1 | len(kind) u8 | kind | n u64 | t u64 | nslots u8 | nslots×n float64 bits
const (
	magic   = "VOPT"
	version = 1
)

// MarshalBinary encodes the state (step count and moments); hyperparameters are not included.
func (c *core) MarshalBinary() ([]byte, error) {
	n := c.n()
	b := make([]byte, 0, 4+2+len(c.kind)+17+8*n*len(c.slots))
	b = append(b, magic...)
	b = append(b, version, byte(len(c.kind)))
	b = append(b, c.kind...)
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	b = binary.LittleEndian.AppendUint64(b, uint64(c.t))
	b = append(b, byte(len(c.slots)))
	for _, s := range c.slots {
		for _, x := range s {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b, nil
}

// UnmarshalBinary restores a state written by MarshalBinary of the same kind of optimiser
// built with the same length.
func (c *core) UnmarshalBinary(b []byte) error {
	fail := func(what string, args ...any) error {
		return fmt.Errorf("optim: %s.UnmarshalBinary: "+what, append([]any{c.kind}, args...)...)
	}
	if len(b) < 6 || string(b[:4]) != magic {
		return fail("not an optimiser state (len=%d)", len(b))
	}
	if b[4] != version {
		return fail("unknown version (version=%d)", b[4])
	}
	kl := int(b[5])
	b = b[6:]
	if len(b) < kl+17 {
		return fail("truncated header")
	}
	if kind := string(b[:kl]); kind != c.kind {
		return fail("state of another optimiser (kind=%q)", kind)
	}
	b = b[kl:]
	n := binary.LittleEndian.Uint64(b)
	t := binary.LittleEndian.Uint64(b[8:])
	ns := int(b[16])
	b = b[17:]
	if n != uint64(c.n()) {
		return fail("length mismatch (n=%d, state n=%d)", c.n(), n)
	}
	if ns != len(c.slots) {
		return fail("slot count mismatch (slots=%d, state slots=%d)", len(c.slots), ns)
	}
	if t > uint64(math.MaxInt) {
		return fail("step count out of range (t=%d)", t)
	}
	if uint64(len(b)) != 8*n*uint64(ns) {
		return fail("wrong payload size (bytes=%d, want=%d)", len(b), 8*n*uint64(ns))
	}
	for _, s := range c.slots {
		for i := range s {
			s[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
	}
	c.t = int(t)
	return nil
}

// jsonState is the JSON form of the state. Moment vectors are base64 of their little-endian
// IEEE-754 bits, so NaN, ±Inf and −0 survive and the round trip is exact.
type jsonState struct {
	Kind  string   `json:"kind"`
	N     int      `json:"n"`
	Step  int      `json:"step"`
	Slots []string `json:"slots"`
}

// MarshalJSON encodes the state as {"kind","n","step","slots"}.
func (c *core) MarshalJSON() ([]byte, error) {
	js := jsonState{Kind: c.kind, N: c.n(), Step: c.t, Slots: make([]string, len(c.slots))}
	buf := make([]byte, 8*c.n())
	for k, s := range c.slots {
		for i, x := range s {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
		}
		js.Slots[k] = base64.StdEncoding.EncodeToString(buf)
	}
	return json.Marshal(js)
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (c *core) UnmarshalJSON(data []byte) error {
	var js jsonState
	if err := json.Unmarshal(data, &js); err != nil {
		return fmt.Errorf("optim: %s.UnmarshalJSON: %w", c.kind, err)
	}
	if js.Kind != c.kind {
		return fmt.Errorf("optim: %s.UnmarshalJSON: state of another optimiser (kind=%q)", c.kind, js.Kind)
	}
	if js.N != c.n() || len(js.Slots) != len(c.slots) || js.Step < 0 {
		return fmt.Errorf("optim: %s.UnmarshalJSON: shape mismatch (n=%d, state n=%d, slots=%d, state slots=%d, step=%d)",
			c.kind, c.n(), js.N, len(c.slots), len(js.Slots), js.Step)
	}
	vals := make([][]float64, len(c.slots))
	for k, s := range js.Slots {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("optim: %s.UnmarshalJSON: slot %d: %w", c.kind, k, err)
		}
		if len(raw) != 8*c.n() {
			return fmt.Errorf("optim: %s.UnmarshalJSON: slot %d has wrong size (bytes=%d, want=%d)", c.kind, k, len(raw), 8*c.n())
		}
		vals[k] = make([]float64, c.n())
		for i := range vals[k] {
			vals[k][i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	for k := range c.slots {
		copy(c.slots[k], vals[k])
	}
	c.t = js.Step
	return nil
}

var (
	_ Optimizer = (*Adam)(nil)
	_ Optimizer = (*RMSprop)(nil)
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*ADVI)(nil)
	_ Optimizer = (*Adagrad)(nil)
)
