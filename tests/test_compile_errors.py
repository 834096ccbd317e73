"""Mistakes that must not compile, on both backends, each with a message that says what is wrong:
`view<...>()` contradicting the tensor's annotations (dtype, shape), an annotation given twice, array_t's
byte strides, array_t members that have no equivalent or would write through a read-only tensor, a framework tag that
cannot be honoured (`py::memview` on a parameter, a tag beside `empty_like`/`return_like`), a tensor constructed
without an owner (an error, a warning when allowed, either at the call's line), a C++ standard older than
C++17 (one error first, naming the flag), CPython's limited API (nanobind's STABLE_ABI: one error first); and
the warning on pybind11 headers included before dltensor's."""
import atexit
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
nanobind = pytest.importorskip("nanobind")
pybind11 = pytest.importorskip("pybind11")

PRELUDE = {
    "nanobind": "#include <dltensor/nanobind.h>\nnamespace py = nanobind;\n",
    "pybind11": "#include <dltensor/pybind11.h>\nnamespace py = pybind11;\n",
}
CASES = {
    "view dtype contradicts": ("double f(py::dltensor<double, py::ndim<1>> a) { return a.view<float>()(0); }",
                               "the dtype contradicts"),
    "view shape of another size": ("double f(py::dltensor<double, py::shape<2, 2>> a) { return a.view<py::shape<5>>()(0); }",
                                   "element count differs"),
    "annotation twice": ("void f(py::dltensor<float, double> a) { (void) a; }", "at most once"),
    # a scalar type DLPack has no dtype for: refused on both backends (nanobind would take any arithmetic
    # type), the compiler naming the type
    "long double dtype": ("void f(py::dltensor<const long double, py::ndim<1>> a) { (void) a; }",
                          "unknown annotation: T (in this instantiation)"),
    # array_t's byte strides, as ported: unsigned (sizeof) strides do not compile, also mixed with literals
    "byte strides": ("auto f(float *p, size_t k, py::handle o) { return py::dltensor<py::numpy, float, py::ndim<2>>"
                     "(p, {2, k}, o, {k * sizeof(float), sizeof(float)}); }", "strides count elements"),
    "byte strides mixed": ("auto f(float *p, size_t k, py::handle o) { return py::dltensor<py::numpy, float, "
                           "py::ndim<2>>(p, {2, k}, o, {k * sizeof(float), 1}); }", "strides count elements"),
    # array_t members: writing through a read-only tensor, and members with no equivalent
    "mutable_data read-only": ("float *f(py::dltensor<const float, py::ndim<1>> a) { return a.mutable_data(0); }",
                               "mutable_data(): the tensor is read-only"),
    "mutable_at read-only": ("void f(py::dltensor<float, py::ro, py::ndim<1>> a) { a.mutable_at(0) = 1; }",
                             "mutable_at(): the tensor is read-only"),
    "mutable_unchecked read-only": ("void f(py::dltensor<const float, py::ndim<1>> a) { a.mutable_unchecked<1>(); }",
                                    "mutable_unchecked(): the tensor is read-only"),
    "request": ("void f(py::dltensor<float> a) { a.request(); }", "has no request()/buffer_info"),
    "byte strides member": ("long f(py::dltensor<float> a) { return a.strides(0); }", "stride(i) is in elements"),
    "adopt lvalue": ("#include <vector>\nauto f(std::vector<float> &v) { return py::dltensor<py::numpy, float, "
                     "py::ndim<1>>::adopt(v); }", "pass the container with std::move"),
    "view mutable_data read-only": ("float f(py::dltensor<float, py::ndim<2>> a) { return *a.unchecked<2>().mutable_data(0, 0); }",
                                    "view mutable_data(): the view is read-only"),
    "copy_of rows ndim": ("#include <vector>\nauto f(const std::vector<std::vector<float>> &r) { return "
                          "py::dltensor<py::numpy, float, py::ndim<1>>::copy_of(r); }", "a container of rows makes a 2-D"),
    "adopt element type": ("#include <vector>\nauto f(std::vector<double> v) { return py::dltensor<py::numpy, "
                           "float, py::ndim<1>>::adopt(std::move(v)); }", "elements must be the tensor's dtype"),
    "resize names leading": ("void f(py::dltensor<float, py::ndim<2>> a) { a.resize(3); }", "return t.leading(rows)"),
    # a framework tag that cannot be honoured: py::memview on a parameter, a tag beside empty_like/return_like
    "memview parameter": ("size_t f(py::handle h) { return py::cast<py::dltensor<py::memview, float>>(h).size(); }",
                          "py::memview says what a returned tensor becomes"),
    "empty_like annotated": ("auto f(py::dltensor<const float, py::ndim<1>> x) { return py::dltensor<py::numpy, "
                             "float, py::ndim<1>>::empty_like(x, {3}); }", "a framework annotation would contradict"),
    "return_like annotated": ("auto f(py::dltensor<py::numpy, float> t, py::dltensor<float> x) { return "
                              "t.return_like(x); }", "a framework annotation would contradict"),
    "leading of f_contig": ("auto f(py::dltensor<py::numpy, float, py::ndim<2>, py::f_contig> a) { return "
                            "a.leading(1); }", "the leading rows of an f_contig tensor are not F-contiguous"),
}

