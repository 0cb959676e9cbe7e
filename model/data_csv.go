package model

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// csvCell is one CSV cell, kept as text with its position for error messages.
type csvCell struct {
	text      string
	line, col int
}

// LoadCSV reads a CSV file with a header line (plain or as a zip archive
// holding one file). See ParseCSV.
func LoadCSV(path string) (*Data, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: data %s: %w", path, err)
	}
	return parseCSVBytes(path, b)
}

// ParseCSV reads comma-separated values with a header line from r. Each
// column becomes a vector field named by its header, so
// d.Vector("height", n) reads the column "height". Lines starting with '#'
// are comments (as in Stan CSV files), leading spaces in a field are
// dropped, and a UTF-8 byte order mark is skipped. Header names must be
// non-empty and distinct, and every row must have as many fields as the
// header. Cells are converted on access with the rules of Data; an error
// about a cell gives its line and column in the file. name is used in error
// messages.
func ParseCSV(name string, r io.Reader) (*Data, error) {
	b, err := readSource(r)
	if err != nil {
		return nil, fmt.Errorf("model: data %s: %w", name, err)
	}
	return parseCSVBytes(name, b)
}

func parseCSVBytes(name string, b []byte) (*Data, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(b))
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("model: data %s: empty file, want a header line", name)
	}
	if err != nil {
		return nil, fmt.Errorf("model: data %s: %w", name, csvError(err))
	}
	cols := make([][]any, len(header))
	index := make(map[string]int, len(header))
	for j, h := range header {
		h = strings.TrimSpace(h)
		line, col := cr.FieldPos(j)
		if h == "" {
			return nil, fmt.Errorf("model: data %s: line %d, column %d: empty column name", name, line, col)
		}
		if k, dup := index[h]; dup {
			return nil, fmt.Errorf("model: data %s: line %d, column %d: column name %q repeats column %d", name, line, col, h, k+1)
		}
		index[h] = j
		header[j] = h
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("model: data %s: %w", name, csvError(err))
		}
		for j, s := range rec {
			line, col := cr.FieldPos(j)
			cols[j] = append(cols[j], csvCell{text: s, line: line, col: col})
		}
	}
	fields := make(map[string]any, len(header))
	for j, h := range header {
		if cols[j] == nil {
			cols[j] = []any{}
		}
		fields[h] = cols[j]
	}
	return &Data{Name: name, fields: fields}, nil
}

// csvError rewrites encoding/csv's errors as "line L, column C: what".
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %w", pe.Line, pe.Column, pe.Err)
	}
	return err
}
