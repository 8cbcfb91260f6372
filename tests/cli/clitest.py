"""clitest.py — what the end-to-end tests of the ndx command share: running it, checking exit
codes and the one-line error contract, temporary folders, random arrays of every dtype, and NumPy
references for the ops (plain loops, independent of ndx).

Each test file calls main(globals()) at the bottom: every function named test_* runs once, and
the run ends with the line 'N passed, N failed'."""

import os
import subprocess
import sys
import tempfile
import traceback
import warnings

import numpy as np

NDX = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None

# Dtypes the .npy files can carry, one of each kind ndx handles.
NUMERIC_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "complex64", "complex128"]
STRING_DTYPES = ["S5", "U3"]
ALL_DTYPES = NUMERIC_DTYPES + STRING_DTYPES
INDEX_DTYPES = ["int16", "int32", "int64"]


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def run(*args, expect=0, cwd=None, preexec_fn=None, stdin=None):
    """Runs ndx with args; checks the exit code and, for 1, that stderr is exactly one line
    starting 'ndx: error: '; for 2, that it starts so and points at --help. Returns the
    CompletedProcess (text mode)."""
    cmd = [NDX] + [str(a) for a in args]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, preexec_fn=preexec_fn,
                       stdin=subprocess.DEVNULL if stdin is None else stdin, timeout=120)
    desc = "ndx " + " ".join(str(a) for a in args)
    check(p.returncode == expect,
          f"{desc}: exit {p.returncode}, expected {expect}\nstdout: {p.stdout[-2000:]}\n"
          f"stderr: {p.stderr[-2000:]}")
    if expect == 1:
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and lines[0].startswith("ndx: error: ") and len(lines[0]) > 13,
              f"{desc}: stderr should be one 'ndx: error:' line, got {p.stderr!r}")
    elif expect == 2:
        check(p.stderr.startswith("ndx: error: ") and "--help" in p.stderr,
              f"{desc}: a usage error should say what and point at --help, got {p.stderr!r}")
    elif expect == 0:
        check(p.stderr == "", f"{desc}: succeeded but wrote to stderr: {p.stderr!r}")
    return p


def error_of(p):
    return p.stderr.strip()[len("ndx: error: "):]


class Folder:
    """A temporary folder; path(name) gives a file in it, save/load go through NumPy."""

    def __init__(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ndx-cli-")
        self.dir = self._tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        p = self.path(name)
        np.save(p, array, allow_pickle=False)
        return p

    def savez(self, name, compressed=False, **arrays):
        p = self.path(name)
        (np.savez_compressed if compressed else np.savez)(p, **arrays)
        return p

    def load(self, name):
        return np.load(self.path(name), allow_pickle=False)

    def listing(self):
        return sorted(os.listdir(self.dir))

    def close(self):
        self._tmp.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- random inputs ------------------------------------------------------------------------------

def random_array(rng, dtype, shape):
    """Random values exact in every dtype (small integers for arithmetic, so float16 sums are
    exact), NaN-free; strings of printable and non-ASCII characters, sometimes empty."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        lo = -50 if dtype.kind == "i" else 0
        return rng.integers(lo, 50, size=shape).astype(dtype)
    if dtype.kind == "f":
        return (rng.integers(-64, 64, size=shape) / 4).astype(dtype)
    if dtype.kind == "c":
        re = rng.integers(-20, 20, size=shape) / 2
        im = rng.integers(-20, 20, size=shape) / 2
        return (re + 1j * im).astype(dtype)
    if dtype.kind == "S":
        width = dtype.itemsize
        out = []
        for _ in range(n):
            k = int(rng.integers(0, width + 1))
            out.append(bytes(int(b) for b in rng.integers(1, 256, size=k)))
        return np.array(out, dtype=dtype).reshape(shape)
    if dtype.kind == "U":
        width = dtype.itemsize // 4
        alphabet = "abcxyzé日本ß€😀"
        out = []
        for _ in range(n):
            k = int(rng.integers(0, width + 1))
            out.append("".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), size=k)))
        return np.array(out, dtype=dtype).reshape(shape)
    raise ValueError(dtype)


def random_indices(rng, dtype, shape, high):
    """Indices in [0, high) (high may be a sequence, one bound per last-axis position)."""
    return rng.integers(0, np.asarray(high), size=shape).astype(dtype)


def same(a, b):
    """Same shape and values, NaNs equal; dtypes compared by the caller where they matter."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def check_same(got, want, what, dtype=True):
    check(same(got, want), f"{what}: got\n{got!r}\nexpected\n{want!r}")
    if dtype:
        check(got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}")


# ---- NumPy references (plain loops) --------------------------------------------------------------

def ref_gather_nd(params, indices, batch_dims=0, zero_bad=False):
    params, indices = np.asarray(params), np.asarray(indices)
    if batch_dims > 0:
        parts = [ref_gather_nd(params[b], indices[b], batch_dims - 1, zero_bad)
                 for b in range(indices.shape[0])]
        return np.stack(parts) if parts else np.empty(
            indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:], params.dtype)
    depth = indices.shape[-1]
    slice_shape = params.shape[depth:]
    rows = indices.reshape(-1, depth)
    out = np.zeros((rows.shape[0],) + slice_shape, dtype=params.dtype)
    for r, row in enumerate(rows):
        if all(0 <= int(v) < params.shape[k] for k, v in enumerate(row)):
            out[r] = params[tuple(int(v) for v in row)]
        elif not zero_bad:
            raise IndexError(row)
    return out.reshape(indices.shape[:-1] + slice_shape)


