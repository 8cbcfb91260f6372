"""examples/train_embedding.py against examples/train_embedding.c: the same loss curve (the C
program's .expected output) and the same learned tables, byte for byte, at 1 and 2 threads.
The C program is the build's example_train_embedding (tests/CMakeLists.txt), found in
$NDX_BUILD_DIR/tests or ../build/tests from the source tree; it writes its variables with
NDX_SAVE=path (ndx_session_save_variables)."""
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "train_embedding.py")


def _c_program():
    build = os.environ.get("NDX_BUILD_DIR", os.path.join(ROOT, "build"))
    path = os.path.join(build, "tests", "example_train_embedding")
    if not os.access(path, os.X_OK):
        pytest.skip(f"the C example is not built ({path}): cmake --build build first")
    return path


def _run_python(threads, save):
    done = subprocess.run([sys.executable, EXAMPLE, "--threads", str(threads), "--save", save],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_python_example_learns_the_c_example_tables_bit_for_bit(tmp_path, threads):
    c_save, py_save = str(tmp_path / "c.npz"), str(tmp_path / "py.npz")
    env = dict(os.environ, NDX_THREADS=str(threads), NDX_SAVE=c_save)
    done = subprocess.run([_c_program()], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = _run_python(threads, py_save)
    with open(os.path.join(ROOT, "examples", "train_embedding.expected")) as f:
        expected = f.read()
    assert done.stdout == expected
    assert out == expected
    c, py = np.load(c_save), np.load(py_save)
    for name in ("U", "V"):
        assert c[name].dtype == py[name].dtype == np.float32
        assert c[name].shape == py[name].shape
        assert c[name].tobytes() == py[name].tobytes(), name


def test_python_example_data_matches_its_lcg_by_plain_integers():
    """The generator against the C formula evaluated by hand for the first draws."""
    mod = runpy.run_path(EXAMPLE)
    rng = mod["Generator"](42)
    got = rng.uniform(-0.5, 0.5, 3)
    s, want = 42, []
    for _ in range(3):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
        x = np.float32(s >> 40)
        want.append(np.float32(-0.5) + np.float32(1.0) * x / np.float32(2**24))
    assert got.tobytes() == np.array(want, np.float32).tobytes()
