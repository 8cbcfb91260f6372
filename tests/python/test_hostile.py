"""Hostile input for the Python module, in the spirit of tests/ops/test_advisories.c: wrong types,
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
# Run in a child interpreter: reading an index after checking it would fault, and a fault must
# fail these tests only, not end the run.

CONCURRENT_SETUP = """
import threading
import numpy as np, ndx

def gather_rows(params, rows):
    return np.array([params[int(r)] for r in rows], dtype=params.dtype).reshape(
        (len(rows),) + params.shape[1:])

def mutate_while(target, states, calls):
    # Runs calls() while a thread keeps writing each of `states` into `target` in turn.
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
"""


@pytest.mark.parametrize("bad_indices", ["error", "ignore"])
def test_gather_while_another_thread_rewrites_indices(bad_indices):
    out = run_child(CONCURRENT_SETUP + f"""
bad_indices = {bad_indices!r}
rng = np.random.default_rng(3)
params = rng.standard_normal((1000, 4)).astype(np.float32)
good = rng.integers(0, 1000, (4096, 1))
bad = good.copy()
bad[::7] = 10**12  # far out of range: reading it unchecked would fault
indices = good.copy()
want = gather_rows(params, good[:, 0])
outcomes = dict(ok=0, refused=0)

def calls():
    for _ in range(400):
        try:
            got = ndx.gather_nd(params, indices, bad_indices=bad_indices)
        except ndx.InvalidArgumentError as e:
            assert bad_indices == "error" and "indices" in str(e)
            outcomes["refused"] += 1
            continue
        outcomes["ok"] += 1
        # Each row is the row of the good index, or zeros for the bad one (ignore).
        right = (got == want).all(axis=1)
        if bad_indices == "ignore":
            right |= (got == 0).all(axis=1)
        assert right.all(), np.flatnonzero(~right)[:5]

mutate_while(indices, [bad, good], calls)
print(outcomes["ok"] + outcomes["refused"])
""")
    assert out.split() == ["400"]


def test_scatter_while_another_thread_rewrites_indices():
    out = run_child(CONCURRENT_SETUP + """
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
rows = good[:, 0]
rest = np.ones(len(tensor), bool)
rest[rows] = False
done = 0

def calls():
    global done
    for k in range(100):
        out = np.full_like(tensor, 7.0)
        mode = "skip" if k % 2 else "error"
        try:
            assert ndx.tensor_scatter_nd_add(tensor, indices, updates, out=out,
                                             bad_indices=mode) is out
        except ndx.InvalidArgumentError:
            assert mode == "error" and (out == 7.0).all()  # refused: out untouched
            done += 1
            continue
        # Each target row got its update or (skipped as bad) not; other rows are tensor's.
        assert (np.isclose(out[rows], applied[rows]) | (out[rows] == tensor[rows])).all()
        assert (out[rest] == tensor[rest]).all()
        done += 1

mutate_while(indices, [bad, good], calls)
print(done)
""")
    assert out.split() == ["100"]


def test_stitch_and_partition_while_another_thread_rewrites_indices():
    out = run_child(CONCURRENT_SETUP + """
rng = np.random.default_rng(5)
n = 6000
good = rng.permutation(n)
bad = good.copy()
bad[::11] = -5  # negative: refused when read, out of bounds when written unread
indices = good.copy()
data = rng.standard_normal((n, 2))
want = np.empty_like(data)
want[good] = data  # a permutation: the stitch is the inverse scatter
ids_good = rng.integers(0, 3, n)
ids_bad = ids_good.copy()
ids_bad[::13] = 7  # num_partitions is 3
ids = ids_good.copy()
want_parts = [data[ids_good == p] for p in range(3)]
done = 0

def calls():
    global done
    for k in range(200):
        try:
            got = ndx.dynamic_stitch([indices], [data])
            assert got.shape == want.shape and (got == want).all()
        except ndx.InvalidArgumentError as e:
            assert "indices" in str(e)
        try:
            parts = ndx.dynamic_partition(data, ids, 3)
            assert all(g.shape == w.shape and (g == w).all() for g, w in zip(parts, want_parts))
        except ndx.InvalidArgumentError as e:
            assert "partitions" in str(e)
        done += 1

