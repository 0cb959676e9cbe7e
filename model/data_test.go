package model

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// zipOf returns a zip archive holding the given files in order.
func zipOf(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range files {
		fw, err := w.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wantErr fails unless err is non-nil and its message contains every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

const eightSchools = `{
  "J": 8,
  "y": [28, 8, -3, 7, -1, 1, 18, 12],
  "sigma": [15, 10, 16, 11, 9, 11, 10, 18]
}`

func TestParseDataEightSchools(t *testing.T) {
	for _, src := range []struct {
		name string
		b    []byte
	}{
		{"plain", []byte(eightSchools)},
		{"zip", zipOf(t, [2]string{"eight_schools.json", eightSchools})},
	} {
		t.Run(src.name, func(t *testing.T) {
			d, err := ParseData("eight_schools.json", bytes.NewReader(src.b))
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Names(); !reflect.DeepEqual(got, []string{"J", "sigma", "y"}) {
				t.Errorf("Names = %v", got)
			}
			if !d.Has("J") || d.Has("N") {
				t.Errorf("Has wrong")
			}
			j, err := d.Int("J")
			if err != nil || j != 8 {
				t.Fatalf("Int(J) = %v, %v", j, err)
			}
			y, err := d.Vector("y", j)
			if err != nil {
				t.Fatal(err)
			}
			if want := []float64{28, 8, -3, 7, -1, 1, 18, 12}; !reflect.DeepEqual(y, want) {
				t.Errorf("y = %v, want %v", y, want)
			}
			s, err := d.IntVector("sigma", -1)
			if err != nil || len(s) != 8 || s[7] != 18 {
				t.Errorf("IntVector(sigma) = %v, %v", s, err)
			}
			if r, err := d.Real("J"); err != nil || r != 8 {
				t.Errorf("Real(J) = %v, %v", r, err)
			}
		})
	}
}

func TestDataAccessors(t *testing.T) {
	const src = `{"X": [[1, 2.5, 3], [4, 5, 6e0]], "e": [], "ee": [[], []], "s": 2.5,
	"i3": 3.0, "one": 7, "A": [[[1,2],[3,4]],[[5,6],[7,8]]], "neg": -0, "big": 9007199254740992}`
	d, err := ParseData("a.json", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.Matrix("X", 2, 3)
	if err != nil || !reflect.DeepEqual(x, []float64{1, 2.5, 3, 4, 5, 6}) {
		t.Errorf("Matrix(X) = %v, %v", x, err)
	}
	x, dims, err := d.Array("X", -1, -1)
	if err != nil || !reflect.DeepEqual(dims, []int{2, 3}) || len(x) != 6 {
		t.Errorf("Array(X,-1,-1) = %v, %v, %v", x, dims, err)
	}
	a, dims, err := d.IntArray("A", 2, -1, 2)
	if err != nil || !reflect.DeepEqual(dims, []int{2, 2, 2}) || !reflect.DeepEqual(a, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("IntArray(A) = %v, %v, %v", a, dims, err)
	}
	if v, err := d.Vector("e", 0); err != nil || len(v) != 0 {
		t.Errorf("Vector(e, 0) = %v, %v", v, err)
	}
	if _, dims, err := d.Array("ee", 2, -1); err != nil || !reflect.DeepEqual(dims, []int{2, 0}) {
		t.Errorf("Array(ee) dims = %v, %v", dims, err)
	}
	// A scalar is a vector of length 1 (R's auto_unbox).
	if v, err := d.Vector("one", 1); err != nil || !reflect.DeepEqual(v, []float64{7}) {
		t.Errorf("Vector(one, 1) = %v, %v", v, err)
	}
	if v, err := d.IntVector("one", -1); err != nil || !reflect.DeepEqual(v, []int{7}) {
		t.Errorf("IntVector(one, -1) = %v, %v", v, err)
	}
	if i, err := d.Int("i3"); err != nil || i != 3 {
		t.Errorf("Int(i3) = %v, %v", i, err)
	}
	if i, err := d.Int("big"); err != nil || i != 1<<53 {
		t.Errorf("Int(big) = %v, %v", i, err)
	}
	if i, err := d.Int("neg"); err != nil || i != 0 {
		t.Errorf("Int(neg) = %v, %v", i, err)
	}
	for name, want := range map[string][]int{"s": nil, "e": {0}, "X": {2, 3}, "A": {2, 2, 2}, "ee": {2, 0}} {
		got, err := d.Shape(name)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Shape(%s) = %v, %v, want %v", name, got, err, want)
		}
	}
}

func TestDataErrors(t *testing.T) {
	const src = `{
  "N": 8, "y": [28, 8, "abc", "NaN", "-Inf", null, true, 1e999],
  "sigma": [15, 10, 16, 11, 9, 11, 10], "o": {"a": 1}, "k": [1, 2.5, 1e300], "str": "5",
  "X": [[1, 2, 3], [4, 5]], "Xr": [[1, 2], 3], "huge": 99999999999999999999, "inf": "Infinity",
  "nested": [[1], 2], "nan": "nan"
}`
	d, err := ParseData("es.json", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	vec := func(name string, n int) func() error {
		return func() error { _, err := d.Vector(name, n); return err }
	}
	ivec := func(name string, n int) func() error {
		return func() error { _, err := d.IntVector(name, n); return err }
	}
	for _, c := range []struct {
		what string
		call func() error
		want string
	}{
		{"missing", vec("mu", 8), `model: data es.json: field "mu": missing`},
		{"missing int", func() error { _, err := d.Int("J"); return err }, `field "J": missing`},
		{"wrong length", vec("sigma", 8), `model: data es.json: field "sigma": want 8 values, got 7`},
		{"object", vec("o", 8), `field "o": an object, want a list of 8`},
		{"string element", func() error {
			_, err := d.Vector("y", 8)
			return err
		}, `field "y[3]": string "abc", want a number`},
		{"string scalar", func() error { _, err := d.Real("str"); return err }, `field "str": string "5", want a number`},
		{"list for int", func() error { _, err := d.Int("y"); return err }, `field "y": a list of 8, want a number`},
		{"number for list", vec("N", 8), `field "N": a number, want a list of 8`},
		{"non-integer", ivec("k", 3), `field "k[2]": 2.5 is not an integer`},
		{"huge literal int", func() error { _, err := d.Int("huge"); return err }, `field "huge": integer 99999999999999999999 out of range`},
		{"Infinity string", func() error { _, err := d.Real("inf"); return err }, `field "inf": not finite (+Inf)`},
		{"nan lower case", func() error { _, err := d.Real("nan"); return err }, `field "nan": not finite (NaN)`},
		{"ragged matrix", func() error { _, err := d.Matrix("X", 2, 3); return err }, `field "X[2]": want 3 values, got 2`},
		{"ragged any cols", func() error { _, err := d.Matrix("X", -1, -1); return err }, `field "X[2]": want 3 values, got 2`},
		{"matrix rows", func() error { _, err := d.Matrix("X", 3, 3); return err }, `field "X": want 3 values, got 2`},
		{"row not a list", func() error { _, err := d.Matrix("Xr", 2, 2); return err }, `field "Xr[2]": a number, want a list of 2`},
		{"ragged shape", func() error { _, err := d.Shape("nested"); return err }, `field "nested[2]": a number, want a list of 1`},
		{"shape missing", func() error { _, err := d.Shape("zz"); return err }, `field "zz": missing`},
		{"matrix of vector", func() error { _, err := d.Matrix("sigma", 7, 1); return err }, `field "sigma[1]": a number, want a list of 1`},
		{"vector of matrix", vec("X", -1), `field "X[1]": a list of 3, want a number`},
	} {
		t.Run(c.what, func(t *testing.T) {
			wantErr(t, c.call(), "model: data es.json: ", c.want)
		})
	}

	// Each bad element of y, reached one at a time.
	for _, c := range []struct {
		val, want string
	}{
		{`"abc"`, `string "abc", want a number`},
		{`"NaN"`, `not finite (NaN)`},
		{`"-Inf"`, `not finite (-Inf)`},
		{`"Inf"`, `not finite (+Inf)`},
		{`null`, `null, want a number`},
		{`true`, `a boolean, want a number`},
		{`1e999`, `number 1e999 out of range`},
		{`-1e400`, `number -1e400 out of range`},
		{`[1]`, `a list of 1, want a number`},
	} {
		d, err := ParseData("es.json", strings.NewReader(`{"y": [1, 2, 3, `+c.val+`, 5]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Vector("y", 5)
		wantErr(t, err, `model: data es.json: field "y[4]": `+c.want)
		_, err = d.IntVector("y", 5)
		wantErr(t, err, `model: data es.json: field "y[4]": `)
	}
	for _, c := range []struct{ val, want string }{
		{`1e300`, `integer 1e+300 out of range`},
		{`9007199254740993.0`, `integer 9.007199254740992e+15 out of range (2^53 or more, written as a real)`},
		{`-2.5`, `-2.5 is not an integer`},
		{`"3"`, `string "3", want a number`},
	} {
		d, err := ParseData("i.json", strings.NewReader(`{"n": `+c.val+`}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Int("n")
		wantErr(t, err, `model: data i.json: field "n": `+c.want)
	}
}

func TestParseDataBadInput(t *testing.T) {
	good := zipOf(t, [2]string{"x.json", eightSchools})
	corrupt := append([]byte(nil), good...)
	// Flip bytes in the deflated payload (after the 30-byte local header and
	// the 6-byte name): inflating fails or the CRC check does.
	for i := 40; i < 60; i++ {
		corrupt[i] ^= 0x55
	}
	for _, c := range []struct {
		what string
		in   []byte
		want string
	}{
		{"empty input", nil, "not JSON: unexpected end of input"},
		{"truncated JSON", []byte(`{"y": [1, 2`), "not JSON: unexpected end of input"},
		{"syntax", []byte("{\n  \"y\": [1, 2,]\n}"), "line 2, column 14: not JSON: invalid character ']'"},
		{"list at top", []byte(`[1, 2]`), "top level is a list of 2, want a JSON object"},
		{"number at top", []byte(`3`), "top level is a number, want a JSON object"},
		{"trailing", []byte(`{"a": 1} {"b": 2}`), "trailing data after the JSON value"},
		{"not JSON", []byte(`N = 8`), "not JSON: invalid character 'N'"},
		{"truncated zip", good[:len(good)/2], "zip: zip: not a valid zip file"},
		{"truncated zip tail", good[:len(good)-10], "zip:"},
		{"empty zip", zipOf(t), "zip: archive has no file, want exactly one"},
		{"two members", zipOf(t, [2]string{"a.json", "{}"}, [2]string{"b.json", "{}"}), "archive has 2 files (a.json, b.json)"},
		{"directory only", zipOf(t, [2]string{"dir/", ""}), "archive has no file"},
		{"corrupt member", corrupt, `zip: member "x.json"`},
		{"zip of garbage", zipOf(t, [2]string{"x.json", "not json"}), "not JSON"},
	} {
		t.Run(c.what, func(t *testing.T) {
			d, err := ParseData("bad.json.zip", bytes.NewReader(c.in))
			if err == nil {
				t.Fatalf("got %v, want error", d)
			}
			wantErr(t, err, "model: data bad.json.zip: ", c.want)
		})
	}

	// __MACOSX metadata beside the one file is ignored.
	mac := zipOf(t, [2]string{"__MACOSX/._x.json", "junk"}, [2]string{"x.json", `{"a": 1}`})
	if _, err := ParseData("mac.zip", bytes.NewReader(mac)); err != nil {
		t.Errorf("zip with __MACOSX entry: %v", err)
	}
}

func TestInputSizeLimit(t *testing.T) {
	defer func(old int64) { maxInputBytes = old }(maxInputBytes)
	maxInputBytes = 300
	big := `{"y": [` + strings.Repeat("1, ", 200) + `1]}` // 610 bytes, deflates to far less than 300
	_, err := ParseData("big.json", strings.NewReader(big))
	wantErr(t, err, "model: data big.json: input larger than 300 bytes")
	_, err = ParseData("big.json.zip", bytes.NewReader(zipOf(t, [2]string{"big.json", big})))
	wantErr(t, err, `model: data big.json.zip: zip: member "big.json" inflates to 610 bytes, more than 300`)

	// A header that understates the size does not get past the limit.
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	fw.Write([]byte(big))
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "big.json", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(big)),
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(deflated.Bytes())
	zw.Close()
	_, err = ParseData("lie.zip", bytes.NewReader(buf.Bytes()))
	wantErr(t, err, `model: data lie.zip: zip: member "big.json"`)
}

func TestLoadData(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "es.json")
	zipped := filepath.Join(dir, "es.json.zip")
	if err := os.WriteFile(plain, []byte(eightSchools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zipped, zipOf(t, [2]string{"es.json", eightSchools}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{plain, zipped} {
		d, err := LoadData(p)
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != p {
			t.Errorf("Name = %q, want %q", d.Name, p)
		}
		_, err = d.Vector("sigma", 7)
		wantErr(t, err, "model: data "+p+`: field "sigma": want 7 values, got 8`)
	}
	missing := filepath.Join(dir, "nope.json")
	_, err := LoadData(missing)
	wantErr(t, err, "model: data "+missing+": no such file or directory")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
}

func TestIsDecimal(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "-1": true, "+1": true, "007": true, "1.": true, ".5": true, "1.5e-3": true, "2E+10": true,
		"": false, "-": false, ".": false, "1e": false, "1e+": false, "0x10": false, "1_000": false,
		"inf": false, "nan": false, "1.2.3": false, " 1": false, "e5": false,
	} {
		if got := isDecimal(s); got != want {
			t.Errorf("isDecimal(%q) = %v, want %v", s, got, want)
		}
	}
}
