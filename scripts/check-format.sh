#!/usr/bin/env bash
# Fails when clang-format (LLVM style, .clang-format) would change a C/C++
# file of the repository. Usage: scripts/check-format.sh [CLANG_FORMAT]
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
files=$(git ls-files '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' 2>/dev/null || true)
[ -n "$files" ] || files=$(find dialects passes compiler frontends runtime tools test examples bench \
  -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' 2>/dev/null)
# Patterns of files to leave alone, from .clang-format-ignore (clang-format 18
# and newer read it themselves; Debian 12's clang-format 14 does not).
ignored=()
if [ -f .clang-format-ignore ]; then
  while IFS= read -r pattern; do
    case "$pattern" in '' | '#'*) continue ;; esac
    ignored+=("$pattern")
  done <.clang-format-ignore
fi
checked=0
bad=0
for f in $files; do
  skip=0
  for pattern in "${ignored[@]}"; do
    # shellcheck disable=SC2053 # the pattern is a glob
    if [[ $f == $pattern ]]; then skip=1; fi
  done
  [ "$skip" = 0 ] || continue
  checked=$((checked + 1))
  if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "needs clang-format: $f"
    bad=1
  fi
done
# A file banner longer than 80 columns is what clang-format breaks in two
# ("//===- ... -*- C++" and a lone "//-*-===//"): shorten it instead.
for f in $files; do
  if grep -qx -- '//-\*-===//' "$f"; then
    echo "file banner broken in two (shorten its first line to 80 columns): $f"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "clang-format: $checked files clean"
exit $bad
