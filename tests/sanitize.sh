#!/usr/bin/env bash
# Builds the C++ test module with AddressSanitizer + UndefinedBehaviorSanitizer and runs the test suite
# against it. The sanitizer runtime is preloaded into Python; leak detection is off (CPython and the
# frameworks keep allocations for the life of the process; tests/test_leaks.py measures leaks instead).
# Usage: bash tests/sanitize.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
CXX="${CXX:-c++}"
ASAN_LIB="$("$CXX" -print-file-name=libasan.so)"
UBSAN_LIB="$("$CXX" -print-file-name=libubsan.so)"
export DLTENSOR_SANITIZE=1
export LD_PRELOAD="$ASAN_LIB $UBSAN_LIB"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
exec python -m pytest -p no:cacheprovider "$@"
