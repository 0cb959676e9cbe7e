package model

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// maxInputBytes bounds how much a loader reads from a file and how much it
// inflates from a zip member (256 MiB). The largest posteriordb input here,
// diamonds.json, is 2.3 MB. It is a variable only so that tests can lower it.
var maxInputBytes int64 = 256 << 20

// readFile reads path with readSource. An *fs.PathError is unwrapped because
// the callers already name the file.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	return readSource(f)
}

// readSource reads all of r, at most maxInputBytes. If the bytes are a zip
// archive (they start with a zip signature, whatever the file is called) it
// returns the content of its only regular member; directories and macOS
// "__MACOSX/" metadata entries are ignored. A corrupt or truncated archive, a
// bad checksum, an archive with no or several members, and a member that
// inflates beyond maxInputBytes are errors. Plain JSON or CSV never starts with
// "PK", so the sniffing is unambiguous for the formats read here.
func readSource(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxInputBytes {
		return nil, fmt.Errorf("input larger than %d bytes", maxInputBytes)
	}
	if !bytes.HasPrefix(b, []byte("PK\x03\x04")) && !bytes.HasPrefix(b, []byte("PK\x05\x06")) {
		return b, nil
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("zip: %w", err)
	}
	var member *zip.File
	var names []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		names = append(names, f.Name)
		member = f
	}
	switch len(names) {
	case 0:
		return nil, errors.New("zip: archive has no file, want exactly one")
	case 1:
	default:
		return nil, fmt.Errorf("zip: archive has %d files (%s), want exactly one", len(names), strings.Join(names, ", "))
	}
	if member.UncompressedSize64 > uint64(maxInputBytes) {
		return nil, fmt.Errorf("zip: member %q inflates to %d bytes, more than %d", member.Name, member.UncompressedSize64, maxInputBytes)
	}
	rc, err := member.Open()
	if err != nil {
		return nil, fmt.Errorf("zip: member %q: %w", member.Name, err)
	}
	defer rc.Close()
	out, err := io.ReadAll(io.LimitReader(rc, maxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("zip: member %q: %w", member.Name, err)
	}
	if int64(len(out)) > maxInputBytes {
		return nil, fmt.Errorf("zip: member %q inflates to more than %d bytes", member.Name, maxInputBytes)
	}
	return out, nil
}

// jsonError rewrites a json.Decoder error on input b so that it gives the
// line and column (1-based, column in bytes) of the offending byte. The
// decoder's offsets are relative to where a Decode or Token call started, so
// on error the whole input is scanned again with json.Unmarshal, whose
// offset is absolute; the first syntax error it finds is the one the decoder
// hit, since everything before it decoded.
func jsonError(b []byte, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("not JSON: unexpected end of input")
	}
	var raw json.RawMessage
	var se *json.SyntaxError
	if errors.As(json.Unmarshal(b, &raw), &se) && se.Offset >= 1 && se.Offset <= int64(len(b)) {
		// Offset counts the bytes read, including the offending one.
		line, col := lineCol(b, int(se.Offset-1))
		return fmt.Errorf("line %d, column %d: not JSON: %w", line, col, se)
	}
	return fmt.Errorf("not JSON: %w", err)
}

// lineCol converts a byte offset to a 1-based line and column.
func lineCol(b []byte, off int) (line, col int) {
	before := b[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// expectEOF reports an error if dec holds more than white space.
func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value (at byte %d)", dec.InputOffset())
	}
	return nil
}
