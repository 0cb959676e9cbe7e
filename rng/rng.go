// Package rng gives vigo its reproducible random streams: a PCG generator (math/rand/v2) per
// (seed, stream) pair, so every worker, chain and ensemble member draws from its own stream
// and results do not depend on scheduling or GOMAXPROCS. A stream's state marshals to bytes,
// which is how fits save and resume bit for bit.
package rng

import (
	"fmt"
	"math/rand/v2"
)

// Stream is a *rand.Rand over a PCG source whose state can be saved and restored.
type Stream struct {
	*rand.Rand
	src *rand.PCG
}

// New returns the stream numbered stream of the run seeded with seed. Distinct (seed, stream)
// pairs give statistically independent sequences: both words of the PCG state are derived
// with the SplitMix64 finaliser (Steele, Lea & Flood 2014), so neighbouring seeds or streams
// do not start from related states.
func New(seed, stream uint64) *Stream {
	src := rand.NewPCG(mix(seed^0x9e3779b97f4a7c15), mix(stream+mix(seed)))
	return &Stream{Rand: rand.New(src), src: src}
}

// Derive returns a child seed from a parent seed and a path of indices (chain, member, worker…).
func Derive(seed uint64, path ...uint64) uint64 {
	s := mix(seed)
	for _, p := range path {
		s = mix(s ^ mix(p+0x632be59bd9b4e019))
	}
	return s
}

// mix is the SplitMix64 output function: a bijection on uint64 with good avalanche.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// MarshalBinary returns the generator state.
func (s *Stream) MarshalBinary() ([]byte, error) { return s.src.MarshalBinary() }

// UnmarshalBinary restores a state written by MarshalBinary.
func (s *Stream) UnmarshalBinary(b []byte) error {
	if s.src == nil {
		s.src = rand.NewPCG(0, 0)
		s.Rand = rand.New(s.src)
	}
	if err := s.src.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("rng: Stream.UnmarshalBinary: %w", err)
	}
	return nil
}