mutate_while(indices, [bad, good], lambda: mutate_while(ids, [ids_bad, ids_good], calls))
print(done)
""")
    assert out.split() == ["200"]


# ---- every integer argument: huge, negative, of the wrong kind --------------------------------

PARAMS = np.arange(12.0).reshape(4, 3)
SP = ndx.SparseTensor([[0], [2]], np.array([1.0, 2.0]), [3])

# (name, call taking the value) for every integer argument of every op.
INTEGER_ARGUMENTS = [
    ("batch_dims", lambda v: ndx.gather_nd(PARAMS, [[1]], batch_dims=v)),
    ("num_partitions", lambda v: ndx.dynamic_partition(np.arange(3.0), [0, 0, 0], v)),
    ("axis", lambda v: ndx.sparse.concat(v, [SP, SP])),
] + [(keyword, lambda v, call=call, keyword=keyword: call(**{keyword: v}))
     for keyword in ("threads", "max_memory")
     for call in (lambda **k: ndx.gather_nd(PARAMS, [[1]], **k),
                  lambda **k: ndx.scatter_nd([[1]], [5.0], [3], **k),
                  lambda **k: ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], [1.0], **k),
                  lambda **k: ndx.dynamic_stitch([[0]], [[1.0]], **k),
                  lambda **k: ndx.dynamic_partition(np.arange(3.0), [0, 1, 0], 2, **k),
                  lambda **k: ndx.sparse.concat(0, [SP], **k),
                  lambda **k: ndx.sparse.reorder(SP, **k),
                  lambda **k: ndx.sparse.to_dense(SP, **k),
                  lambda **k: ndx.sparse.from_dense(PARAMS, **k))]
IDS = [f"{name}-{k}" for k, (name, _) in enumerate(INTEGER_ARGUMENTS)]


@pytest.mark.parametrize("name,call", INTEGER_ARGUMENTS, ids=IDS)
@pytest.mark.parametrize("value", [1.5, "2", b"2", [1], np.float64(1.0), True, object()],
                         ids=repr)
def test_integer_arguments_of_the_wrong_kind(name, call, value):
    with pytest.raises(TypeError, match=rf"\b{name} must be an integer"):
        call(value)


@pytest.mark.parametrize("name,call", INTEGER_ARGUMENTS, ids=IDS)
@pytest.mark.parametrize("value", [-2**63 - 1, -2**31 - 1, -(10**9), np.int64(-2**63)], ids=repr)
def test_integer_arguments_hugely_negative(name, call, value):
    with pytest.raises(ndx.InvalidArgumentError, match=rf"\b{name} must be"):
        call(value)


@pytest.mark.parametrize("name,call", INTEGER_ARGUMENTS, ids=IDS)
@pytest.mark.parametrize("value", [2**31, 2**63, 2**64, 10**30, np.uint64(2**63)], ids=repr)
def test_integer_arguments_huge(name, call, value):
    if name in ("threads", "max_memory"):  # counts with no upper bound: right results
        want = call(None)
        got = call(value)
        got, want = (x.values if isinstance(x, ndx.SparseTensor) else x for x in (got, want))
        if isinstance(got, list):
            assert all((a == b).all() for a, b in zip(got, want))
        else:
            assert (np.asarray(got) == np.asarray(want)).all()
        return
    with pytest.raises(ndx.InvalidArgumentError, match=rf"\b{name} must be between"):
        call(value)


def test_integer_arguments_take_numpy_integers():
    for value in (np.int64(1), np.uint64(1), np.int8(1), np.uint16(1)):  # (np.uint64 was refused)
        assert ndx.gather_nd(np.arange(6).reshape(2, 3), [[1], [0]], batch_dims=value).tolist() \
            == [1, 3]
        assert [p.tolist() for p in ndx.dynamic_partition(np.arange(3), [0, 0, 0], value)] \
            == [[0, 1, 2]]
        assert ndx.gather_nd(PARAMS, [[1]], threads=value, max_memory=type(value)(100)).tolist() \
            == [PARAMS[1].tolist()]


def test_threads_above_the_librarys_most_are_taken():
    rng = np.random.default_rng(8)
    params = rng.standard_normal((5000, 4))
    rows = rng.integers(0, 5000, 3000)
    want = gather_rows(params, rows)
    for threads in (256, 257, 10**9, 2**63):  # (10**9 said "must be a positive count")
        assert (ndx.gather_nd(params, rows[:, None], threads=threads) == want).all()


def test_max_memory_means_the_same_as_in_c_and_on_the_command_line():
    # None and 0: no limit; n > 0: at most n bytes allocated by the library.
    x = np.arange(4000.0).reshape(-1, 1)
    rows = np.arange(3999, -1, -1).reshape(-1, 1)
    for unlimited in (None, 0):
        assert (ndx.gather_nd(x, rows, max_memory=unlimited)[:, 0] == x[::-1, 0]).all()
    with pytest.raises(ndx.OutOfMemoryError, match="max_memory"):
        ndx.gather_nd(x, rows, max_memory=31999)  # the result is 32000 bytes
    assert ndx.gather_nd(x, rows, max_memory=32000).shape == (4000, 1)


def test_index_values_huge_and_negative():
    for bad in (2**63 - 1, -2**63, 2**31, -1, 4):
        indices = np.array([[1], [bad]], np.int64)
        with pytest.raises(ndx.InvalidArgumentError, match="indices"):
            ndx.gather_nd(PARAMS, indices)
        out = np.full(4, 9.0)
        with pytest.raises(ndx.InvalidArgumentError, match="indices"):
            ndx.tensor_scatter_nd_update(np.zeros(4), indices, [1.0, 2.0], out=out)
        assert (out == 9.0).all()
        with pytest.raises(ndx.InvalidArgumentError):
            ndx.dynamic_partition(np.arange(2.0), indices[:, 0], 4)
        if bad == 4:  # in range for a stitch: the output has 5 rows
            assert ndx.dynamic_stitch([indices[:, 0]], [[1.0, 2.0]]).tolist() == [0, 1, 0, 0, 2]
        elif bad >= 0:  # a huge stitch index asks for a huge output: refused before allocating
            with pytest.raises((ndx.InvalidArgumentError, ndx.OutOfMemoryError)):
                ndx.dynamic_stitch([indices[:, 0]], [[1.0, 2.0]], max_memory=1 << 30)
        else:
            with pytest.raises(ndx.InvalidArgumentError):
                ndx.dynamic_stitch([indices[:, 0]], [[1.0, 2.0]])


@pytest.mark.parametrize("shape", [[-1], [2**62, 2**62], [2**63 - 1], [3, -5], [2**40, 2**40]])
def test_scatter_nd_shapes_huge_and_negative(shape):
    indices = np.zeros((0, len(shape)), np.int64)  # no updates: only the shape can be wrong
    with pytest.raises((ndx.InvalidArgumentError, ndx.OutOfMemoryError)):
        ndx.scatter_nd(indices, np.zeros((0,)), shape)


class DuckSparse:
    """A SparseTensor by its three parts, as the sparse ops take one (no checks on the way in)."""

    def __init__(self, indices):
        self.indices, self.values, self.dense_shape = indices, np.array([1.0]), np.array([3])


# Index values int64 cannot hold, in each form a caller may pass them: a Python list (NumPy
# gives it an object array, a uint64 array, or float64 when negatives sit beside 2**63), and a
# NumPy object array. Each was a TypeError about object arrays and bytes, or about uint64 and
# float32 dtypes, though the caller passed integers.
HUGE = {"2**70": (2**70, lambda v: [[v]]),
        "-2**63-1": (-2**63 - 1, lambda v: [[v]]),
        "2**63": (2**63, lambda v: [[v]]),
        "2**64-1": (2**64 - 1, lambda v: [[0], [v]]),
        "-1,2**63": (2**63, lambda v: [[-1], [v]]),
        "object array": (2**70, lambda v: np.array([[v]], dtype=object)),
        "object array, small beside": (2**65, lambda v: np.array([[1], [v]], dtype=object))}



def flat(x):
    """The rows of HUGE's [[v], ...] as one vector, in the same form (a list or an array)."""
    return x.ravel() if isinstance(x, np.ndarray) else [v for row in x for v in row]


