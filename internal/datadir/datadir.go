// Package datadir finds the data directories that live outside the library: posteriordb,
// Fashion-MNIST and the shared directory that sits beside a vigo checkout. Only the CLI, the
// benchmark runners and tests use it; the library packages take every directory as a
// parameter and never look at the environment or the working directory themselves.
//
// The posteriordb directory resolves in this order: an explicit value (the --posteriordb
// flag), the environment variable VIGO_POSTERIORDB, and — only when run inside a vigo
// checkout — ../shared/data/posteriordb beside the repository root, found by walking up from
// the working directory to the go.mod of module github.com/vigo-bayes/vigo. Fashion-MNIST
// resolves as the flag, VIGO_FASHION_MNIST, then FashionMNISTDefault.
package datadir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is the module path whose go.mod marks a vigo checkout.
const Module = "github.com/vigo-bayes/vigo"

// Environment variables and defaults.
const (
	PosteriorDBEnv      = "VIGO_POSTERIORDB"
	FashionMNISTEnv     = "VIGO_FASHION_MNIST"
	FashionMNISTDefault = "/usr/share/datasets/fashion-mnist" // Debian's dataset-fashion-mnist
)

// PosteriorDBHelp is the usage text of a --posteriordb flag: it states the resolution order.
const PosteriorDBHelp = "posteriordb directory (holds data/, draws/, posteriors/); default $" + PosteriorDBEnv +
	", else ../shared/data/posteriordb when run inside a vigo checkout"

// FashionMNISTHelp is the usage text of a Fashion-MNIST directory flag whose default is
// FashionMNIST("").
const FashionMNISTHelp = "directory of the Fashion-MNIST IDX .gz files (default $" + FashionMNISTEnv +
	", else " + FashionMNISTDefault + ")"

// Shared returns the absolute path of the directory "shared" beside the root of the vigo
// checkout that holds the working directory, and whether there is one. The root is the first
// directory, walking up from the working directory, whose go.mod declares module Module.
// Cost: one stat per directory level.
func Shared() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if isCheckoutRoot(dir) {
			shared := filepath.Join(filepath.Dir(dir), "shared")
			if fi, err := os.Stat(shared); err == nil && fi.IsDir() {
				return shared, true
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// isCheckoutRoot reports whether dir holds a go.mod whose module directive is Module.
func isCheckoutRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`) == Module
		}
	}
	return false
}

// Source says where a directory came from.
type Source string

// The sources of a resolved directory.
const (
	FromFlag     Source = "flag"
	FromEnv      Source = "environment"
	FromCheckout Source = "checkout"
	FromDefault  Source = "default"
)

// PosteriorDB resolves the posteriordb directory: flag when it is not empty, else
// $VIGO_POSTERIORDB when set and not empty, else ../shared/data/posteriordb beside the vigo
// checkout holding the working directory when that is a directory. It does not check that a
// flag or environment value exists (loading from it names the missing file). When nothing is
// found the error names the flag and the variable.
func PosteriorDB(flag string) (string, Source, error) {
	if flag != "" {
		return flag, FromFlag, nil
	}
	if env := os.Getenv(PosteriorDBEnv); env != "" {
		return env, FromEnv, nil
	}
	if shared, ok := Shared(); ok {
		dir := filepath.Join(shared, "data", "posteriordb")
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir, FromCheckout, nil
		}
	}
	return "", "", fmt.Errorf("posteriordb directory not found: pass --posteriordb DIR or set %s (../shared/data/posteriordb is used only inside a vigo checkout)", PosteriorDBEnv)
}

// FashionMNIST resolves the Fashion-MNIST directory: flag when it is not empty, else
// $VIGO_FASHION_MNIST when set and not empty, else FashionMNISTDefault. It does not check that
// the directory exists.
func FashionMNIST(flag string) (string, Source) {
	if flag != "" {
		return flag, FromFlag
	}
	if env := os.Getenv(FashionMNISTEnv); env != "" {
		return env, FromEnv
	}
	return FashionMNISTDefault, FromDefault
}

// Skipper is the part of testing.TB the test helpers use (kept small so that this package
// does not import testing into the CLI binary).
type Skipper interface {
	Helper()
	Skipf(format string, args ...any)
}

// PosteriorDBOrSkip returns the posteriordb directory resolved as PosteriorDB("") and skips
// the test, saying why, when there is none or it is not a directory.
func PosteriorDBOrSkip(t Skipper) string {
	t.Helper()
	dir, src, err := PosteriorDB("")
	if err != nil {
		t.Skipf("skipping: %v", err)
		return ""
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("skipping: posteriordb directory %s (from the %s) is not a directory", dir, src)
		return ""
	}
	return dir
}

// SharedOrSkip returns the shared directory beside the checkout (see Shared) and skips the
// test, saying why, when there is none.
func SharedOrSkip(t Skipper) string {
	t.Helper()
	dir, ok := Shared()
	if !ok {
		t.Skipf("skipping: ../shared not found beside the vigo checkout holding the working directory")
		return ""
	}
	return dir
}

// FashionMNISTOrSkip returns the Fashion-MNIST directory resolved as FashionMNIST("") and
// skips the test, saying why, when it does not exist.
func FashionMNISTOrSkip(t Skipper) string {
	t.Helper()
	dir, src := FashionMNIST("")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("skipping: Fashion-MNIST not found at %s (from the %s; set %s or install Debian's dataset-fashion-mnist)", dir, src, FashionMNISTEnv)
		return ""
	}
	return dir
}

// PosteriorDBFullHelp is the usage text of a --posteriordb-full flag.
const PosteriorDBFullHelp = "the posteriordb-full snapshot (models/, data/, draws/, posteriors/, rstan-logprob/); default ../shared/data/posteriordb-full when run inside a vigo checkout"

// PosteriorDBFull resolves the posteriordb-full directory: flag when it is not empty, else
// ../shared/data/posteriordb-full beside the vigo checkout holding the working directory. When
// neither is there the error names the flag.
func PosteriorDBFull(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	shared, ok := Shared()
	if !ok {
		return "", errors.New("--posteriordb-full: no ../shared beside the checkout; give the posteriordb-full directory")
	}
	return filepath.Join(shared, "data", "posteriordb-full"), nil
}

// MNIST10k resolves the MNIST-10k directory (IDX files): flag when it is not empty, else
// ../shared/data/mnist-10k beside the vigo checkout holding the working directory, else ""
// (the caller's loader then reports the missing files).
func MNIST10k(flag string) string {
	if flag != "" {
		return flag
	}
	if shared, ok := Shared(); ok {
		return filepath.Join(shared, "data", "mnist-10k")
	}
	return ""
}