# What compiles without a warning (-Werror): element strides however spelled, an explicit "no owner".
CLEAN = {
    "element strides": "auto f(float *p, size_t k, py::handle o) { return py::dltensor<py::numpy, float, "
                       "py::ndim<2>>(p, {2, k}, o, {(int64_t) k, 1}); }",
    "literal strides": "auto f(float *p, py::handle o) { return py::dltensor<py::numpy, float, py::ndim<2>>"
                       "(p, {2, 3}, o, {3, 1}); }",
    "explicit no owner": "static float data[3];\nauto f() { return py::dltensor<py::numpy, float, py::ndim<1>>"
                         "(data, {3}, py::handle()); }",
    "array_t members": "double f(py::dltensor<double, py::ndim<2>> a) { *a.mutable_data(0, 1) = 1; "
                       "a.mutable_at(0, 0) = 2; a.mutable_unchecked<2>()(0, 0) = 3; "
                       "return *a.data(0, 1) + a.at(0, 0) + a.unchecked<2>()(0, 0) + a.unchecked()(0, 0); }",
    "view members": "double f(py::dltensor<double, py::ndim<2>> a) { auto w = a.mutable_unchecked<2>(); "
                    "*w.mutable_data(0, 1) = 1; auto r = a.unchecked<2>(); "
                    "return *r.data(0, 1) + (double) r.size() + (double) (w.data(1, 1) - w.mutable_data()); }",
    # the ownerless spelling whose result is copied at once, with the owner argument saying "none"
    "immediate cast": "#include <vector>\npy::object f(std::vector<float> &v) { return py::dltensor<py::numpy, float, "
                      "py::ndim<1>>(v.data(), {v.size()}, py::handle()).cast(); }",
    "empty_like and return_like": "auto f(py::dltensor<const float, py::ndim<1>> x) { auto t = py::dltensor<float, "
                                  "py::ndim<1>>::empty_like(x, {3}); return py::dltensor<float, py::ndim<1>>(t).return_like(x); }",
    "object constructor": "size_t f(py::handle h) { py::dltensor<const double, py::ndim<2>> t(h); return t.shape(0); }",
}


SANITIZER_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-g"]


PRECOMPILED_FLAGS = [(), ("-Wall", "-Werror")]


def compile_snippet(backend, code, flags=(), prelude=None, system=False):
    """Compiles `code` after the backend's prelude (or `prelude`); `system`: dltensor's headers from a system
    include directory, as CMake's imported target `dltensor::dltensor` passes them (-isystem). With the
    flag sets most tests use, the prelude comes precompiled (GCC's precompiled header, made with the same
    flags, -Werror included, so that a warning of the headers fails it; where GCC finds it unusable it
    reads the header itself): a compile took 2-3 s, mostly parsing the prelude."""
    include = [Path(sysconfig.get_paths()["include"])]
    if backend == "nanobind":
        include += [Path(nanobind.include_dir()), Path(nanobind.include_dir()).parent / "ext" / "robin_map" / "include"]
    else:
        include += [Path(pybind11.get_include())]
    own = ["-isystem" if system else "-I", str(REPO / "cpp" / "include")]
    base = ["c++", "-std=c++17", *flags]
    paths = [*own, *[f"-I{p}" for p in include]]
    text = PRELUDE[backend] if prelude is None else prelude
    if prelude is None and tuple(flags) in PRECOMPILED_FLAGS and not system:
        header = precompiled_prelude(backend, tuple(base), tuple(paths))
        # the prelude's lines kept as empty lines: the snippet's line numbers are the same either way
        base, text = [*base, "-include", str(header)], "\n" * text.count("\n")
    cmd = [*base, "-fsyntax-only", "-x", "c++", "-", *paths]
    return subprocess.run(cmd, input=text + code, capture_output=True, text=True)