# (op, argument, call taking the index tensor) for every argument that holds indices.
INDEX_ARGUMENTS = [
    ("gather_nd", "indices", lambda x: ndx.gather_nd(PARAMS, x)),
    ("scatter_nd", "indices", lambda x: ndx.scatter_nd(x, [5.0], [3])),
    ("scatter_nd", "shape", lambda x: ndx.scatter_nd([[1]], [5.0], flat(x))),
] + [(f"tensor_scatter_nd_{k}", "indices",
      lambda x, k=k: getattr(ndx, f"tensor_scatter_nd_{k}")(np.zeros(3), x, [1.0]))
     for k in ("update", "add", "sub", "min", "max")] + [
    ("dynamic_stitch", r"indices\[1\]", lambda x: ndx.dynamic_stitch([[0], x], [[1.0], [2.0]])),
    ("parallel_dynamic_stitch", r"indices\[0\]",
     lambda x: ndx.parallel_dynamic_stitch([x], [[1.0]])),
    ("dynamic_partition", "partitions", lambda x: ndx.dynamic_partition(np.arange(1.0), x, 2)),
    ("sparse_concat", r"sp_inputs\[1\]\.indices",
     lambda x: ndx.sparse.concat(0, [SP, DuckSparse(x)])),
    ("sparse_reorder", r"sp_input\.indices", lambda x: ndx.sparse.reorder(DuckSparse(x))),
    ("sparse_to_dense", r"sp_input\.indices", lambda x: ndx.sparse.to_dense(DuckSparse(x))),
    ("SparseTensor", "indices", lambda x: ndx.SparseTensor(x, [1.0] * len(x), [3])),
    ("SparseTensor", "dense_shape", lambda x: ndx.SparseTensor([[0]], [1.0], flat(x))),
]


