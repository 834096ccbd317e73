"""Lifecycles that end a process when they go wrong, each run in a subprocess on both backends and both
import paths: tensors held by C++ past their producer's deletion (JAX's `delete()` included), held in
C++ statics until the interpreter exits, and dropped from a thread without the GIL; sharded and
replicated JAX arrays on several devices; and returns PyTorch would abort on."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import HERE, SANITIZE, load_backend

pytest.importorskip("torch")
pytest.importorskip("jax")


def run_script(backend, path, body, env=None):
    """Runs `body` in a fresh interpreter with `m` (the backend's test module, routed through `path`);
    returns the completed process (stdout and stderr together)."""
    build = os.path.dirname(load_backend(backend).__file__)
    prelude = textwrap.dedent(f"""
        import os, sys
        os.environ.setdefault("JAX_ENABLE_X64", "1")
        sys.path[:0] = [{build!r}, {str(HERE)!r}]
        import importlib
        m = importlib.import_module("dltensor_test_{backend}")
        m.common.set_fast_paths({path == "exchange"})
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(body)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


BACKENDS = ["nanobind", "pybind11"]
# Under the sanitizers each subprocess loads the frameworks with AddressSanitizer preloaded (slow): one
# import path there; both in the plain run.
PATHS = ["exchange"] if SANITIZE else ["exchange", "dlpack"]
both = pytest.mark.parametrize("backend, path", [(b, p) for b in BACKENDS for p in PATHS])

# Producers whose tensors C++ keeps: each line makes `x` (logically [1, 2, 3]) and then deletes it as its
# owner would.
HELD = {
    "numpy": ("import numpy as np; x = np.array([1., 2., 3.])", "del x"),
    "torch": ("import torch; x = torch.tensor([1., 2., 3.])", "del x"),
    "torch parameter": ("import torch; x = torch.nn.Parameter(torch.tensor([1., 2., 3.]))", "del x"),
    "jax": ("import jax.numpy as jnp; x = jnp.array([1., 2., 3.])", "x.delete(); del x"),
    "tensorflow": ("import tensorflow as tf; x = tf.constant([1., 2., 3.])", "del x"),
    "array.array": ("import array; x = array.array('d', [1., 2., 3.])", "del x"),
    "capsule": ("import numpy as np; x = np.array([1., 2., 3.]).__dlpack__()", "del x"),
}


@both
@pytest.mark.parametrize("producer", sorted(HELD))
def test_held_past_deletion_then_dropped_without_the_gil(backend, path, producer):
    make, delete = HELD[producer]
    proc = run_script(backend, path, f"""
        import gc
        {make}
        m.common.keep(x)
        {delete}
        gc.collect()
        assert m.common.kept_values(0) == [1.0, 2.0, 3.0], m.common.kept_values(0)
        m.ownership.release_kept_without_gil()
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


@both
def test_tensors_held_in_statics_at_exit(backend, path):
    # Every producer's tensor stays in a C++ static until the interpreter has finalized: the release is
    # skipped then (a leak at exit), never a crash.
    lines = "\n".join(f"{make}\nm.common.keep(x)" for make, _ in HELD.values())
    proc = run_script(backend, path, lines + "\nprint('held', [m.common.kept_values(i) for i in range(len(HELD))])\n"
                      .replace("len(HELD)", str(len(HELD))))
    assert proc.returncode == 0 and "held" in proc.stdout, proc.stdout + proc.stderr


@both
def test_jax_array_deleted_while_held(backend, path):
    proc = run_script(backend, path, """
        import jax.numpy as jnp
        z = jnp.arange(4.0, dtype=jnp.float32) + 1
        m.common.keep(z)
        z.delete()
        print(m.common.kept_values(0))
        m.common.release_kept()
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "[1.0, 2.0, 3.0, 4.0]", proc.stdout + proc.stderr


@both
def test_multi_device_jax_arrays_are_refused_on_every_path(backend, path):
    # A sharded array's first shard is not the array, and a replicated one is not one buffer that
    # __dlpack__ would export: both are refused, the same on every path.
    proc = run_script(backend, path, """
        import jax, jax.numpy as jnp, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        assert len(jax.devices()) == 2
        mesh = Mesh(np.array(jax.devices()), ("a",))
        for name, spec in (("sharded", P("a")), ("replicated", P())):
            x = jax.device_put(jnp.arange(8.0, dtype=jnp.float32), NamedSharding(mesh, spec))
            try:
                print("accepted", name, m.common.values(x))
            except TypeError:
                print("refused", name)
        one = jax.device_put(jnp.arange(3.0, dtype=jnp.float32), jax.devices()[1])
        print("single", m.common.values(one))
    """, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[:3] == ["refused sharded", "refused replicated",
                                            "single [0.0, 1.0, 2.0]"], proc.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_stride_pytorch_returns_do_not_abort(backend):
    # Every dtype, through the exchange API and through torch.from_dlpack: the right values, no abort.
    proc = run_script(backend, "exchange", """
        from test_producers import DTYPES, as_lists, expected_2x3
        for path in (True, False):
            m.common.set_fast_paths(path)
            for dtype in DTYPES:
                out = m.producers.ret_pytorch(dtype, "neg")
                assert as_lists("pytorch", out, dtype, m) == expected_2x3(dtype, "neg"), dtype
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


@both
def test_first_calls_come_from_many_threads_at_once(backend, path):
    # What dltensor looks up once per process (process_state.h: PyTorch's, NumPy's and jaxlib's entry
    # points, NumPy's C API, the dltensor.Tensor type, PyTorch's key-set layout) and the per-type cache are
    # made by the first call that needs them. Here every first call comes from 8 threads released at once,
    # each producer and each return at the same moment: no deadlock (the timeout), no crash, right answers.
    proc = run_script(backend, path, """
        import threading
        import numpy as np, torch, jax.numpy as jnp, tensorflow as tf
        args = [np.array([1., 2., 3.]), torch.tensor([1., 2., 3.]), torch._neg_view(torch.tensor([-1., -2., -3.])),
                jnp.array([1., 2., 3.]), tf.constant([1., 2., 3.]), [1, 2, 3], np.array([1, 2, 3], np.int32)]
        returns = [m.export.arange_numpy, m.export.arange_pytorch, m.export.arange_jax, m.export.arange_none]
        barrier = threading.Barrier(8)
        wrong = []
        def run(i):
            barrier.wait()
            for k in range(len(args)):
                x = args[(i + k) % len(args)]
                if m.conversion.ro_f64(x)["values"] != [1.0, 2.0, 3.0]:
                    wrong.append(("argument", type(x).__name__))
                r = returns[(i + k) % len(returns)](3)
                if np.from_dlpack(r).tolist() != [0.0, 1.0, 2.0]:
                    wrong.append(("return", type(r).__name__))
        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("wrong", wrong)
    """)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("wrong []"), proc.stdout + proc.stderr
