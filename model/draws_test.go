package model

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Two chains of three draws; the second chain lists its keys in another order.
const twoChains = `[
 {"theta[1]": [1, 2, 3], "theta[2]": [4, 5, 6], "mu": [7, 8, 9]},
 {"mu": [-7, -8, -9], "theta[1]": [-1, -2, -3], "theta[2]": [-4, -5, -6e0]}
]`

func TestParseDraws(t *testing.T) {
	for _, in := range [][]byte{[]byte(twoChains), zipOf(t, [2]string{"x-y.json", twoChains})} {
		d, err := ParseDraws("x-y.json.zip", bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"theta[1]", "theta[2]", "mu"}; !reflect.DeepEqual(d.Names, want) {
			t.Errorf("Names = %v, want %v", d.Names, want)
		}
		if err := d.Check(); err != nil || len(d.Chains) != 2 || d.ChainLen() != 3 {
			t.Errorf("%d chains, ChainLen %d, Check %v; want 2, 3, nil", len(d.Chains), d.ChainLen(), err)
		}
		// Chains are rows in Names order; the second chain's keys came in another order.
		want := [][]float64{{1, 4, 7, 2, 5, 8, 3, 6, 9}, {-1, -4, -7, -2, -5, -8, -3, -6, -9}}
		if !reflect.DeepEqual(d.Chains, want) {
			t.Errorf("Chains = %v, want %v", d.Chains, want)
		}
		if d.Index("mu") != 2 || d.Index("nope") != -1 {
			t.Errorf("Index wrong")
		}
	}
}

func TestParseDrawsBadInput(t *testing.T) {
	for _, c := range []struct {
		what, src, want string
	}{
		{"empty", ``, "not JSON: unexpected end of input"},
		{"object at top", `{"mu": [1]}`, `line 1, column 1: want a list of chains, got "{"`},
		{"no chains", `[]`, "no chains"},
		{"chain not object", `[[1, 2]]`, `line 1, column 2: want chain 1: an object, got "["`},
		{"chain is number", "[\n 3]", `line 2, column 2: want chain 1: an object, got a number`},
		{"empty chain", `[{}]`, "chain 1: no parameters"},
		{"no draws", `[{"mu": []}]`, `chain 1, "mu": no draws`},
		{"number not list", `[{"mu": 3}]`, `chain 1, "mu": a number, want a list of numbers`},
		{"string draw", `[{"mu": [1, "NaN", 3]}]`, `chain 1, "mu": draw 2: string "NaN", want a number`},
		{"null draw", `[{"mu": [1, 2, null]}]`, `chain 1, "mu": draw 3: null, want a number`},
		{"nested draw", `[{"mu": [[1]]}]`, `chain 1, "mu": draw 1: a list of 1, want a number`},
		{"overflow", `[{"mu": [1e999]}]`, `chain 1, "mu": draw 1: number 1e999 out of range`},
		{"length in chain", `[{"mu": [1, 2], "tau": [1]}]`, `chain 1, "tau": want 2 draws, got 1`},
		{"length across chains", `[{"mu": [1, 2]}, {"mu": [1, 2, 3]}]`, `chain 2, "mu": want 2 draws, got 3`},
		{"duplicate key", `[{"mu": [1], "mu": [2]}]`, `chain 1: "mu" appears twice`},
		{"duplicate key chain 2", `[{"mu": [1], "tau": [1]}, {"mu": [1], "mu": [2]}]`, `chain 2: "mu" appears twice`},
		{"missing key", `[{"mu": [1], "tau": [1]}, {"tau": [2]}]`, `chain 2: "mu" missing (it is in chain 1)`},
		{"extra key", `[{"mu": [1]}, {"mu": [2], "tau": [2]}]`, `chain 2: "tau" is not in chain 1`},
		{"truncated", `[{"mu": [1, 2`, `chain 1, "mu": not JSON: unexpected end of input`},
		{"truncated after chain", `[{"mu": [1, 2]}`, "not JSON: unexpected end of input"},
		{"syntax", `[{"mu": [1, 2]}}`, "line 1, column 16: not JSON: invalid character '}' after array element"},
		{"trailing", `[{"mu": [1]}] 3`, "trailing data after the JSON value"},
		{"not JSON", "\n mu,tau", "line 2, column 2: not JSON: invalid character 'm'"},
		{"bad key", `[{mu: [1]}]`, "line 1, column 3: not JSON: invalid character 'm' looking for beginning of object key string"},
		{"bad value", "[{\"mu\": [1, x]}]", `chain 1, "mu": line 1, column 13: not JSON: invalid character 'x'`},
	} {
		t.Run(c.what, func(t *testing.T) {
			d, err := ParseDraws("d.json", strings.NewReader(c.src))
			if err == nil {
				t.Fatalf("got %+v, want error", d)
			}
			wantErr(t, err, "model: draws d.json: "+c.want)
		})
	}
	good := zipOf(t, [2]string{"d.json", twoChains})
	for _, c := range []struct {
		what string
		in   []byte
		want string
	}{
		{"truncated zip", good[:len(good)/2], "zip: not a valid zip file"},
		{"empty zip", zipOf(t), "archive has no file"},
		{"two members", zipOf(t, [2]string{"a.json", twoChains}, [2]string{"b.json", twoChains}), "archive has 2 files"},
	} {
		_, err := ParseDraws("d.json.zip", bytes.NewReader(c.in))
		wantErr(t, err, "model: draws d.json.zip: ", c.want)
	}
}

func TestLoadDraws(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.json.zip")
	if err := os.WriteFile(p, zipOf(t, [2]string{"d.json", twoChains}), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDraws(p)
	if err != nil || d.ChainLen() != 3 {
		t.Fatalf("LoadDraws = %v, %v", d, err)
	}
	_, err = LoadDraws(p + "x")
	wantErr(t, err, "model: draws "+p+"x: no such file or directory")
}

// FuzzParseDraws checks that no input makes ParseDraws panic and that what
// it accepts is consistent.
func FuzzParseDraws(f *testing.F) {
	for _, s := range []string{
		twoChains, `[{"mu": [1], "mu": [2]}]`, `[{"mu": [1]}, {"tau": [1]}]`, `[{"a": [1, "x"]}]`, `[]`, `[{}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := ParseDraws("fuzz.json", bytes.NewReader(in))
		if err != nil {
			return
		}
		if err := d.Check(); err != nil {
			t.Fatalf("accepted draws that fail Check: %v (%+v)", err, d)
		}
		if _, err := d.Select(d.Names...); err != nil {
			t.Fatal(err)
		}
	})
}
