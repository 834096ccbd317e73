"""``python -m dltensor --include_dir | --cmake_dir | --version`` (pybind11's spellings ``--includedir`` and
``--cmakedir`` work too)."""
import argparse
import sys

from . import __version__, cmake_dir, include_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dltensor",
                                     description="Locations of the dltensor headers and CMake package.")
    group = parser.add_mutually_exclusive_group(required=True)
    # pybind11 spells these --includedir / --cmakedir: a build script that mixes them up still works.
    group.add_argument("--include_dir", "--includedir", action="store_true", help="print the C++ include directory")
    group.add_argument("--cmake_dir", "--cmakedir", action="store_true",
                       help="print the directory of dltensorConfig.cmake")
    group.add_argument("--version", action="store_true", help="print the package version")
    args = parser.parse_args(argv)
    print(include_dir() if args.include_dir else cmake_dir() if args.cmake_dir else __version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
