#!/usr/bin/env python3
"""Check that every #include follows dlc's component graph (docs/architecture.md).

    check-layering.py [--root DIR] [--graph]

Reads every C++/CUDA/TableGen file git tracks, maps it to its component by path, and checks each
`#include "..."` (written from the repository root) and each system include against the rules
below: a component may include its own headers and those of the components it depends on, and
nothing else of the repository; the components that must build without LLVM/MLIR (or without
CUDA) may not include their headers. --graph prints the dependencies actually used, one line per
component. Exit 0 when every include is allowed, 1 otherwise (one line per violation).

The rules are the architecture: change them here and in docs/architecture.md together.
Only the standard library.
"""

import argparse
import os
import re
import subprocess
import sys

# Components, most specific prefix first. Tests, fuzz targets and benchmarks may include anything.
COMPONENTS = [
    ("support/", "support"),
    ("artifact/", "artifact"),
    ("runtime/include/", "runtime-api"),
    ("runtime/cuda/", "cuda-driver"),
    ("runtime/", "runtime"),
    ("dialects/graph/", "graph-dialect"),
    ("dialects/exec/", "exec-dialect"),
    ("frontends/keras/reader/", "keras-reader"),
    ("frontends/keras/importer/", "keras-importer"),
    ("passes/", "passes"),
    ("compiler/reference/", "reference"),
    ("compiler/codegen/cuda/", "codegen-cuda"),
    ("compiler/codegen/library/", "codegen-library"),
    ("compiler/codegen/", "codegen"),
    ("compiler/", "driver"),
    ("tools/dlc/", "cli"),
    ("tools/dlc-opt/", "tools"),
    ("tools/dlc-cuda-translate/", "tools"),
    ("tools/dlc-stress/", "runtime-tools"),
    ("examples/embed/", "example"),
    ("python/", "python"),
    ("test/", "tests"),
    ("fuzz/", "tests"),
    ("bench/", "tests"),
]

# Which components each may include (besides itself). Acyclic: listed bottom-up.
DEPENDS = {
    "support": set(),
    "artifact": set(),
    "runtime-api": set(),
    "cuda-driver": {"runtime-api"},
    "runtime": {"runtime-api", "cuda-driver", "artifact", "support"},
    "graph-dialect": {"support"},
    "exec-dialect": {"graph-dialect", "artifact", "support"},
    "keras-reader": {"support"},
    "keras-importer": {"keras-reader", "graph-dialect", "support"},
    "passes": {"graph-dialect", "exec-dialect", "artifact", "support"},
    "reference": {"graph-dialect", "exec-dialect", "support"},
    "codegen": {"graph-dialect", "exec-dialect", "artifact", "support"},
    "codegen-library": {"codegen", "graph-dialect", "exec-dialect", "artifact", "support"},
    "codegen-cuda": {"codegen", "graph-dialect", "exec-dialect", "artifact", "cuda-driver",
                     "support"},
    "driver": {"keras-importer", "keras-reader", "graph-dialect", "exec-dialect", "passes",
               "reference", "codegen", "codegen-cuda", "codegen-library", "artifact",
               "support"},
    "cli": {"driver", "keras-importer", "runtime-api", "artifact", "support"},
    "runtime-tools": {"cli", "runtime-api", "artifact", "support"},
    "tools": {"driver", "codegen-cuda", "graph-dialect", "exec-dialect", "passes", "support"},
    "example": {"runtime-api"},
    # keras-reader: Isolation.h, to name the package's reader program.
    "python": {"driver", "graph-dialect", "runtime-api", "cli", "keras-reader", "artifact",
               "support"},
    "tests": None,  # anything
}

# Components that build in the runtime-only configuration or are plain C++: no LLVM/MLIR.
NO_LLVM = {"support", "artifact", "runtime-api", "cuda-driver", "runtime", "keras-reader",
           "runtime-tools", "example"}
# Files of the CLI that the runtime-only build compiles.
NO_LLVM_FILES = {"tools/dlc/main.cpp", "tools/dlc/RuntimeCommands.cpp",
                 "tools/dlc/RuntimeInputs.cpp", "tools/dlc/RuntimeInputs.h", "tools/dlc/Cli.cpp",
                 "tools/dlc/Cli.h", "tools/dlc/Commands.h", "tools/dlc/BenchCommand.cpp",
                 "tools/dlc/BenchReport.cpp", "tools/dlc/BenchReport.h"}
# Components that never touch CUDA: the compiler's host side and the plain libraries.
NO_CUDA = {"support", "artifact", "graph-dialect", "exec-dialect", "keras-reader",
           "keras-importer", "passes", "reference", "codegen", "codegen-library"}

LLVM_INCLUDE = re.compile(r"^(mlir|llvm|llvm-c)/")
CUDA_INCLUDE = re.compile(r"^(cuda|cuda_runtime|cuda_runtime_api|cublas|cublasLt|cudnn|nvrtc)"
                          r"[\w.]*\.h$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".td", ".inc")


def component_of(path):
    for prefix, name in COMPONENTS:
        if path.startswith(prefix):
            return name
    return None


def resolve(include, root):
    """The repository path an #include "..." names, or None for a system or generated header."""
    if include.startswith("dlc/"):
        return "runtime/include/" + include
    if component_of(include):
        return include
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--graph", action="store_true", help="print the dependencies in use")
    args = ap.parse_args(argv)
    try:
        files = subprocess.check_output(["git", "-C", args.root, "ls-files"], text=True,
                                        stderr=subprocess.DEVNULL).split()
    except (OSError, subprocess.CalledProcessError):  # a copy of the tree without .git
        files = [os.path.relpath(os.path.join(d, f), args.root)
                 for d, dirs, names in os.walk(args.root)
                 if not os.path.relpath(d, args.root).startswith(("build", ".venv", ".git"))
                 for f in names]
    violations = []
    used = {}
    for path in sorted(files):
        if not path.endswith(SOURCES):
            continue
        comp = component_of(path)
        if comp is None:
            continue
        with open(os.path.join(args.root, path), errors="replace") as f:
            lines = f.read().splitlines()
        allowed = DEPENDS[comp]
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            where = "%s:%d" % (path, number)
            include = m.group(2)
            if (comp in NO_LLVM or path in NO_LLVM_FILES) and LLVM_INCLUDE.match(include):
                violations.append("%s: %s must build without LLVM/MLIR, includes <%s>"
                                  % (where, comp, include))
            if comp in NO_CUDA and CUDA_INCLUDE.match(include):
                violations.append("%s: %s must not depend on CUDA, includes <%s>"
                                  % (where, comp, include))
            target = resolve(include, args.root) if m.group(1) == '"' else None
            if target is None:
                continue
            dep = component_of(target)
            if dep == comp:
                continue
            used.setdefault(comp, set()).add(dep)
            if allowed is not None and dep not in allowed:
                violations.append("%s: %s may not include %s (%s)" % (where, comp, include, dep))
    if args.graph:
        for comp in DEPENDS:
            print("%-16s -> %s" % (comp, " ".join(sorted(used.get(comp, ()))) or "-"))
    for v in violations:
        print(v)
    print("layering: %d violation%s" % (len(violations), "" if len(violations) == 1 else "s"))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
