// Package model declares targets (log densities over a flat unconstrained
// vector), maps them to named constrained parameters, and loads the files a
// model meets: CmdStan/posteriordb JSON data, CSV data with a header,
// posteriordb reference draws and posteriordb posterior descriptions.
//
// Loaders never panic on bad input. Every error names the file and, where
// there is one, the field, with Stan's 1-based flattened element names
// ("y[4]", "X[3,5]"):
//
//	model: data eight_schools.json: field "sigma": want 8 values, got 7
//	model: data eight_schools.json: field "y[4]": not finite (NaN)
package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Data holds the fields of one data file: a CmdStan/posteriordb JSON object
// (ParseData) or the columns of a CSV file (ParseCSV). Values are decoded
// once at load and converted on access, so one file can serve a field as a
// real in one model and as an integer in another, as posteriordb requires.
//
// Conversion rules, the same for every accessor:
//   - Reals accept JSON integers and reals. The strings "NaN", "Inf",
//     "-Inf", "+Inf", "Infinity", "-Infinity" (any case), which CmdStan
//     writes for non-finite values, are recognised but rejected: a
//     non-finite data value is an error naming the element. Numbers beyond
//     the float64 range are rejected too.
//   - Integers accept JSON integers and reals with an integral value of
//     magnitude below 2^53 (so Python's 3.0 loads as 3); 2.5, strings,
//     booleans and null are errors.
//   - A vector of length 1 may be written as a bare scalar, as R's jsonlite
//     does with auto_unbox.
//   - Arrays are lists of lists, row-major: X[i][j] in the file is element
//     (i, j), Stan name "X[i+1,j+1]".
type Data struct {
	// Name is the file name used in error messages.
	Name string

	// fields maps a field name to its decoded value: json.Number, string,
	// bool, nil, []any or map[string]any from JSON; []any of csvCell from CSV.
	fields map[string]any
}

// LoadData reads a CmdStan/posteriordb JSON data file: a plain .json file or
// a zip archive (.json.zip) holding exactly one file. See ParseData.
func LoadData(path string) (*Data, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: data %s: %w", path, err)
	}
	return parseDataBytes(path, b)
}

// ParseData reads one JSON object mapping field names to a number, a list or
// a list of lists (CmdStan's JSON data format) from r, plain or as a zip
// archive holding one file. name is used in error messages. The whole input
// is read (at most 256 MiB); trailing data after the object is an error.
func ParseData(name string, r io.Reader) (*Data, error) {
	b, err := readSource(r)
	if err != nil {
		return nil, fmt.Errorf("model: data %s: %w", name, err)
	}
	return parseDataBytes(name, b)
}

func parseDataBytes(name string, b []byte) (*Data, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("model: data %s: %w", name, jsonError(b, err))
	}
	if err := expectEOF(dec); err != nil {
		return nil, fmt.Errorf("model: data %s: %w", name, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("model: data %s: top level is %s, want a JSON object", name, describe(v))
	}
	return &Data{Name: name, fields: obj}, nil
}

