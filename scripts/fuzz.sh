#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target in the repository for N seconds each.
#
# Usage: scripts/fuzz.sh [SECONDS] [PACKAGE-PATTERN...]
#   SECONDS          fuzzing time per target (default 60)
#   PACKAGE-PATTERN  packages to search for targets (default ./...)
#
# Targets are found with `go test -list '^Fuzz'`, so a new FuzzXxx function is
# picked up without editing this script. Each target runs alone
# (-run '^$' -fuzz '^Name$'), since go test fuzzes one target per invocation.
# A crasher is written by go test under <pkg>/testdata/fuzz/<Target>/ and
# becomes a regression case of the plain `go test` run once committed.
# Not run in CI: it takes (number of targets) x SECONDS.
#
# Exit status: 0 if every target ran its time without a failure, 1 otherwise;
# the failing targets are listed at the end. Set FUZZ_PARALLEL to pass
# -parallel (workers per target; default go test's GOMAXPROCS).
set -u
secs="${1:-60}"
shift || true
if [ "$#" -eq 0 ]; then set -- ./...; fi
case "$secs" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a positive integer (got '$secs')" >&2; exit 2 ;;
esac
if [ "$secs" -lt 1 ]; then
  echo "fuzz.sh: SECONDS must be at least 1 (got $secs)" >&2; exit 2
fi
cd "$(dirname "$0")/.." || exit 2

par=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then par=(-parallel "$FUZZ_PARALLEL"); fi

# Only packages with a test file declaring a Fuzz function are listed (go test -list builds
# the test binary, which is slow for every package); go test -list is then the authority.
targets=()
listfail=()
for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@"); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  grep -qs '^func Fuzz' "$dir"/*_test.go || continue
  # go test -list prints the matching names, then "ok  <pkg>  <time>".
  if ! out="$(go test -list '^Fuzz' "$pkg" 2>&1)"; then
    echo "fuzz.sh: go test -list $pkg failed:" >&2
    echo "$out" >&2
    listfail+=("$pkg (go test -list failed)")
    continue
  fi
  while read -r name; do
    case "$name" in Fuzz*) targets+=("$pkg $name") ;; esac
  done <<< "$out"
done

if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found in $*" >&2; exit 2
fi
echo "fuzz.sh: ${#targets[@]} targets, ${secs}s each"
failed=("${listfail[@]}")
for t in "${targets[@]}"; do
  pkg="${t% *}"; name="${t#* }"
  echo "=== $pkg $name (${secs}s)"
  if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" "${par[@]}"; then
    echo "--- PASS $pkg $name"
  else
    echo "--- FAIL $pkg $name"
    failed+=("$pkg $name")
  fi
done
echo
if [ "${#failed[@]}" -eq 0 ]; then
  echo "fuzz.sh: all ${#targets[@]} targets passed (${secs}s each)"
  exit 0
fi
echo "fuzz.sh: ${#failed[@]} of ${#targets[@]} targets (or packages) failed:"
printf '  %s\n' "${failed[@]}"
exit 1
