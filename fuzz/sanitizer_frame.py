#!/usr/bin/env python3
"""Tells libhdf5's own memory errors from the others in a sanitizer or
libFuzzer report: the innermost stack frame outside the sanitizer runtime
(its interceptors: memcpy, malloc, str*...), glibc's string routines
beneath them (__memcpy_avx512_...), libFuzzer (`fuzzer::`, atop
an OOM report; and main, whose live allocations an RSS out-of-memory report
lists first) and glibc's start-up code is in libhdf5.

    sanitizer_frame.py REPORT...

Prints `libhdf5: FRAME` or `FINDING: FRAME` per report (`FINDING: (no
frame)` when it has none) and exits 1 when any is a FINDING. libhdf5 1.10
has memory errors of its own on corrupt files that dlc contains in the
reader's child process and cannot fix (fuzz/README.md); anything else is a
finding. Used by ci.sh (the smoke run's crash-*, leak-* and oom-*) and
replay_cli.py (the sanitized isolated reader's reports).
"""

import re
import sys

RUNTIME_FRAME = re.compile(
    # A fuzz target's main is libFuzzer's: an RSS out-of-memory report lists
    # the largest live allocations, libFuzzer's own (under main) first.
    r" in (__interceptor_|__asan|__sanitizer|__ubsan|__lsan|fuzzer::|main |"
    r"(malloc|calloc|realloc|free|mem(cpy|move|set|cmp)|str[a-z]*|operator (new|delete))\b|"
    # glibc's own implementations under the interceptors (memcpy is
    # __memcpy_avx512_unaligned_erms, from string/../sysdeps/...).
    r"__(mem|str|wmem|wcs)[a-z0-9_]* )")
# Any other frame inside glibc (by its file: libc.so, or its sources when it
# has debug info: string/../sysdeps/..., csu/../sysdeps/nptl/... under main)
# is beneath the code that passed it bad arguments, or above all of it.
LIBC_FRAME = re.compile(r"\(/[^ ]*/libc\.so[.0-9]*\+0x|[ (]([a-z]+/)?\.\./sysdeps/")


def innermost_frame(report):
    """The first stack frame of a report outside the sanitizer runtime,
    glibc and libFuzzer; "" when there is none."""
    for line in report.splitlines():
        if (re.match(r"^ +#\d+ ", line) and not RUNTIME_FRAME.search(line)
                and not LIBC_FRAME.search(line)):
            return line
    return ""


def in_libhdf5(report):
    """Whether the report's innermost frame is libhdf5's."""
    return "libhdf5" in innermost_frame(report)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: sanitizer_frame.py REPORT...")
    findings = 0
    for path in sys.argv[1:]:
        with open(path, errors="replace") as f:
            report = f.read()
        frame = innermost_frame(report).strip() or "(no frame)"
        if in_libhdf5(report):
            print(f"libhdf5: {frame}")
        else:
            print(f"FINDING: {frame}")
            findings += 1
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