@lru_cache(maxsize=None)
def precompiled_prelude(backend, base, paths) -> Path:
    """The backend's prelude as a header beside its precompiled form, made by the compile `base` + `paths`."""
    folder = Path(tempfile.mkdtemp(prefix=f"dltensor-prelude-{backend}-"))
    atexit.register(shutil.rmtree, folder, True)  # 70-140 MB a backend
    header = folder / "prelude.h"
    header.write_text(PRELUDE[backend])
    done = subprocess.run([*base, "-x", "c++-header", str(header), "-o", f"{header}.gch", *paths],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return header


@pytest.mark.parametrize("flags", [(), SANITIZER_FLAGS], ids=["plain", "sanitizers"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_restated_view_compiles(backend, flags):
    # Also with the sanitizers' flags, under which GCC folds fewer pointer comparisons in constant
    # expressions (the annotation checks must not need any).
    proc = compile_snippet(backend, "double ok(py::dltensor<const double, py::ndim<1>> a) "
                                    "{ return a.view<double, py::ndim<1>>()(0); }", flags)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_mistake_fails_to_compile_with_its_message(backend, case):
    code, message = CASES[case]
    proc = compile_snippet(backend, code)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_unknown_scalar_type_error_names_the_type(backend):
    proc = compile_snippet(backend, CASES["long double dtype"][0])
    assert proc.returncode != 0 and "T = const long double" in proc.stderr, proc.stderr[-3000:]


@pytest.mark.parametrize("case", sorted(CLEAN))
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_porting_spelling_compiles_without_warnings(backend, case):
    proc = compile_snippet(backend, CLEAN[case], ["-Wall", "-Werror"])
    assert proc.returncode == 0, proc.stderr[-3000:]


LOCAL_BUFFER_RETURN = ("#include <vector>\nauto f() { std::vector<float> v(3); return "
                       "py::dltensor<py::numpy, float, py::ndim<1>>(v.data(), {v.size()}); }")
LOCAL_BUFFER_RETURN_NDIM = ("#include <vector>\nauto f() { std::vector<float> v(3); size_t n = 3; return "
                            "py::dltensor<py::numpy, float, py::ndim<1>>(v.data(), 1, &n); }")


@pytest.mark.parametrize("form", ["braced shape", "ndim and pointer"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_tensor_without_owner_is_a_compile_error_that_names_the_safe_spellings(backend, form):
    # The port of `py::array(v.size(), v.data())` that returns a local vector's memory: it would read the
    # vector after it is freed, so it does not compile; the error names the use-after-free, the spellings
    # that avoid it, the explicit "no owner" (also for a copy made at once) and the opt-in.
    code = LOCAL_BUFFER_RETURN if form == "braced shape" else LOCAL_BUFFER_RETURN_NDIM
    proc = compile_snippet(backend, code)
    assert proc.returncode != 0, proc.stderr[-3000:]
    assert "use-after-free" in proc.stderr and "copy_of" in proc.stderr and "adopt" in proc.stderr, proc.stderr[-3000:]
    assert "py::handle() as the owner" in proc.stderr and ".cast()" in proc.stderr, proc.stderr[-3000:]
    assert "DLTENSOR_ALLOW_OWNERLESS" in proc.stderr, proc.stderr[-3000:]


def first(kind, stderr):
    """The first line of the compiler's output that reports a `kind` ("error", "warning")."""
    return next((line for line in stderr.splitlines() if f"{kind}:" in line), "")


@pytest.mark.parametrize("system", [False, True], ids=["-I", "-isystem"])
@pytest.mark.parametrize("form", ["braced shape", "ndim and pointer"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_tensor_without_owner_is_reported_at_the_line_of_the_call(backend, form, system):
    # The error's own line names the user's source and the constructor call's line (not dltensor's header,
    # nor the `.def(...)` that instantiated it), also from a system include directory (CMake's target) and
    # from a lambda in a function template.
    call = ("auto v = std::make_shared<std::vector<T>>(n);\n        return Out(v->data(), {v->size()});" if form == "braced shape"
            else "std::vector<T> v(n); size_t k = n;\n        return Out(v.data(), 1, &k);")
    code = ("#include <memory>\n#include <vector>\ntemplate <typename T> void bind(py::module_ &m) {\n"
            "    using Out = py::dltensor<py::numpy, T, py::ndim<1>>;\n    m.def(\"make\", [](size_t n) {\n"
            f"        {call}\n    }});\n}}\ntemplate void bind<float>(py::module_ &);\n")
    source = PRELUDE[backend] + code
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "return Out(" in text)
    proc = compile_snippet(backend, code, system=system)
    assert proc.returncode != 0, proc.stderr[-3000:]
    error = first("error", proc.stderr)
    assert error.startswith(f"<stdin>:{line}:") and "use-after-free" in error, proc.stderr[-3000:]
    proc = compile_snippet(backend, code, ["-DDLTENSOR_ALLOW_OWNERLESS"], system=system)
    assert proc.returncode == 0, proc.stderr[-3000:]
    warning = first("warning", proc.stderr)
    assert warning.startswith(f"<stdin>:{line}:") and "use-after-free" in warning, proc.stderr[-3000:]


@pytest.mark.parametrize("system", [False, True], ids=["-I", "-isystem"])
@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_older_cxx_standard_fails_first_with_the_flag_to_change(backend, system):
    # A project that forces C++14 gets dltensor's one line first (naming the flags to change), before the
    # hundreds of errors that C++17 code gives an older standard (nanobind's own check comes after it).
    proc = compile_snippet(backend, "void f(py::dltensor<const float, py::ndim<1>> a) { (void) a; }",
                           ["-std=c++14"], system=system)
    assert proc.returncode != 0, proc.stderr[-3000:]
    error = first("error", proc.stderr)
    assert "dltensor needs C++17" in error and "-std=c++17" in error, proc.stderr[-3000:]
    assert "cxx_std_17" in error and "CMAKE_CXX_STANDARD" in error, proc.stderr[-3000:]
    assert compile_snippet(backend, "", ["-std=c++17"], system=system).returncode == 0


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_limited_api_fails_first_naming_stable_abi(backend):
    # nanobind's STABLE_ABI compiles with Py_LIMITED_API: dltensor's one line comes before the errors of
    # everything the limited API leaves out.
    proc = compile_snippet(backend, "void f(py::dltensor<const float, py::ndim<1>> a) { (void) a; }",
                           ["-DPy_LIMITED_API=0x030C0000"])
    assert proc.returncode != 0, proc.stderr[-3000:]
    error = first("error", proc.stderr)
    assert "Py_LIMITED_API" in error and "leave STABLE_ABI out" in error, proc.stderr[-3000:]


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_tensor_without_owner_is_a_warning_with_allow_ownerless(backend):
    # The opt-in for code ported wholesale (owner-less tensors over static memory): it compiles, and still
    # warns with the same text (-Werror=deprecated-declarations makes it an error again).
    proc = compile_snippet(backend, LOCAL_BUFFER_RETURN, ["-DDLTENSOR_ALLOW_OWNERLESS"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "use-after-free" in proc.stderr and "deprecated" in proc.stderr, proc.stderr[-3000:]
    assert "Out::copy_of" in proc.stderr and "makes this a warning" not in proc.stderr, proc.stderr[-3000:]
    proc = compile_snippet(backend, LOCAL_BUFFER_RETURN, ["-DDLTENSOR_ALLOW_OWNERLESS", "-Werror=deprecated-declarations"])
    assert proc.returncode != 0 and "use-after-free" in proc.stderr, proc.stderr[-3000:]


LATE_PRELUDE = "#include <pybind11/pybind11.h>\n#include <dltensor/pybind11.h>\nnamespace py = pybind11;\n"
APPEND = "void f(py::list l, py::dltensor<float> t) { l.append(t); l[0] = t; }"


@pytest.mark.parametrize("system", [False, True], ids=["-I", "-isystem"])
def test_pybind11_header_after_pybind11_warns_that_append_copies(system):
    # Included after pybind11's casts, dltensor's `py::cast` overloads come too late for pybind11's
    # templates (list.append, item assignment copy): a warning says so and names both ways out, also
    # from a system include directory (CMake's imported target), where GCC drops most header warnings.
    proc = compile_snippet("pybind11", APPEND, prelude=LATE_PRELUDE, system=system)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "included after pybind11's headers" in proc.stderr and "list.append(t)" in proc.stderr, proc.stderr[-3000:]
    assert "Include <dltensor/pybind11.h> first" in proc.stderr and "DLTENSOR_PYBIND11_INCLUDED_LATE" in proc.stderr
    # the define that says the copies are understood silences it, and dltensor first never warns
    proc = compile_snippet("pybind11", APPEND, ["-Wall", "-Werror", "-DDLTENSOR_PYBIND11_INCLUDED_LATE"],
                           prelude=LATE_PRELUDE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = compile_snippet("pybind11", APPEND, ["-Wall", "-Werror"])
    assert proc.returncode == 0, proc.stderr[-3000:]


COMPLEX_TYPES = """\
#include <complex>
struct pair_of_floats { using value_type = float; float re, im; float real() const { return re; } float imag() const { return im; } };
struct three_floats { using value_type = float; float re, im, pad; float real() const { return re; } float imag() const { return im; } };
struct int_parts { using value_type = int; int re, im; int real() const { return re; } int imag() const { return im; } };
static_assert(dlt::dtype_of<std::complex<float>>().code == dlt::dlpack::complex_ && dlt::dtype_of<std::complex<float>>().bits == 64);
static_assert(dlt::dtype_of<const std::complex<double>>().code == dlt::dlpack::complex_ && dlt::dtype_of<std::complex<double>>().bits == 128);
static_assert(dlt::dtype_of<pair_of_floats>().code == dlt::dlpack::complex_ && dlt::dtype_of<pair_of_floats>().bits == 64);
static_assert(dlt::dtype_of<three_floats>().bits == 0, "not laid out as two parts");
static_assert(dlt::dtype_of<int_parts>().bits == 0, "integer parts are no DLPack complex");
double f(py::dltensor<const std::complex<float>, py::ndim<1>> a, py::dltensor<std::complex<double>> b) {
    return (double) a(0).real() + (double) b.ndim(); }
"""


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_complex_element_types_are_recognised_by_their_parts(backend):
    # dtypes.h recognises std::complex<float|double> (and types laid out like them) without <complex>.
    proc = compile_snippet(backend, COMPLEX_TYPES, ["-Wall", "-Werror"])
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_nanobind_header_brings_no_standard_streams():
    # <complex> brings <sstream> (about 8,600 preprocessed lines with libstdc++); nanobind's ndarray.h
    # includes neither, and dltensor's nanobind header must not add them to every binding source.
    probe = compile_snippet("nanobind", "#if defined(__GLIBCXX__) && (defined(_GLIBCXX_COMPLEX) || defined(_GLIBCXX_SSTREAM))\n"
                                        "#error standard streams included\n#endif\n")
    assert probe.returncode == 0, probe.stderr[-3000:]


@pytest.mark.parametrize("backend", ["nanobind", "pybind11"])
def test_containers_of_any_kind_port_without_iterator_header(backend):
    # copy_of() of a C array and a std::array: std::size/std::begin come with <string> ([iterator.range]),
    # so array_t_members.h needs no <iterator> (which brings the stream buffers with it in libstdc++).
    code = ("#include <array>\nauto f() { static const float c[3] = {1, 2, 3}; std::array<double, 2> a{1, 2}; "
            "return std::make_pair(py::dltensor<py::numpy, float, py::ndim<1>>::copy_of(c), "
            "py::dltensor<py::numpy, double, py::ndim<1>>::copy_of(a)); }\n")
    proc = compile_snippet(backend, code, ["-Wall", "-Werror"])
    assert proc.returncode == 0, proc.stderr[-3000:]
