package ad

import "testing"

func TestMemo(t *testing.T) {
	var tp Tape
	a, b := new(int), new(int) // two owners
	x := tp.Input([]float64{1, 2, 3, 4})
	m := tp.Mark()
	buf, ok := tp.Memo(a, tp.Slice(x, 1, 3), 5)
	if ok || len(buf) != 5 {
		t.Fatalf("first Memo: ok=%v len=%d, want a fresh buffer of 5", ok, len(buf))
	}
	buf[0] = 42
	tp.Rewind(m) // the view is gone, x stays: a new view of the same elements hits
	if buf2, ok := tp.Memo(a, tp.Slice(x, 1, 3), 5); !ok || buf2[0] != 42 {
		t.Fatalf("Memo after Rewind past the view: ok=%v, want the cached buffer", ok)
	}
	if _, ok := tp.Memo(b, tp.Slice(x, 1, 3), 5); ok {
		t.Fatal("another owner hit the cache")
	}
	if _, ok := tp.Memo(a, tp.Slice(x, 0, 2), 5); ok {
		t.Fatal("other elements of x hit the cache")
	}
	y := tp.Input([]float64{5, 6})
	if _, ok := tp.Memo(a, y, 3); ok {
		t.Fatal("a new node hit the cache")
	}
	tp.Rewind(m) // y is discarded: its entry must go, x's must stay
	z := tp.Input([]float64{7, 8})
	if _, ok := tp.Memo(a, z, 3); ok {
		t.Fatal("a node recorded after Rewind hit the entry of the discarded one")
	}
	if _, ok := tp.Memo(a, tp.Slice(x, 1, 3), 5); !ok {
		t.Fatal("entry of x lost on Rewind to after x")
	}
	tp.Reset()
	x = tp.Input([]float64{1, 2, 3, 4})
	if _, ok := tp.Memo(a, tp.Slice(x, 1, 3), 5); ok {
		t.Fatal("entry survived Reset")
	}
	run := func() {
		tp.Reset()
		x := tp.Input([]float64{1, 2, 3, 4})
		m := tp.Mark()
		for range 3 {
			tp.Memo(a, tp.Slice(x, 1, 3), 5)
			tp.Memo(b, x, 7)
			tp.Rewind(m)
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocs per run, want 0", n)
	}
}