@pytest.mark.parametrize("op,what,call", INDEX_ARGUMENTS,
                         ids=[f"{op}-{k}" for k, (op, _, _) in enumerate(INDEX_ARGUMENTS)])
@pytest.mark.parametrize("form", list(HUGE))
def test_index_values_out_of_int64_named(op, what, call, form):
    # TensorFlow refuses a Python int int64 cannot hold with a ValueError; ndx raises
    # InvalidArgumentError (a ValueError), naming the op, the argument and the value.
    value, make = HUGE[form]
    with pytest.raises(ndx.InvalidArgumentError,
                       match=rf"^{op}: {what}: the integer {value} is out of int64's range$"):
        call(make(value))


@pytest.mark.parametrize("form", list(HUGE))
def test_index_values_out_of_int64_change_nothing(form):
    value, make = HUGE[form]
    for k in ("update", "add", "sub", "min", "max"):
        tensor = np.arange(4.0)
        out = np.full(4, 5.0)
        with pytest.raises(ndx.InvalidArgumentError, match="indices: .* out of int64's range"):
            getattr(ndx, f"tensor_scatter_nd_{k}")(tensor, make(value), [1.0], out=out)
        with pytest.raises(ndx.InvalidArgumentError, match="indices: .* out of int64's range"):
            getattr(ndx, f"tensor_scatter_nd_{k}")(tensor, make(value), [1.0], out=tensor)
        assert (out == 5.0).all() and tensor.tolist() == [0.0, 1.0, 2.0, 3.0], k
    var, accum = np.arange(4.0), np.ones(4)
    grad = np.ones(len(make(value)))
    with pytest.raises(ndx.InvalidArgumentError,
                       match=rf"^sparse_apply_sgd: indices: the integer {value} is out of "):
        ndx.sparse_apply_sgd(var, 0.5, grad, flat(make(value)))
    with pytest.raises(ndx.InvalidArgumentError,
                       match=rf"^sparse_apply_adagrad: indices: the integer {value} is out of "):
        ndx.sparse_apply_adagrad(var, accum, 0.5, grad, flat(make(value)))
    assert var.tolist() == [0.0, 1.0, 2.0, 3.0] and accum.tolist() == [1.0] * 4


def test_python_ints_past_int64_convert_as_tensorflow_converts_them():
    # Values beside them decide: floats make floats (TensorFlow's float32 by default), a uint64
    # tensor takes what fits uint64; integers alone must fit int64 (a ValueError in TensorFlow).
    assert ndx.gather_nd([1.5, 2**70], [[1]]).tolist() == [np.float32(2.0**70)]
    assert ndx.gather_nd([1.5, 2**70], [[1]]).dtype == np.float32
    assert ndx.tensor_scatter_nd_add(np.zeros(2), [[1]], [2**70]).tolist() == [0.0, 2.0**70]
    got = ndx.tensor_scatter_nd_update(np.zeros(2, np.uint64), [[1]], [2**64 - 1])
    assert got.dtype == np.uint64 and got.tolist() == [0, 2**64 - 1]
    with pytest.raises(ndx.InvalidArgumentError,
                       match=r"^tensor_scatter_nd_add: updates: the integer 18446744073709551616 "
                             r"is out of uint64's range$"):
        ndx.tensor_scatter_nd_add(np.zeros(2, np.uint64), [[1]], [2**64])
    with pytest.raises(ndx.InvalidArgumentError,
                       match=r"^gather_nd: params: the integer 9223372036854775808 is out of "
                             r"int64's range$"):
        ndx.gather_nd([2**63], [[0]])  # (was a uint64 array, which TensorFlow never makes)
    with pytest.raises(ndx.InvalidArgumentError, match=r"^tensor_scatter_nd_add: updates: .* "
                                                       r"out of int64's range$"):
        ndx.tensor_scatter_nd_add(np.zeros(2, np.int64), [[1]], [-1, 2**63])
    assert ndx.gather_nd([-2**63, 2**63 - 1], [[1], [0]]).tolist() == [2**63 - 1, -2**63]
    with pytest.raises(TypeError, match="object arrays must hold bytes or str, not int"):
        ndx.gather_nd(PARAMS, np.array([[1]], dtype=object))  # small ints: as before


