package model

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCSV(t *testing.T) {
	const src = "\xef\xbb\xbf# written by hand\n" +
		"kid_score, mom_iq,mom_hs,label\n" +
		"65, 121.1, 1, \"a\"\n" +
		"# a comment between rows\n" +
		"98,89.4,0,\"two\nlines\"\n" +
		"85,115.4,1,c\n"
	for _, in := range [][]byte{[]byte(src), zipOf(t, [2]string{"kid.csv", src})} {
		d, err := ParseCSV("kid.csv", bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Names(); !reflect.DeepEqual(got, []string{"kid_score", "label", "mom_hs", "mom_iq"}) {
			t.Errorf("Names = %v", got)
		}
		iq, err := d.Vector("mom_iq", 3)
		if err != nil || !reflect.DeepEqual(iq, []float64{121.1, 89.4, 115.4}) {
			t.Errorf("mom_iq = %v, %v", iq, err)
		}
		hs, err := d.IntVector("mom_hs", -1)
		if err != nil || !reflect.DeepEqual(hs, []int{1, 0, 1}) {
			t.Errorf("mom_hs = %v, %v", hs, err)
		}
		// The quoted field spans lines 5–6, so the next row is on line 7.
		_, err = d.Vector("label", 3)
		wantErr(t, err, `model: data kid.csv: field "label[1]" (line 3, column 15): "a" is not a number`)
		_, err = d.Vector("mom_iq", 4)
		wantErr(t, err, `model: data kid.csv: field "mom_iq": want 4 values, got 3`)
		_, err = d.Real("mom_iq")
		wantErr(t, err, `model: data kid.csv: field "mom_iq": a list of 3, want a number`)
	}
}

func TestCSVCellErrors(t *testing.T) {
	const src = "a,b,c,d\n1,2,3,4\n1.5,NA,,Inf\n0x10,1_0,nan,1e999\n"
	d, err := ParseCSV("x.csv", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		call func() error
		want string
	}{
		{func() error { _, err := d.IntVector("a", 3); return err }, `field "a[2]" (line 3, column 1): 1.5 is not an integer`},
		{func() error { _, err := d.Vector("b", 3); return err }, `field "b[2]" (line 3, column 5): "NA" is not a number`},
		{func() error { _, err := d.Vector("c", 3); return err }, `field "c[2]" (line 3, column 8): empty, want a number`},
		{func() error { _, err := d.Vector("d", 3); return err }, `field "d[2]" (line 3, column 9): not finite (+Inf)`},
		{func() error { _, err := d.Vector("a", 3); return err }, `field "a[3]" (line 4, column 1): "0x10" is not a number`},
		{func() error { _, err := d.IntVector("b", 3); return err }, `field "b[2]" (line 3, column 5): "NA" is not a number`},
	} {
		wantErr(t, c.call(), "model: data x.csv: ", c.want)
	}
	d, err = ParseCSV("y.csv", strings.NewReader("c\n1_0\nnan\n1e999\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"1_0" is not a number`, `not finite (NaN)`, `number 1e999 out of range`} {
		d2 := &Data{Name: d.Name, fields: map[string]any{"c": d.fields["c"].([]any)[i : i+1]}}
		_, err := d2.Vector("c", 1)
		wantErr(t, err, "model: data y.csv: ", want)
	}
}

func TestParseCSVBadInput(t *testing.T) {
	for _, c := range []struct {
		what, src, want string
	}{
		{"empty", "", "empty file, want a header line"},
		{"comments only", "# nothing\n", "empty file, want a header line"},
		{"empty name", "a,,c\n1,2,3\n", "line 1, column 3: empty column name"},
		{"duplicate name", "a,b,a\n1,2,3\n", `line 1, column 5: column name "a" repeats column 1`},
		{"short row", "a,b,c\n1,2,3\n4,5\n", "line 3, column 1: wrong number of fields"},
		{"long row", "a,b\n1,2,3\n", "line 2, column 1: wrong number of fields"},
		{"bad quote", "a,b\n1,\"2\n", "line 2, column 6: extraneous or missing \" in quoted-field"},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, err := ParseCSV("bad.csv", strings.NewReader(c.src))
			wantErr(t, err, "model: data bad.csv: "+c.want)
		})
	}
	// A header without rows gives empty columns.
	d, err := ParseCSV("h.csv", strings.NewReader("a,b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := d.Vector("a", 0); err != nil || len(v) != 0 {
		t.Errorf("Vector(a, 0) = %v, %v", v, err)
	}
}

func TestLoadCSV(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(p, []byte("x,y\n1,2\n3,oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Vector("y", 2)
	wantErr(t, err, "model: data "+p+`: field "y[2]" (line 3, column 3): "oops" is not a number`)
	_, err = LoadCSV(p + ".missing")
	wantErr(t, err, "model: data "+p+".missing: no such file or directory")
}
