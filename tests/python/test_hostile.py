"""Hostile input for the Python module, in the spirit of tests/test_advisories.c: wrong types,
broken array protocols, huge and negative integers for every integer argument, arguments that
change while ndx converts them or while it works, every error class. The contract checked
everywhere: a call returns the right result (judged by plain NumPy loops, never by ndx) or raises
a Python exception that names the argument at fault, and an out= it failed on is unchanged.

Cases that crashed the interpreter once run in a child interpreter (same executable, same
PYTHONMALLOC and -X options), so a crash is a failed test, not a dead test run."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ndx

HERE = os.path.dirname(os.path.abspath(__file__))


def run_child(source):
    """Runs `source` in a new interpreter like this one; returns its stdout (fails on a crash)."""
    flags = [f"-X{k}" if v is True else f"-X{k}={v}" for k, v in sys._xoptions.items()]
    proc = subprocess.run([sys.executable, *flags, "-c", textwrap.dedent(source)],
                          capture_output=True, text=True, timeout=120, cwd=HERE)
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc.stdout


def gather_rows(params, rows):
    """params[rows[i]] for each i, by a Python loop (the reference for a depth-1 gather)."""
    return np.array([params[int(r)] for r in rows], dtype=params.dtype).reshape(
        (len(rows),) + params.shape[1:])


# ---- item 6: a list changed while ndx converts its items ----------------------------------------

MUTATION_SETUP = """
import numpy as np, ndx

class ClearsOnConvert:
    '''An index tensor whose __array__ empties the list it sits in (freeing the other items).'''
    def __init__(self, victim, value):
        self.victim, self.value = victim, value
    def __array__(self, dtype=None, copy=None):
        self.victim.clear()
        return np.array(self.value, np.int32)

class DuckClearsOnRead:
    '''A duck-typed SparseTensor whose .indices empties the list it sits in.'''
    def __init__(self, victim):
        self.victim = victim
        self.values = np.array([1.0], np.float32)
        self.dense_shape = np.array([2])
    @property
    def indices(self):
        self.victim.clear()
        return np.array([[0]])
"""


def test_list_cleared_while_converting_stitch_indices():
    out = run_child(MUTATION_SETUP + """
indices = [None, np.array([1]), np.array([2, 3])]
indices[0] = ClearsOnConvert(indices, [0])
data = [np.array([10.0]), np.array([11.0]), np.array([12.0, 13.0])]
print(ndx.dynamic_stitch(indices, data).tolist())
data = [None, np.array([11], np.int32)]
data[0] = ClearsOnConvert(data, [10])
print(ndx.dynamic_stitch([np.array([0]), np.array([1])], data).tolist())
""")
    # The items as they were when the call began.
    assert out.split("\n")[:2] == [str([10.0, 11.0, 12.0, 13.0]), str([10, 11])]


def test_list_cleared_while_reading_duck_sparse_tensors():
    out = run_child(MUTATION_SETUP + """
inputs = [None, ndx.SparseTensor([[1]], np.array([2.0], np.float32), [2])]
inputs[0] = DuckClearsOnRead(inputs)
c = ndx.sparse.concat(0, inputs)
print(c.indices.tolist(), c.values.tolist(), c.dense_shape.tolist())
""")
    assert out.strip() == "[[0], [3]] [1.0, 2.0] [4]"


# ---- item 6: an index array changed by another thread while calls run -------------------------

def mutate_while(target, states, calls):
    """Runs calls() while a thread keeps writing each of `states` into `target` in turn."""
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            for s in states:
                target[...] = s

    t = threading.Thread(target=writer)
    t.start()
    try:
        calls()
    finally:
        stop.set()
        t.join()


@pytest.mark.parametrize("bad_indices", ["error", "ignore"])
def test_gather_while_another_thread_rewrites_indices(bad_indices):
    rng = np.random.default_rng(3)
    params = rng.standard_normal((1000, 4)).astype(np.float32)
    good = rng.integers(0, 1000, (4096, 1))
    bad = good.copy()
    bad[::7] = 10**12  # far out of range: reading it unchecked would fault
    indices = good.copy()
    want = gather_rows(params, good[:, 0])
    outcomes = {"ok": 0, "refused": 0}

    def calls():
        for _ in range(150):
            try:
                got = ndx.gather_nd(params, indices, bad_indices=bad_indices)
            except ndx.InvalidArgumentError as e:
                assert bad_indices == "error" and "indices" in str(e)
                outcomes["refused"] += 1
                continue
            outcomes["ok"] += 1
            # Each row is the row of the good index, or zeros for the bad one (ignore).
            zero = (got == 0).all(axis=1)
            assert ((got == want).all(axis=1) | (zero if bad_indices == "ignore" else False)).all()

    mutate_while(indices, [bad, good], calls)
    assert outcomes["ok"] + outcomes["refused"] == 150


def test_scatter_while_another_thread_rewrites_indices():
    rng = np.random.default_rng(4)
    tensor = rng.standard_normal((5000, 2))
    good = rng.permutation(5000)[:3000].reshape(-1, 1)
    bad = good.copy()
    bad[::5] = -(10**12)
    updates = rng.standard_normal((3000, 2))
    indices = good.copy()
    applied = tensor.copy()
    for r, u in zip(good[:, 0], updates):
        applied[r] += u

    def calls():
        for k in range(100):
            out = np.full_like(tensor, 7.0)
            skip = "skip" if k % 2 else "error"
            try:
                assert ndx.tensor_scatter_nd_add(tensor, indices, updates, out=out,
                                                 bad_indices=skip) is out
            except ndx.InvalidArgumentError:
                assert skip == "error" and (out == 7.0).all()  # refused: out untouched
                continue
            # Each target row got its update or (skipped as bad) not; other rows are tensor's.
            rows = good[:, 0]
            assert (np.isclose(out[rows], applied[rows]) | (out[rows] == tensor[rows])).all()
            rest = np.ones(len(tensor), bool)
            rest[rows] = False
            assert (out[rest] == tensor[rest]).all()

    mutate_while(indices, [bad, good], calls)