# ---- wrong types and broken array protocols -----------------------------------------------------

class ArrayRaises:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("broken __array__")


class ArrayNotAnArray:
    def __array__(self, dtype=None, copy=None):
        return 5


class ArrayOfObjects:
    def __array__(self, dtype=None, copy=None):
        return np.array([object(), object()])


class InterfaceLies:
    __array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0, False), "version": 3}


class InterfaceBadType:
    __array_interface__ = {"shape": (2,), "typestr": "<q99", "data": (0, False), "version": 3}


class InterfaceNotADict:
    __array_interface__ = 7


class DlpackRaises:
    def __dlpack__(self, stream=None):
        raise BufferError("broken __dlpack__")

    def __dlpack_device__(self):
        return (1, 0)


class DlpackNotACapsule:
    def __dlpack__(self, stream=None):
        return "not a capsule"

    def __dlpack_device__(self):
        return (1, 0)


class DlpackOnAGpu:
    def __dlpack__(self, stream=None):
        raise AssertionError("ndx must not ask a GPU tensor for its data")

    def __dlpack_device__(self):
        return (2, 0)


class LenLies:
    def __len__(self):
        return 10**12

    def __getitem__(self, i):
        raise IndexError(i)


HOSTILE = [ArrayRaises(), ArrayNotAnArray(), ArrayOfObjects(), InterfaceLies(), InterfaceBadType(),
           InterfaceNotADict(), DlpackRaises(), DlpackNotACapsule(), DlpackOnAGpu(), LenLies(),
           {"a": 1}, object(), lambda: 0, None, "text", b"bytes", 1 + 2j, np.array(1.5)]

# (argument, call taking the hostile object) for every tensor argument of every op.
TENSOR_ARGUMENTS = [
    ("params", lambda x: ndx.gather_nd(x, [[1]])),
    ("indices", lambda x: ndx.gather_nd(PARAMS, x)),
    ("indices", lambda x: ndx.scatter_nd(x, [5.0], [3])),
    ("updates", lambda x: ndx.scatter_nd([[1]], x, [3])),
    ("shape", lambda x: ndx.scatter_nd([[1]], [5.0], x)),
    ("tensor", lambda x: ndx.tensor_scatter_nd_add(x, [[1]], np.array([1.0]))),
    ("indices", lambda x: ndx.tensor_scatter_nd_add(np.zeros(3), x, [1.0])),
    ("updates", lambda x: ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], x)),
    ("indices", lambda x: ndx.dynamic_stitch([x], [[1.0]])),
    ("data", lambda x: ndx.dynamic_stitch([[0]], [x])),
    ("data", lambda x: ndx.dynamic_partition(x, [0], 1)),
    ("partitions", lambda x: ndx.dynamic_partition(np.arange(1.0), x, 1)),
    ("tensor", lambda x: ndx.sparse.from_dense(x)),
    ("default_value", lambda x: ndx.sparse.to_dense(SP, default_value=x)),
]


@pytest.mark.parametrize("what,call", TENSOR_ARGUMENTS,
                         ids=[f"{w}-{k}" for k, (w, _) in enumerate(TENSOR_ARGUMENTS)])
def test_hostile_objects_as_tensors(what, call):
    for obj in HOSTILE:
        try:
            got = call(obj)
        except (TypeError, ValueError, MemoryError, BufferError, RuntimeError) as e:
            if type(e) in (TypeError, ValueError, MemoryError):  # ndx's own words, or named
                assert what in str(e) or isinstance(e, ndx.InvalidArgumentError), (obj, e)
            continue
        # Accepted: only a value that is a tensor of the right kind gets here; check the result.
        assert isinstance(obj, (np.ndarray, bytes, str, complex)) or \
            (obj is None and what == "default_value"), (obj, got)


