package model

import (
	"bytes"
	"testing"
)

// exercise calls every accessor of d on every field with a few sizes; it
// must never panic, whatever the file held.
func exercise(d *Data) {
	for _, name := range append(d.Names(), "absent") {
		d.Has(name)
		if shape, err := d.Shape(name); err == nil {
			d.Array(name, shape...)
			d.IntArray(name, shape...)
		}
		d.Int(name)
		d.Real(name)
		for _, n := range []int{-1, 0, 1, 3} {
			d.Vector(name, n)
			d.IntVector(name, n)
			d.Matrix(name, n, -1)
			d.Matrix(name, -1, n)
		}
		d.Array(name, -1, -1, -1)
		d.IntArray(name, 2, -1, 2)
	}
}

// FuzzParseData checks that no input makes ParseData or an accessor panic.
// Run with: go test ./model -run '^$' -fuzz FuzzParseData -fuzztime 60s
func FuzzParseData(f *testing.F) {
	for _, s := range []string{
		eightSchools,
		`{"X": [[1, 2.5], [3, 4]], "n": 3.0, "s": "NaN", "b": true, "z": null, "o": {"a": [1]}}`,
		`{"A": [[[1]], [[2, 3]]], "e": [], "big": 1e999, "i": 99999999999999999999}`,
		`{"y": [1, 2,]}`, `[1]`, `{} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Add(zipOf(f, [2]string{"a.json", eightSchools}))
	f.Add(zipOf(f))
	f.Add(zipOf(f, [2]string{"a.json", "{}"}, [2]string{"b.json", "{}"}))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := ParseData("fuzz.json", bytes.NewReader(in))
		if err != nil {
			return
		}
		exercise(d)
	})
}

// FuzzParseCSV is FuzzParseData for CSV input.
func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n3,4\n", "a,b\n1\n", "# c\na\n\"x\ny\"\n", "a,a\n", ",\n", "a\nNaN\n1e999\n0x10\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := ParseCSV("fuzz.csv", bytes.NewReader(in))
		if err != nil {
			return
		}
		exercise(d)
	})
}