// Names returns the field names in sorted order.
func (d *Data) Names() []string {
	names := make([]string, 0, len(d.fields))
	for k := range d.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Has reports whether the file has a field called name.
func (d *Data) Has(name string) bool {
	_, ok := d.fields[name]
	return ok
}

// Shape returns the dimensions of a field: none for a scalar, [n] for a list,
// [n, m] for a list of n lists of length m, and so on. A ragged list of lists
// is an error. An empty list has shape [0].
func (d *Data) Shape(name string) ([]int, error) {
	v, err := d.get(name)
	if err != nil {
		return nil, err
	}
	var dims []int
	for {
		l, ok := v.([]any)
		if !ok {
			break
		}
		dims = append(dims, len(l))
		if len(l) == 0 {
			break
		}
		v = l[0]
	}
	// Check that the value is rectangular by walking it with the found
	// dimensions and a leaf test that accepts anything that is not a list.
	err = d.walk(name, dims, func(elem string, v any) error {
		if l, ok := v.([]any); ok {
			return d.elemErr(elem, v, fmt.Sprintf("a list of %d, want a value", len(l)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return dims, nil
}

// Int returns a scalar integer field.
func (d *Data) Int(name string) (int, error) {
	var out int
	err := d.walk(name, nil, func(elem string, v any) error {
		x, why := toInt(v)
		if why != "" {
			return d.elemErr(elem, v, why)
		}
		out = x
		return nil
	})
	return out, err
}

// Real returns a scalar real field.
func (d *Data) Real(name string) (float64, error) {
	var out float64
	err := d.walk(name, nil, func(elem string, v any) error {
		x, why := toFloat(v)
		if why != "" {
			return d.elemErr(elem, v, why)
		}
		out = x
		return nil
	})
	return out, err
}

// Vector returns a list of n reals; n < 0 accepts any length.
func (d *Data) Vector(name string, n int) ([]float64, error) {
	x, _, err := d.Array(name, n)
	return x, err
}

// IntVector returns a list of n integers; n < 0 accepts any length.
func (d *Data) IntVector(name string, n int) ([]int, error) {
	x, _, err := d.IntArray(name, n)
	return x, err
}

// Matrix returns a list of rows lists of cols reals, row-major: element
// (i, j) is at i*cols + j. A negative rows or cols accepts any size; Array
// returns the sizes found.
func (d *Data) Matrix(name string, rows, cols int) ([]float64, error) {
	x, _, err := d.Array(name, rows, cols)
	return x, err
}

// Array returns a real array of rank len(dims), flattened row-major, and its
// dimensions. A negative entry of dims accepts any size in that dimension;
// all lists at one depth must still have the same length. With no dims it
// reads a scalar.
func (d *Data) Array(name string, dims ...int) ([]float64, []int, error) {
	dims = append([]int(nil), dims...)
	var out []float64
	err := d.walk(name, dims, func(elem string, v any) error {
		x, why := toFloat(v)
		if why != "" {
			return d.elemErr(elem, v, why)
		}
		out = append(out, x)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, dims, nil
}

// IntArray is Array for integers.
func (d *Data) IntArray(name string, dims ...int) ([]int, []int, error) {
	dims = append([]int(nil), dims...)
	var out []int
	err := d.walk(name, dims, func(elem string, v any) error {
		x, why := toInt(v)
		if why != "" {
			return d.elemErr(elem, v, why)
		}
		out = append(out, x)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, dims, nil
}

func (d *Data) get(name string) (any, error) {
	v, ok := d.fields[name]
	if !ok {
		return nil, fmt.Errorf("model: data %s: field %q: missing", d.Name, name)
	}
	return v, nil
}

// walk visits the leaves of field name in row-major order, checking that it
// is an array with dimensions dims. Negative entries of dims are replaced by
// the size found. A scalar stands for a vector of length 1 when len(dims) is
// 1 and dims[0] is 1 or negative.
func (d *Data) walk(name string, dims []int, leaf func(elem string, v any) error) error {
	v, err := d.get(name)
	if err != nil {
		return err
	}
	if len(dims) == 1 && (dims[0] == 1 || dims[0] < 0) {
		if _, isList := v.([]any); !isList && isScalar(v) {
			dims[0] = 1
			return leaf(name, v)
		}
	}
	idx := make([]int, 0, len(dims))
	return d.walkRec(name, v, dims, idx, leaf)
}

func (d *Data) walkRec(name string, v any, dims, idx []int, leaf func(string, any) error) error {
	depth := len(idx)
	if depth == len(dims) {
		return leaf(elemName(name, idx), v)
	}
	l, ok := v.([]any)
	if !ok {
		what := "a list"
		if dims[depth] >= 0 {
			what = fmt.Sprintf("a list of %d", dims[depth])
		}
		return d.elemErr(elemName(name, idx), v, fmt.Sprintf("%s, want %s", describe(v), what))
	}
	if dims[depth] < 0 {
		dims[depth] = len(l)
	} else if len(l) != dims[depth] {
		return fmt.Errorf("model: data %s: field %q: want %d values, got %d", d.Name, elemName(name, idx), dims[depth], len(l))
	}
	for i, e := range l {
		if err := d.walkRec(name, e, dims, append(idx, i), leaf); err != nil {
			return err
		}
	}
	return nil
}

// elemErr formats an error about element elem whose value is v. For CSV
// cells it adds the line and column.
func (d *Data) elemErr(elem string, v any, why string) error {
	if c, ok := v.(csvCell); ok {
		return fmt.Errorf("model: data %s: field %q (line %d, column %d): %s", d.Name, elem, c.line, c.col, why)
	}
	return fmt.Errorf("model: data %s: field %q: %s", d.Name, elem, why)
}

// elemName returns Stan's 1-based flattened name: "y", "y[4]", "X[3,5]".
func elemName(name string, idx []int) string {
	if len(idx) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('[')
	for k, i := range idx {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i + 1))
	}
	b.WriteByte(']')
	return b.String()
}

func isScalar(v any) bool {
	switch v.(type) {
	case json.Number, string, csvCell:
		return true
	}
	return false
}

// describe names the JSON type of v for error messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return fmt.Sprintf("string %q", clip(v))
	case csvCell:
		return fmt.Sprintf("%q", clip(v.text))
	case []any:
		return fmt.Sprintf("a list of %d", len(v))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

// specialFloat parses the non-finite spellings CmdStan writes as strings.
func specialFloat(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "nan", "+nan", "-nan":
		return math.NaN(), true
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

// toFloat converts a leaf to a finite float64, or returns why it cannot.
func toFloat(v any) (float64, string) {
	var x float64
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return 0, fmt.Sprintf("number %s out of range", clip(string(v)))
		}
		x = f
	case string:
		f, ok := specialFloat(v)
		if !ok {
			return 0, fmt.Sprintf("%s, want a number", describe(v))
		}
		x = f
	case csvCell:
		s := strings.TrimSpace(v.text)
		if s == "" {
			return 0, "empty, want a number"
		}
		if f, ok := specialFloat(s); ok {
			x = f
			break
		}
		if !isDecimal(s) {
			return 0, fmt.Sprintf("%q is not a number", clip(s))
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Sprintf("number %s out of range", clip(s))
		}
		x = f
	default:
		return 0, fmt.Sprintf("%s, want a number", describe(v))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Sprintf("not finite (%v)", x)
	}
	return x, ""
}

// maxExactInt is 2^53. An integer written as a real ("3.0", "1e5") must be
// smaller in magnitude: from 2^53 on, the literal may have been rounded.
const maxExactInt = 1 << 53

// toInt converts a leaf to an int, or returns why it cannot.
func toInt(v any) (int, string) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = string(v)
	case csvCell:
		s = strings.TrimSpace(v.text)
	}
	if s != "" && !strings.ContainsAny(s, ".eE") && isDecimal(s) {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Sprintf("integer %s out of range", clip(s))
		}
		return int(i), ""
	}
	x, why := toFloat(v)
	if why != "" {
		return 0, why
	}
	if x != math.Trunc(x) {
		return 0, fmt.Sprintf("%v is not an integer", x)
	}
	if math.Abs(x) >= maxExactInt {
		return 0, fmt.Sprintf("integer %v out of range (2^53 or more, written as a real)", x)
	}
	return int(x), ""
}

// isDecimal reports whether s is a decimal number as JSON spells it, except
// that a leading '+' and leading zeros are allowed (CSV writers emit them).
// It rejects what strconv.ParseFloat would also take: hex floats,
// underscores, "inf" and "nan".
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}