def test_hostile_sparse_tensors():
    class Duck:
        def __init__(self, **parts):
            self.__dict__.update(parts)

    good = dict(indices=np.array([[0]]), values=np.array([1.0]), dense_shape=np.array([2]))
    for part in good:
        for obj in HOSTILE:
            duck = Duck(**{**good, part: obj})
            for call in (ndx.sparse.reorder, ndx.sparse.to_dense,
                         lambda s: ndx.sparse.concat(0, [s, s])):
                with pytest.raises((TypeError, ValueError, MemoryError, BufferError, RuntimeError)):
                    call(duck)
    for call in (ndx.sparse.reorder, ndx.sparse.to_dense):
        with pytest.raises(TypeError, match="sp_input must be a SparseTensor"):
            call(Duck(indices=good["indices"]))  # no values, no dense_shape
    with pytest.raises(TypeError, match="sp_inputs must be a list"):
        ndx.sparse.concat(0, SP)


def test_conversion_errors_name_the_argument():
    with pytest.raises(MemoryError, match=r"gather_nd: params: .+") as e:
        ndx.gather_nd(LenLies(), [[1]])  # (was a MemoryError with no message)
    assert str(e.value)
    with pytest.raises(ValueError, match=r"tensor_scatter_nd_add: updates: "):
        ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], ArrayNotAnArray())
    with pytest.raises(TypeError, match=r"dynamic_stitch: data\[1\]: "):
        ndx.dynamic_stitch([[0], [1]], [[1.0], ArrayOfObjects()])


def test_wrong_kinds_of_arguments_name_them():
    with pytest.raises(TypeError, match="bad_indices"):
        ndx.gather_nd(PARAMS, [[1]], bad_indices=1)
    with pytest.raises(ValueError, match="bad_indices"):
        ndx.gather_nd(PARAMS, [[1]], bad_indices="skip")  # skip is the scatters' word
    with pytest.raises(ValueError, match="bad_indices"):
        ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], [1.0], bad_indices="zero")
    with pytest.raises(TypeError, match="indices must be a list"):
        ndx.dynamic_stitch(np.array([0]), [[1.0]])
    with pytest.raises(TypeError, match="data must be a list"):
        ndx.dynamic_stitch([[0]], np.array([1.0]))
    with pytest.raises(TypeError, match="out must be a numpy array"):
        ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], [1.0], out=[0.0, 0.0, 0.0])


# ---- the bad-index vocabulary (item 8) --------------------------------------------------------

def test_bad_indices_one_vocabulary():
    indices = np.array([[1], [9]])
    want_gather = np.stack([PARAMS[1], np.zeros(3)])
    for word in ("ignore", "zero"):
        assert (ndx.gather_nd(PARAMS, indices, bad_indices=word) == want_gather).all()
    tensor = np.zeros(4)
    for word in ("ignore", "skip"):
        assert ndx.tensor_scatter_nd_add(tensor, indices, [1.0, 2.0], bad_indices=word).tolist() \
            == [0.0, 1.0, 0.0, 0.0]
        assert ndx.scatter_nd(indices, [1.0, 2.0], [4], bad_indices=word).tolist() \
            == [0.0, 1.0, 0.0, 0.0]
    for call in (lambda w: ndx.gather_nd(PARAMS, indices, bad_indices=w),
                 lambda w: ndx.tensor_scatter_nd_add(tensor, indices, [1.0, 2.0], bad_indices=w)):
        for word in ("error", None):
            with pytest.raises(ndx.InvalidArgumentError):
                call(word)


# ---- out= (item 7): right or refused, never dropped; unchanged when refused ---------------------

def test_out_that_cannot_be_written_in_place():
    t = np.array([b"a", b"b"], dtype=object)
    before = t.copy()
    with pytest.raises(TypeError, match="out"):  # was: returned t unchanged, no error
        ndx.tensor_scatter_nd_update(t, [[0]], [b"z"], out=t)
    assert t.tolist() == before.tolist()
    u = np.array(["a", "b"])
    with pytest.raises(TypeError, match="out"):
        ndx.tensor_scatter_nd_update(u, [[0]], ["z"], out=u)
    assert u.tolist() == ["a", "b"]
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], [1.0], out=readonly)
    for wrong in (np.zeros(4), np.zeros(3, np.float32), np.zeros((3, 1)),
                  ndx.bfloat16([0.0, 0.0, 0.0])):
        keep = np.array(np.asarray(wrong), copy=True)
        with pytest.raises(ndx.InvalidArgumentError, match=r"out is .* pass out=None") as e:
            ndx.tensor_scatter_nd_add(np.zeros(3), [[1]], [1.0], out=wrong)
        assert "data = NULL" not in str(e.value)
        assert (np.asarray(wrong) == keep).all()