def _combine(op, cur, upd):
    if op == "update":
        return upd
    if op == "add":
        return cur + upd
    if op == "sub":
        return cur - upd
    if op == "min":  # std::min(cur, upd): upd only when strictly smaller (NaN updates ignored)
        return np.where(upd < cur, upd, cur)
    if op == "max":  # std::max(cur, upd): upd only when cur is strictly smaller
        return np.where(cur < upd, upd, cur)
    raise ValueError(op)


def ref_tensor_scatter(op, tensor, indices, updates, skip_bad=False):
    # Strings have no width in TensorFlow: the result is as wide as the wider input.
    dtype = np.result_type(tensor.dtype, updates.dtype) if tensor.dtype.kind in "SU" else None
    out = np.array(tensor, dtype=dtype, copy=True)
    depth = indices.shape[-1]
    rows = indices.reshape(-1, depth)
    ups = updates.reshape((rows.shape[0],) + tensor.shape[depth:])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for r, row in enumerate(rows):
            if not all(0 <= int(v) < tensor.shape[k] for k, v in enumerate(row)):
                if skip_bad:
                    continue
                raise IndexError(row)
            at = tuple(int(v) for v in row)
            cur = np.asarray(out[at])
            out[at] = _combine(op, cur, np.asarray(ups[r]).astype(out.dtype))
    return out


def ref_scatter_nd(indices, updates, shape):
    """Zeros of `shape`, duplicates combined with the type's add: sum, OR, concatenation."""
    shape = tuple(shape)
    depth = indices.shape[-1]
    rows = indices.reshape(-1, depth)
    ups = updates.reshape((rows.shape[0],) + shape[depth:])
    if updates.dtype.kind in "SU":
        empty = b"" if updates.dtype.kind == "S" else ""
        out = np.full(shape, empty, dtype=object)
        for r, row in enumerate(rows):
            at = tuple(int(v) for v in row)
            dst = out[at] if depth < len(shape) else None
            if depth == len(shape):
                out[at] = out[at] + ups[r].item()
            else:
                flat_dst = dst.reshape(-1)
                flat_up = np.asarray(ups[r]).reshape(-1)
                for k in range(flat_dst.size):
                    flat_dst[k] = flat_dst[k] + flat_up[k].item()
        return np.array(out.tolist(), dtype=updates.dtype.kind).reshape(shape)
    out = np.zeros(shape, dtype=updates.dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for r, row in enumerate(rows):
            at = tuple(int(v) for v in row)
            if updates.dtype.kind == "b":
                out[at] = np.logical_or(out[at], ups[r])
            else:
                out[at] = out[at] + ups[r]
    return out


def ref_dynamic_stitch(indices, data):
    const = data[0].shape[indices[0].ndim:]
    size = max([int(i.max()) + 1 for i in indices if i.size] + [0])
    out = np.zeros((size,) + const, dtype=data[0].dtype)
    for idx, d in zip(indices, data):
        flat_i = idx.reshape(-1)
        flat_d = d.reshape((flat_i.size,) + const)
        for k, v in enumerate(flat_i):
            out[int(v)] = flat_d[k]
    return out


def ref_dynamic_partition(data, partitions, n):
    outs = []
    for p in range(n):
        if partitions.ndim == 0:
            outs.append(data[None] if int(partitions) == p else
                        np.empty((0,) + data.shape, dtype=data.dtype))
        else:
            outs.append(data[partitions == p])
    return outs


def to_dense(indices, values, dense_shape):
    out = np.zeros(tuple(int(d) for d in dense_shape), dtype=values.dtype)
    for k, row in enumerate(indices):
        out[tuple(int(v) for v in row)] = values[k]
    return out


def ref_sparse_concat_dense(inputs, axis, expand):
    """The dense meaning of the concatenation: each input made dense, padded to the largest
    other dimensions when `expand`, then np.concatenate."""
    rank = len(inputs[0][2])
    axis = axis % rank
    dense = [to_dense(*sp) for sp in inputs]
    if expand:
        big = [max(int(sp[2][d]) for sp in inputs) for d in range(rank)]
        padded = []
        for a in dense:
            pad = [(0, 0 if d == axis else big[d] - a.shape[d]) for d in range(rank)]
            padded.append(np.pad(a, pad, constant_values=a.dtype.type()))  # b"" for strings
        dense = padded
    return np.concatenate(dense, axis=axis)


# ---- the runner ----------------------------------------------------------------------------------

def main(namespace):
    if NDX is None or not os.access(NDX, os.X_OK):
        print("usage: python3 test_X.py PATH_TO_NDX", file=sys.stderr)
        sys.exit(2)
    tests = [(name, fn) for name, fn in namespace.items()
             if name.startswith("test_") and callable(fn)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
            print(f"ok   {name}")
        except Exception:  # every failure is reported, then the next test runs
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
