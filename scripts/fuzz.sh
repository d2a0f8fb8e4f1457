#!/usr/bin/env bash
# make fuzz: run every fuzz target of the module for FUZZTIME each (default
# 30s). `make test` already runs their seed corpora (testdata/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-30s}"
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
  pkg="./$(dirname "${file#./}")"
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    echo "== $pkg $target ($FUZZTIME)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
  done
done