@pytest.mark.parametrize("op", ["update", "add", "sub", "min", "max"])
def test_out_in_every_layout_is_written_right(op):
    rng = np.random.default_rng(9)
    tensor = rng.standard_normal((6, 3))
    indices = np.array([[4], [1], [4]])
    updates = rng.standard_normal((3, 3))
    want = tensor.copy()
    for r, u in zip(indices[:, 0], updates):  # the reference: TensorFlow's order, one at a time
        want[r] = {"update": lambda a, b: b, "add": np.add, "sub": np.subtract,
                   "min": np.minimum, "max": np.maximum}[op](want[r], u)
    fn = getattr(ndx, f"tensor_scatter_nd_{op}")
    big = np.zeros((12, 6))
    raw = np.zeros(6 * 3 * 8 + 1, np.uint8)
    layouts = {
        "strided": big[::2, ::2],
        "fortran": np.asfortranarray(np.zeros((6, 3))),
        "byteswapped": np.zeros((6, 3), ">f8"),
        "misaligned": raw[1:].view(np.float64).reshape(6, 3),
    }
    for name, out in layouts.items():
        assert fn(tensor, indices, updates, out=out) is out, name
        assert np.allclose(out, want), name
    assert (big[1::2] == 0).all() and (big[:, 1::2] == 0).all()  # nothing outside the view
    # out sharing memory with updates, and with tensor without being it.
    both = np.concatenate([tensor.ravel(), np.zeros(18)])
    t_view, out_view = both[:18].reshape(6, 3), both[9:27].reshape(6, 3)
    t_copy = t_view.copy()
    assert fn(t_view, indices, updates, out=out_view) is out_view
    expect = t_copy.copy()
    for r, u in zip(indices[:, 0], updates):
        expect[r] = {"update": lambda a, b: b, "add": np.add, "sub": np.subtract,
                     "min": np.minimum, "max": np.maximum}[op](expect[r], u)
    assert np.allclose(out_view, expect)


def test_out_unchanged_on_every_failure():
    out = np.full(4, 5.0)
    failures = [
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[9]], [1.0], out=out),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], [1.0, 2.0], out=out),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1.5]], [1.0], out=out),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], [1.0], out=out, threads=-1),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], [1.0], out=out, max_memory=1.5),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], [1.0], out=out, bad_indices="x"),
        lambda: ndx.tensor_scatter_nd_min(np.zeros(4, complex), [[1]], [1j], out=out),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], ArrayRaises(), out=out),
        lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[1]], [1.0], out=out[::-1] * 0 + out),
    ]
    strided = np.full(8, 5.0)[::2]
    failures.append(lambda: ndx.tensor_scatter_nd_add(np.zeros(4), [[7]], [1.0], out=strided))
    for k, f in enumerate(failures[:-2]):
        with pytest.raises(Exception):
            f()
        assert (out == 5.0).all(), k
    with pytest.raises(ndx.InvalidArgumentError):
        failures[-1]()
    assert (strided == 5.0).all()


# ---- TensorFlow 2's signatures and bfloat16 (item 9) ------------------------------------------

def test_sparse_concat_takes_both_spellings():
    a = ndx.SparseTensor([[0, 2], [2, 1]], [1.0, 2.0], [3, 3])
    b = ndx.SparseTensor([[0, 1]], [3.0], [2, 4])
    for kwargs in ({"expand_nonconcat_dims": True}, {"expand_nonconcat_dim": True}):
        c = ndx.sparse.concat(1, [a, b], **kwargs)
        assert c.dense_shape.tolist() == [3, 7]
        assert c.indices.tolist() == [[0, 2], [0, 4], [2, 1]] and c.values.tolist() == [1, 3, 2]
    c = ndx.sparse.concat(1, [a, b], True)  # positional, TensorFlow 2's order
    assert c.dense_shape.tolist() == [3, 7]
    assert ndx.sparse_concat(1, [a, b], expand_nonconcat_dim=True).dense_shape.tolist() == [3, 7]


@pytest.mark.parametrize("parts", [
    ([[0], [1]], [1.0], [3]),          # two indices, one value
    ([[0, 0]], [1.0], [3]),            # index rank 2, dense rank 1
    ([0, 1], [1.0, 2.0], [3]),         # indices not a matrix
    ([[0]], [[1.0]], [3]),             # values not a vector
    ([[5]], [1.0], [3]),               # outside dense_shape
    ([[0]], [1.0], [-3]),              # negative dim
])
def test_sparse_tensor_with_inconsistent_parts(parts):
    with pytest.raises(ndx.InvalidArgumentError) as e:
        ndx.SparseTensor(*parts)
    assert isinstance(e.value, ValueError) and "SparseTensor" in str(e.value)


