package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkout makes root/repo (a vigo checkout when module is Module) with a subdirectory and,
// when withDB, root/shared/data/posteriordb. It returns the subdirectory and the posteriordb
// path.
func checkout(t *testing.T, module string, withDB bool) (sub, db string) {
	t.Helper()
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub = filepath.Join(repo, "a", "b")
	db = filepath.Join(root, "shared", "data", "posteriordb")
	dirs := []string{sub, filepath.Join(root, "shared")}
	if withDB {
		dirs = append(dirs, db)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("// a comment\nmodule "+module+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sub, db
}

func sameDir(t *testing.T, got, want string) bool {
	t.Helper()
	g, err1 := filepath.EvalSymlinks(got)
	w, err2 := filepath.EvalSymlinks(want)
	return err1 == nil && err2 == nil && g == w
}

// TestPosteriorDBOrder checks flag > environment > checkout walk > error.
func TestPosteriorDBOrder(t *testing.T) {
	sub, db := checkout(t, Module, true)
	t.Chdir(sub)
	t.Setenv(PosteriorDBEnv, "/from/env")

	if dir, src, err := PosteriorDB("/from/flag"); err != nil || dir != "/from/flag" || src != FromFlag {
		t.Errorf("flag: PosteriorDB = %q, %q, %v; want /from/flag, flag", dir, src, err)
	}
	if dir, src, err := PosteriorDB(""); err != nil || dir != "/from/env" || src != FromEnv {
		t.Errorf("env: PosteriorDB = %q, %q, %v; want /from/env, environment", dir, src, err)
	}
	t.Setenv(PosteriorDBEnv, "") // set but empty counts as unset
	if dir, src, err := PosteriorDB(""); err != nil || !sameDir(t, dir, db) || src != FromCheckout {
		t.Errorf("checkout: PosteriorDB = %q, %q, %v; want %s, checkout", dir, src, err, db)
	}

	// Outside any checkout: an error naming the flag and the variable.
	t.Chdir(t.TempDir())
	dir, _, err := PosteriorDB("")
	if err == nil {
		t.Fatalf("outside a checkout: PosteriorDB = %q, nil error", dir)
	}
	for _, want := range []string{"--posteriordb", PosteriorDBEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestSharedNeedsVigoCheckout checks that only a go.mod of module Module with a sibling
// shared/ counts, and that a checkout without shared/data/posteriordb resolves to an error.
func TestSharedNeedsVigoCheckout(t *testing.T) {
	t.Setenv(PosteriorDBEnv, "")
	sub, _ := checkout(t, "example.com/other", true)
	t.Chdir(sub)
	if dir, ok := Shared(); ok {
		t.Errorf("another module: Shared() = %q, true", dir)
	}
	if _, _, err := PosteriorDB(""); err == nil {
		t.Error("another module: PosteriorDB found a directory")
	}

	sub, db := checkout(t, Module, false)
	t.Chdir(sub)
	shared, ok := Shared()
	if !ok || !sameDir(t, shared, filepath.Dir(filepath.Dir(db))) {
		t.Errorf("vigo checkout: Shared() = %q, %v", shared, ok)
	}
	if dir, _, err := PosteriorDB(""); err == nil {
		t.Errorf("checkout without posteriordb: PosteriorDB = %q, nil error", dir)
	}
}

func TestFashionMNISTOrder(t *testing.T) {
	t.Setenv(FashionMNISTEnv, "/from/env")
	if dir, src := FashionMNIST("/from/flag"); dir != "/from/flag" || src != FromFlag {
		t.Errorf("flag: FashionMNIST = %q, %q", dir, src)
	}
	if dir, src := FashionMNIST(""); dir != "/from/env" || src != FromEnv {
		t.Errorf("env: FashionMNIST = %q, %q", dir, src)
	}
	t.Setenv(FashionMNISTEnv, "")
	if dir, src := FashionMNIST(""); dir != FashionMNISTDefault || src != FromDefault {
		t.Errorf("default: FashionMNIST = %q, %q", dir, src)
	}
}

// skipRecorder records Skipf instead of stopping the goroutine.
type skipRecorder struct{ msg string }

func (s *skipRecorder) Helper()                       {}
func (s *skipRecorder) Skipf(format string, a ...any) { s.msg = format }

func TestOrSkipSkips(t *testing.T) {
	t.Setenv(PosteriorDBEnv, "")
	t.Setenv(FashionMNISTEnv, filepath.Join(t.TempDir(), "missing"))
	t.Chdir(t.TempDir())
	for name, f := range map[string]func(Skipper) string{
		"PosteriorDBOrSkip": PosteriorDBOrSkip, "SharedOrSkip": SharedOrSkip, "FashionMNISTOrSkip": FashionMNISTOrSkip,
	} {
		var r skipRecorder
		if dir := f(&r); dir != "" || r.msg == "" {
			t.Errorf("%s outside a checkout = %q, skip message %q; want a skip", name, dir, r.msg)
		}
	}
	t.Setenv(PosteriorDBEnv, filepath.Join(t.TempDir(), "missing"))
	var r skipRecorder
	if dir := PosteriorDBOrSkip(&r); dir != "" || r.msg == "" {
		t.Errorf("PosteriorDBOrSkip with a missing $%s = %q; want a skip", PosteriorDBEnv, dir)
	}
	db := t.TempDir()
	t.Setenv(PosteriorDBEnv, db)
	r = skipRecorder{}
	if dir := PosteriorDBOrSkip(&r); dir != db || r.msg != "" {
		t.Errorf("PosteriorDBOrSkip with $%s=%s = %q, skip %q", PosteriorDBEnv, db, dir, r.msg)
	}
}

// PosteriorDBFull takes the flag as given, else the snapshot beside ../shared, and otherwise
// names the flag.
func TestPosteriorDBFull(t *testing.T) {
	if got, err := PosteriorDBFull("/x/full"); got != "/x/full" || err != nil {
		t.Errorf("flag: %q, %v", got, err)
	}
	got, err := PosteriorDBFull("")
	if shared, ok := Shared(); ok {
		if want := filepath.Join(shared, "data", "posteriordb-full"); got != want || err != nil {
			t.Errorf("default: %q, %v; want %q", got, err, want)
		}
	} else if err == nil || !strings.Contains(err.Error(), "--posteriordb-full") {
		t.Errorf("no ../shared: %q, %v; want an error naming the flag", got, err)
	}
}
