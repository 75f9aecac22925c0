#!/usr/bin/env bash
# Fails when clang-format (LLVM style, .clang-format) would change a C/C++
# file of the repository. Usage: scripts/check-format.sh [CLANG_FORMAT]
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${1:-clang-format}
files=$(git ls-files '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh' 2>/dev/null || true)
[ -n "$files" ] || files=$(find dialects passes compiler frontends runtime tools test examples bench \
  -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cu' 2>/dev/null)
bad=0
for f in $files; do
  if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "needs clang-format: $f"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "clang-format: $(echo "$files" | wc -w) files clean"
exit $bad