class _OutOfMemory:
    """Converting it runs out of memory (a MemoryError without words, as NumPy raises)."""

    def __array__(self, *args, **kwargs):
        raise MemoryError()


@pytest.mark.parametrize("at", [0, 1, 2])
def test_sparse_tensor_names_the_part_it_could_not_convert(at):
    parts = [[[0, 1]], [1.0], [2, 2]]
    what = ["indices", "values", "dense_shape"][at]
    parts[at] = _OutOfMemory()
    with pytest.raises(MemoryError) as e:
        ndx.SparseTensor(*parts)
    assert str(e.value) == f"SparseTensor: {what}: out of memory converting it"
    with pytest.raises(MemoryError, match=r"^gather_nd: params: out of memory converting it$"):
        ndx.gather_nd(_OutOfMemory(), [[0]])  # the words every op uses
    parts[at] = [[2**70]] if at == 0 else parts[at]
    if at == 0:  # an integer past int64 still names its part
        with pytest.raises(ndx.InvalidArgumentError, match=r"^SparseTensor: indices: "):
            ndx.SparseTensor(*parts)


def test_scatter_nd_empty_shape_is_a_scalar_shape():
    got = ndx.scatter_nd(np.zeros((2, 0), np.int32), np.array([1.5, 2.0]), [])
    assert got.shape == () and got == 3.5  # both updates land on the one element
    assert ndx.scatter_nd(np.zeros((1, 0), np.int64), np.array([7], np.int32), ()).tolist() == 7


def test_bfloat16_scalars_nan_and_bits():
    one = ndx.bfloat16(1.0)
    assert one.bits.shape == () and one.bits.dtype == np.uint16 and int(one.bits) == 0x3F80
    x = ndx.bfloat16([1.0, 2.0, 3.0])
    got = ndx.tensor_scatter_nd_update(x, [[1]], [one])  # a scalar among the updates
    assert got.to_float32().tolist() == [1.0, 1.0, 3.0]
    nan = ndx.bfloat16(float("nan"))
    assert np.isnan(nan.to_float32()) and int(nan.bits) & 0x7FC0 == 0x7FC0
    assert np.isnan(ndx.bfloat16([np.nan, 1.0]).to_float32()[0])
    # bits: only a uint16 ndarray; the C side refuses anything else it might still meet.
    with pytest.raises(TypeError, match="uint16"):
        x.bits = np.array([b"ab", b"cd", b"ef"])
    with pytest.raises(TypeError, match="uint16"):
        ndx.BFloat16Array.from_bits(np.array([b"ab"]))
    assert x.to_float32().tolist() == [1.0, 2.0, 3.0]

    class Sneaky(ndx.BFloat16Array):
        __slots__ = ("fake",)

        @property
        def bits(self):
            return np.array([b"ab", b"cd"])

    s = Sneaky.__new__(Sneaky)
    with pytest.raises(TypeError, match="uint16"):
        ndx.gather_nd(s, [[0]])
    with pytest.raises(TypeError, match="uint16"):
        ndx.tensor_scatter_nd_add(x, [[0]], [1.0], out=s)


def test_bfloat16_rounds_as_the_library():
    # Against an independent rounding: nearest, ties to even, computed on integers.
    rng = np.random.default_rng(11)
    u = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(np.uint32)
    f = u.view(np.float32)
    keep = ~np.isnan(f)
    f, u = f[keep], u[keep].astype(np.uint64)
    lower, rest = u >> 16, u & 0xFFFF
    up = (rest > 0x8000) | ((rest == 0x8000) & (lower & 1 == 1))
    want = ((lower + up) & 0xFFFF).astype(np.uint16)
    assert (ndx.bfloat16(f).bits == want).all()


def test_errors_raised_by_the_callers_objects_pass_through():
    class IndexRaises:
        def __index__(self):
            raise RuntimeError("broken __index__")

    class PartRaises:
        indices = np.array([[0]])
        dense_shape = np.array([2])

        @property
        def values(self):
            raise RuntimeError("broken values")

    with pytest.raises(RuntimeError, match="broken __index__"):
        ndx.gather_nd(PARAMS, [[1]], batch_dims=IndexRaises())
    with pytest.raises(RuntimeError, match="broken __index__"):
        ndx.gather_nd(PARAMS, [[1]], threads=IndexRaises())
    with pytest.raises(RuntimeError, match="broken values"):  # (was a TypeError hiding it)
        ndx.sparse.to_dense(PartRaises())
    with pytest.raises(RuntimeError, match="broken __array__"):
        ndx.gather_nd(ArrayRaises(), [[1]])
