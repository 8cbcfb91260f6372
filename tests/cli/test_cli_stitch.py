"""ndx dynamic_stitch and dynamic_partition end to end, against NumPy references."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import (ALL_DTYPES, INDEX_DTYPES, Folder, check, check_same, error_of, main,  # noqa: E402
                     random_array, ref_dynamic_partition, ref_dynamic_stitch, run)


def stitch(f, pairs, expect=0):
    files = []
    for m, (idx, data) in enumerate(pairs):
        files += [f.save(f"i{m}.npy", idx), f.save(f"d{m}.npy", data)]
    p = run("dynamic_stitch", "-o", f.path("out.npy"), *files, expect=expect)
    return f.load("out.npy") if expect == 0 else p


def partition(f, data, parts, n, *flags, expect=0):
    p = run("dynamic_partition", f.save("data.npy", data), f.save("parts.npy", parts),
            "--num-partitions", n, "-o", f.path("part"), *flags, expect=expect)
    if expect != 0:
        return p
    return [f.load(f"part.{k}.npy") for k in range(n)]


def test_stitch_every_dtype():
    rng = np.random.default_rng(21)
    with Folder() as f:
        for n, dtype in enumerate(ALL_DTYPES):
            # A random permutation of 0..9 split in three, plus repeats that the later pair wins.
            perm = rng.permutation(10)
            idt = INDEX_DTYPES[n % 3]
            indices = [perm[:3].astype(idt), perm[3:7].reshape(2, 2).astype(idt),
                       np.concatenate([perm[7:], perm[:2]]).astype(idt)]
            data = [random_array(rng, dtype, i.shape + (2,)) for i in indices]
            got = stitch(f, list(zip(indices, data)))
            check_same(got, ref_dynamic_stitch(indices, data), f"stitch {dtype}")


def test_stitch_scalar_index_gaps_and_empty():
    with Folder() as f:
        indices = [np.array(4, dtype=np.int32), np.array([1], dtype=np.int32)]
        data = [np.array([7.5, 8.5]), np.array([[1.0, 2.0]])]
        got = stitch(f, list(zip(indices, data)))
        check_same(got, ref_dynamic_stitch(indices, data), "scalar index, unnamed rows zero")
        got = stitch(f, [(np.zeros((0,), np.int32), np.zeros((0, 3), np.float32))])
        check(got.shape == (0, 3) and got.dtype == np.float32, f"empty stitch: {got.shape}")


def test_stitch_string_widths_differ():
    with Folder() as f:
        indices = [np.array([0]), np.array([2, 1])]
        data = [np.array([b"x"], dtype="S1"), np.array([b"hello", b""], dtype="S5")]
        got = stitch(f, list(zip(indices, data)))
        check_same(got, np.array([b"x", b"", b"hello"], dtype="S5"), "widened stitch")
        data = [np.array(["é"], dtype="U1"), np.array(["日本", "a"], dtype="U2")]
        got = stitch(f, list(zip(indices, data)))
        check_same(got, np.array(["é", "a", "日本"], dtype="U2"), "unicode stitch")
        data = [np.array(["é"], dtype="U1"), np.array([b"ab", b"a"], dtype="S2")]
        p = stitch(f, list(zip(indices, data)), expect=1)
        check("data[0]" in error_of(p) and "data[1]" in error_of(p), p.stderr)


def test_stitch_errors():
    with Folder() as f:
        out = f.path("out.npy")
        stitch(f, [(np.array([0, -1]), np.array([1, 2]))], expect=1)
        stitch(f, [(np.array([0, 1]), np.array([1, 2, 3]))], expect=1)  # shape mismatch
        stitch(f, [(np.array([0]), np.array([1])), (np.array([1]), np.array([1.0]))], expect=1)
        stitch(f, [(np.array([0.0]), np.array([1]))], expect=1)  # float indices
        # 10^15 rows of 8 bytes: over the default memory cap, a clean error.
        p = stitch(f, [(np.array([10**15]), np.array([1.0]))], expect=1)
        check("memory" in error_of(p) or "budget" in error_of(p), p.stderr)
        i0 = f.save("a.npy", np.array([0]))
        run("dynamic_stitch", "-o", out, i0, expect=2)  # a lone file: not a pair
        run("dynamic_stitch", i0, i0, expect=2)  # no -o
        check(not os.path.exists(out), "a failed stitch wrote its output")


def test_partition_every_dtype():
    rng = np.random.default_rng(22)
    with Folder() as f:
        for n, dtype in enumerate(ALL_DTYPES):
            data = random_array(rng, dtype, (4, 3, 2))
            rank = 1 + n % 2
            parts = rng.integers(0, 3, size=data.shape[:rank]).astype(INDEX_DTYPES[n % 3])
            got = partition(f, data, parts, 3)
            for k, want in enumerate(ref_dynamic_partition(data, parts, 3)):
                check_same(got[k], want, f"partition {dtype} part {k}")


def test_partition_round_trip_with_stitch():
    """The docs' example: partition values and positions, change one part, stitch back."""
    x = np.array([0.1, -1.0, 5.2, 4.3, -1.0, 7.4], dtype=np.float32)
    mask = (x != -1).astype(np.int32)
    with Folder() as f:
        parts = partition(f, x, mask, 2)
        positions = partition(f, np.arange(6, dtype=np.int32), mask, 2)
        parts[1] = parts[1] + np.float32(1)
        got = stitch(f, list(zip(positions, parts)))
        want = x.copy()
        want[mask == 1] += np.float32(1)
        check_same(got, want, "round trip")


def test_partition_scalar_empty_parts_and_one():
    with Folder() as f:
        data = np.array([[1, 2], [3, 4]], dtype=np.uint16)
        got = partition(f, data, np.array(1, dtype=np.int32), 3)
        check_same(got[1], data[None], "scalar partitions: the whole tensor")
        check(got[0].shape == (0, 2, 2) and got[2].shape == (0, 2, 2), "empty parts")
        got = partition(f, data, np.array([0, 0]), 1)
        check_same(got[0], data, "one partition")


def test_partition_errors():
    with Folder() as f:
        data = np.arange(4)
        for n, parts, code in ((2, np.array([0, 1, 2, 0]), 1),  # id 2 outside [0, 2)
                               (2, np.array([0, 1, -1, 0]), 1),
                               (0, np.array([0, 0, 0, 0]), 1),  # num_partitions 0
                               (-3, np.array([0, 0, 0, 0]), 1),
                               (2, np.array([0, 1]), 1),  # shape mismatch
                               (2, np.array([0.0, 1, 0, 1]), 1)):
            p = partition(f, data, parts, n, expect=code)
            check("dynamic_partition" in error_of(p), p.stderr)
        check(sorted(x for x in f.listing() if x.startswith("part.")) == [],
              f"failed partitions wrote files: {f.listing()}")
        d, q = f.path("data.npy"), f.path("parts.npy")
        run("dynamic_partition", d, q, "--num-partitions", "two", "-o", f.path("part"), expect=2)
        run("dynamic_partition", d, q, "-o", f.path("part"), expect=2)
        run("dynamic_partition", d, q, "--num-partitions", "2", expect=2)


main(globals())
