package bench

import (
	"math"
	"testing"
	"testing/fstest"
)

// uciFS is one data set directory as the PBP repository ships it, with a single split, in
// memory.
func uciFS(s uciSet, data, features, target, epochs, hidden, splits, train, test string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range map[string]string{"data.txt": data, "index_features.txt": features, "index_target.txt": target,
		"n_epochs.txt": epochs, "n_hidden.txt": hidden, "n_splits.txt": splits, "index_train_0.txt": train, "index_test_0.txt": test} {
		fsys[s.dir+"/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

// FuzzLoadUCI feeds arbitrary files to the UCI loader: it must return an error or a data set
// whose rows are rectangular and finite, whose feature and target columns are in range, and
// whose every split has training and test rows in range — never panic. The files are in memory
// (loadUCI reads an fs.FS), so the fuzzer is not bound by the disk.
//
// Run: go test -fuzz FuzzLoadUCI ./bench
func FuzzLoadUCI(f *testing.F) {
	f.Add("1 2 3\n4 5 6\n7 8 9\n", "0 1", "2", "40", "50", "1", "0 1", "2")
	f.Add("1 2\n3 4\n", "0", "1", "1", "1", "1", "0.0", "1.0")
	f.Add("1 NaN\n3 4\n", "0", "1", "1", "1", "1", "0", "1")
	f.Add("1 2\n3 4\n", "0", "1", "1", "1", "1", "", "1")
	f.Add("1 2\n3 4\n", "0", "1", "1", "1", "1000000000", "0", "1")
	f.Fuzz(func(t *testing.T, data, features, target, epochs, hidden, splits, train, test string) {
		s := uciSets()[0]
		d, err := loadUCI(uciFS(s, data, features, target, epochs, hidden, splits, train, test), "fuzz", s)
		if err != nil {
			return
		}
		w := len(d.rows[0])
		for i, r := range d.rows {
			if len(r) != w {
				t.Fatalf("row %d: %d columns, want %d", i, len(r), w)
			}
			for _, v := range r {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("row %d: non-finite value %v accepted", i, v)
				}
			}
		}
		for _, c := range append(d.features, d.target) {
			if c < 0 || c >= w {
				t.Fatalf("column %d out of range", c)
			}
		}
		if len(d.features) == 0 {
			t.Fatalf("no feature columns accepted")
		}
		if len(d.train) == 0 || len(d.train) != len(d.test) {
			t.Fatalf("%d train and %d test splits", len(d.train), len(d.test))
		}
		for sp := range d.train {
			if len(d.train[sp]) == 0 || len(d.test[sp]) == 0 {
				t.Fatalf("split %d: %d training and %d test rows accepted", sp, len(d.train[sp]), len(d.test[sp]))
			}
			for _, i := range append(d.train[sp], d.test[sp]...) {
				if i < 0 || i >= len(d.rows) {
					t.Fatalf("split %d: row %d out of range", sp, i)
				}
			}
		}
		if d.epochs < 1 || d.hidden < 1 {
			t.Fatalf("epochs %d, hidden %d", d.epochs, d.hidden)
		}
	})
}
