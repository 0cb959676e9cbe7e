package idx

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
)

// idxStream is an uncompressed IDX stream: magic, dimensions, payload.
func idxStream(magic uint32, dims []uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, payload...)
}

// TestIDXShortFileDoesNotAllocateTheDeclaredSize: a 20-byte stream whose header declares
// 2³¹ bytes of images fails as a short file after allocating about what it holds (the reader
// used to allocate the declared 2 GB before reading).
func TestIDXShortFileDoesNotAllocateTheDeclaredSize(t *testing.T) {
	b := idxStream(Images, []uint32{1 << 25, 8, 8}, []byte{1, 2, 3, 4})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Decode("big", bytes.NewReader(b), Images, 3, 0)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "short file (4 of 2147483648 data bytes)") {
		t.Fatalf("error %v, want a short file", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte stream, want under 1 MiB", got, len(b))
	}
}

// FuzzDecode feeds arbitrary streams to the IDX decoder (images and labels, with and
// without a limit): it must return an error or a payload of exactly the product of the
// returned dimensions, never panic, and never allocate from the header alone.
//
// Run: go test -fuzz FuzzDecode ./internal/idx
func FuzzDecode(f *testing.F) {
	f.Add(idxStream(Images, []uint32{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}), false, 0)
	f.Add(idxStream(Images, []uint32{3, 1, 2}, []byte{1, 2, 3, 4, 5, 6}), false, 2)
	f.Add(idxStream(Labels, []uint32{3}, []byte{1, 2, 9}), true, 0)
	f.Add(idxStream(Labels, []uint32{1 << 26}, []byte{1}), true, 0)
	f.Add([]byte{0, 0, 8}, true, -1)
	f.Fuzz(func(t *testing.T, b []byte, labels bool, limit int) {
		magic, ndim := uint32(Images), 3
		if labels {
			magic, ndim = Labels, 1
		}
		raw, dims, err := Decode("fuzz", bytes.NewReader(b), magic, ndim, limit)
		if err != nil {
			return
		}
		n := 1
		for _, d := range dims {
			if d < 1 {
				t.Fatalf("dims %v", dims)
			}
			n *= d
		}
		if len(raw) != n || len(raw) > len(b) {
			t.Fatalf("payload %d bytes for dims %v from a %d-byte stream", len(raw), dims, len(b))
		}
		if limit > 0 && dims[0] > limit {
			t.Fatalf("dims %v exceed limit %d", dims, limit)
		}
	})
}
