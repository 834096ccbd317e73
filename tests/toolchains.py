"""The compilers the suite builds with besides the default one (GCC on CI's machine): the oldest and the
newest Clang Debian ships (clang++-14, clang++-19, each with libstdc++, the newest also with libc++) and
nvcc. CI installs them (.ci/run); elsewhere a test that needs one skips when it is absent."""
import shutil
import subprocess
from functools import lru_cache

CLANG_OLDEST = "clang++-14"
CLANG_NEWEST = "clang++-19"
NVCC = "nvcc"
# pybind11's own test flags (its tests/CMakeLists.txt), which the headers must pass under -Werror.
WARNING_FLAGS = ["-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wcast-qual", "-Wdeprecated", "-Wundef",
                 "-Wnon-virtual-dtor"]


def have(compiler: str) -> bool:
    return shutil.which(compiler) is not None


@lru_cache(maxsize=None)
def has_libcxx(clang: str) -> bool:
    """True when `clang` finds libc++'s headers and library (Debian's libc++-NN-dev)."""
    if not have(clang):
        return False
    probe = subprocess.run([clang, "-x", "c++", "-stdlib=libc++", "-", "-o", "/dev/null"], input="#include <vector>\nint main() { std::vector<int> v(1); return v[0]; }\n",
                           capture_output=True, text=True)
    return probe.returncode == 0
