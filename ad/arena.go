package ad

// arena hands out float64 slices from a list of blocks that never move, so a slice obtained
// earlier stays valid while later allocations happen. Reset and rewind keep the blocks: after
// the first evaluation of a computation of fixed shape, allocation is free of heap traffic.
type arena struct {
	blocks [][]float64
	cur    int // index of the block being filled
	off    int // fill position in blocks[cur]
}

type arenaPos struct{ cur, off int }

const blockSize = 1 << 15 // 256 KiB of float64 per block

func (a *arena) reset()            { a.cur, a.off = 0, 0 }
func (a *arena) pos() arenaPos     { return arenaPos{a.cur, a.off} }
func (a *arena) rewind(p arenaPos) { a.cur, a.off = p.cur, p.off }

// allocZero returns a zeroed slice of length n (capacity n).
func (a *arena) allocZero(n int) []float64 {
	s := a.alloc(n)
	clear(s)
	return s
}

// alloc returns a slice of length n (capacity n) with arbitrary contents.
func (a *arena) alloc(n int) []float64 {
	for {
		if a.cur < len(a.blocks) {
			b := a.blocks[a.cur]
			if a.off+n <= len(b) {
				s := b[a.off : a.off+n : a.off+n]
				a.off += n
				return s
			}
			if a.off == 0 {
				// Block too small even when empty: replace it by a larger one.
				a.blocks[a.cur] = make([]float64, max(n, blockSize))
				continue
			}
			a.cur++
			a.off = 0
			continue
		}
		a.blocks = append(a.blocks, make([]float64, max(n, blockSize)))
	}
}
