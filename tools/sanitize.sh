#!/usr/bin/env bash
# Builds the C++ test modules with AddressSanitizer + UndefinedBehaviorSanitizer and runs the test suite
# against them. The compiler is $CXX, or Clang (clang++-19, else clang++) where one is installed, so that
# CI's plain run proves GCC and this run proves Clang; GCC (c++) where none is. The sanitizer runtime is
# preloaded into Python; leak detection is off (CPython and the frameworks keep allocations for the life
# of the process; tests/test_leaks.py measures leaks instead).
# Usage: bash tools/sanitize.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CXX:-}" ]; then
    CXX=c++
    for c in clang++-19 clang++; do
        if command -v "$c" > /dev/null; then CXX="$c"; break; fi
    done
fi
export CXX
if "$CXX" --version | grep -qi clang; then
    # Clang's shared runtime carries both sanitizers (the module links none: the preloaded one serves it).
    SANITIZER_LIBS="$("$CXX" -print-file-name=libclang_rt.asan-x86_64.so)"
else
    SANITIZER_LIBS="$("$CXX" -print-file-name=libasan.so) $("$CXX" -print-file-name=libubsan.so)"
fi
echo "[sanitize] compiler: $CXX ($("$CXX" --version | head -1)); preloaded: $SANITIZER_LIBS"
export DLTENSOR_SANITIZE=1
export LD_PRELOAD="$SANITIZER_LIBS"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
exec python -m pytest -p no:cacheprovider "$@"
