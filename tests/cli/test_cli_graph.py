"""ndx run and ndx graph end to end: the example graphs against NumPy computed here, sparse
fetches, all-or-nothing outputs when the second of two fetches fails, the canonical text, the
picture, and every usage and input error."""
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPLACE_MINUS_ONE = os.path.join(ROOT, "examples", "graphs", "replace_minus_one.txt")
LOOKUP = os.path.join(ROOT, "examples", "graphs", "embedding_lookup.txt")
GRAD = os.path.join(ROOT, "examples", "graphs", "embedding_grad.txt")


def write(f, name, text):
    with open(f.path(name), "w") as out:
        out.write(text)
    return f.path(name)


def test_replace_minus_one_graph_against_numpy():
    rng = np.random.default_rng(3)
    with Folder() as f:
        for n in (6, 0, 1, 1000):
            x = rng.standard_normal(n).astype(np.float32)
            x[rng.random(n) < 0.4] = -1
            if n == 6:
                x = np.float32([0.1, -1, 5.2, 4.3, -1, 7.4])  # tf.dynamic_stitch's own input
            np.save(f.path("x.npy"), x)
            run("run", REPLACE_MINUS_ONE, "--feed", "x=" + f.path("x.npy"), "--fetch",
                "y=" + f.path("y.npy"), "--threads", 1 + n % 3)
            want = np.where(x != np.float32(-1), x + np.float32(1), x)
            check_same(np.load(f.path("y.npy")), want, f"replace -1 entries on {n} elements")


def test_embedding_lookup_against_numpy():
    rng = np.random.default_rng(4)
    with np.load(LOOKUP[:-4] + ".npz") as z:
        table = np.empty((20, 8), np.float32)
        table[0::2], table[1::2] = z["shard0"], z["shard1"]
    with Folder() as f:
        for n in (5, 0, 300):
            ids = rng.integers(0, 20, size=(n, 1)).astype(np.int64)
            np.save(f.path("ids.npy"), ids)
            run("run", LOOKUP, "--feed", f"ids={f.path('ids.npy')}", "--fetch",
                f"embeddings={f.path('e.npy')}")
            check_same(np.load(f.path("e.npy")), table[ids[:, 0]], f"lookup of {n} ids")
        # an id past the table: the shard's gather refuses it, naming node and line
        np.save(f.path("ids.npy"), np.array([[3], [41]], np.int64))
        p = run("run", LOOKUP, "--feed", f"ids={f.path('ids.npy')}", "--fetch",
                f"embeddings={f.path('bad.npy')}", expect=1)
        check("embedding_lookup.txt:13: found1: gather_nd: indices[1] = [20] is out of range"
              in error_of(p), p.stderr)
        check(not os.path.exists(f.path("bad.npy")), "a failed run wrote its output")


def test_sparse_fetch_and_intermediate_feed():
    graph = ("ndx-graph 1\n"
             "x = Placeholder() : int16[?, ?]\n"
             "sp = DenseToSparse(x) : int64[?, 2], int16[?], int64[2]\n"
             "dense = SparseToDense(sp, sp:1, sp:2) : int16[?, ?]\n")
    rng = np.random.default_rng(5)
    with Folder() as f:
        g = write(f, "g.txt", graph)
        x = rng.integers(-2, 3, size=(4, 5)).astype(np.int16)
        np.save(f.path("x.npy"), x)
        run("run", g, "--feed", "x=" + f.path("x.npy"), "--fetch", "sp=" + f.path("sp.npz"),
            "--fetch", "dense=" + f.path("d.npy"), "--fetch", "sp:1=" + f.path("v.npy"))
        with np.load(f.path("sp.npz")) as z:
            nz = np.nonzero(x)
            check_same(z["indices"], np.stack(nz, axis=1).astype(np.int64), "indices")
            check_same(z["values"], x[nz], "values")
            check_same(z["dense_shape"], np.int64([4, 5]), "dense_shape")
        check_same(np.load(f.path("d.npy")), x, "dense round trip")
        check_same(np.load(f.path("v.npy")), x[np.nonzero(x)], "one output of the sparse node")
        # feeding an intermediate: the values only, through sparse_to_dense
        np.save(f.path("vals.npy"), x[np.nonzero(x)] * 2)
        run("run", g, "--feed", "x=" + f.path("x.npy"), "--feed", "sp:1=" + f.path("vals.npy"),
            "--fetch", "dense=" + f.path("d2.npy"))
        check_same(np.load(f.path("d2.npy")), x * 2, "a fed intermediate")
        # a sparse fetch needs a sparse node
        p = run("run", g, "--feed", "x=" + f.path("x.npy"), "--fetch", "dense=" + f.path("d.npz"),
                expect=1)
        check("only a sparse node" in error_of(p), p.stderr)


def test_long_names_and_fed_constants():
    """Names past the old 255-byte limit of --feed/--fetch work (the graph's limit is 4,096
    bytes); a fed Const replaces its value in everything computed from it, folded or not."""
    long_x, long_y = "x" * 400, "scope/" + "y" * 400
    with Folder() as f:
        g = write(f, "g.txt", "ndx-graph 1\n"
                  f"{long_x} = Placeholder() : int32[2]\n"
                  "c = Const() value=[2] : int32[]\n"
                  "three = Const() value=[3] : int32[]\n"
                  "y = Mul(c, three) : int32[]\n"
                  f"{long_y} = Mul({long_x}, y) : int32[2]\n")
        np.save(f.path("x.npy"), np.int32([1, -4]))
        np.save(f.path("c.npy"), np.int32(5))
        run("run", g, "--feed", f"{long_x}={f.path('x.npy')}", "--fetch",
            f"{long_y}={f.path('out.npy')}")
        check_same(np.load(f.path("out.npy")), np.int32([6, -24]), "built value of c")
        run("run", g, "--feed", f"{long_x}={f.path('x.npy')}", "--feed", f"c={f.path('c.npy')}",
            "--fetch", f"{long_y}={f.path('out.npy')}", "--fetch", f"y={f.path('y.npy')}")
        check_same(np.load(f.path("out.npy")), np.int32([15, -60]), "c fed 5")
        check_same(np.load(f.path("y.npy")), np.int32(15), "folded y with c fed 5")


def test_all_or_nothing():
    graph = ("ndx-graph 1\n"
             "x = Placeholder() : int32[?]\n"
             "one = Const() value=[1] : int32[]\n"
             "a = AddV2(x, one) : int32[?]\n"
             "b = FloorDiv(one, x) : int32[?]\n")
    with Folder() as f:
        g = write(f, "g.txt", graph)
        np.save(f.path("x.npy"), np.int32([1, 0, 2]))
        np.save(f.path("a.npy"), np.int32([7, 7]))  # an older result that must survive
        before = open(f.path("a.npy"), "rb").read()
        p = run("run", g, "--feed", "x=" + f.path("x.npy"), "--fetch", "a=" + f.path("a.npy"),
                "--fetch", "b=" + f.path("b.npy"), expect=1)
        check(f"g.txt:5: b: floor_div: integer division by zero: y[1] = 0" in error_of(p),
              p.stderr)
        check(open(f.path("a.npy"), "rb").read() == before, "the first fetch's file changed")
        check(not os.path.exists(f.path("b.npy")), "the failing fetch's file was created")
        check(sorted(os.listdir(f.path("."))) == ["a.npy", "g.txt", "x.npy"],
              "temporary files left behind")
        # the same with a feed that does not fit its placeholder, and with good input
        np.save(f.path("x2.npy"), np.float32([1, 2]))
        p = run("run", g, "--feed", "x=" + f.path("x2.npy"), "--fetch", "a=" + f.path("a.npy"),
                expect=1)
        check("feed 'x': expected int32 [?]" in error_of(p), p.stderr)
        check(open(f.path("a.npy"), "rb").read() == before, "a refused feed changed an output")
        np.save(f.path("x.npy"), np.int32([1, -3, 2]))
        run("run", g, "--feed", "x=" + f.path("x.npy"), "--fetch", "a=" + f.path("a.npy"),
            "--fetch", "b=" + f.path("b.npy"))
        check_same(np.load(f.path("a.npy")), np.int32([2, -2, 3]), "a")
        check_same(np.load(f.path("b.npy")), np.int32([1, -1, 0]), "b: floor division")


def test_gradient_graph():
    """A saved graph with ndx_graph_gradients' nodes (gather_nd's gradient as slices, applied
    as a step of gradient descent): it loads, runs with ndx run against NumPy, is canonical, and
    ndx graph dot draws its gradient nodes."""
    rng = np.random.default_rng(5)
    with Folder() as f:
        for n in (4, 0, 50):
            table = rng.standard_normal((6, 2)).astype(np.float32)
            ids = rng.integers(0, 6, size=(n, 1)).astype(np.int64)
            dy = rng.standard_normal((n, 2)).astype(np.float32)
            for name, a in (("table", table), ("ids", ids), ("dy", dy)):
                np.save(f.path(name + ".npy"), a)
            run("run", GRAD, "--feed", "table=" + f.path("table.npy"), "--feed",
                "ids=" + f.path("ids.npy"), "--feed", "dy=" + f.path("dy.npy"), "--fetch",
                "step=" + f.path("step.npy"), "--threads", 1 + n % 3)
            want = table.copy()
            for r in range(n):  # one row after another, in index order, as the op adds them
                want[ids[r, 0]] += dy[r] * np.float32(-0.5)
            check_same(np.load(f.path("step.npy")), want, f"a step over {n} rows")
    p = run("graph", "fmt", GRAD)
    check(p.stdout == open(GRAD).read(), "fmt of the canonical gradient graph is not the file")
    p = run("graph", "dot", GRAD)
    check('"ids" -> "gradients/rows_grad/Reshape"' in p.stdout, p.stdout)
    check('"gradients/rows_grad/Reshape_1" -> "Mul"' in p.stdout, p.stdout)


def test_graph_fmt_show_dot():
    for path in (REPLACE_MINUS_ONE, LOOKUP):
        p = run("graph", "fmt", path)
        check(p.stdout == open(path).read(), f"fmt of the canonical {path} is not the file")
    p = run("graph", "show", LOOKUP)
    check("shard = GatherNd(shard_col, zero_col) -> int64[?]" in p.stdout, p.stdout)
    check("shard0 = Const() -> float32[10, 8]  (known)" in p.stdout, p.stdout)
    p = run("graph", "dot", REPLACE_MINUS_ONE)
    lines = p.stdout.splitlines()
    check(lines[0] == "digraph ndx {" and lines[-1] == "}", p.stdout[:200])
    edges = [l for l in lines if " -> " in l]
    # NotEqual 2, Cast 1, DynamicPartition 2, AddV2 2, Size 1, Range 3, DynamicPartition_1 2,
    # y 4
    check(len(edges) == 17, f"{len(edges)} edges, expected the 17 inputs of the program's nodes")
    check('"x" -> "NotEqual" [label="float32[?]"];' in p.stdout, p.stdout)
    if shutil.which("dot"):
        with Folder() as f:
            write(f, "g.dot", p.stdout)
            check(os.system(f"dot -Tsvg {f.path('g.dot')} -o {f.path('g.svg')}") == 0, "dot")
    # a hand-written file: fmt gives its canonical form
    with Folder() as f:
        g = write(f, "h.txt", "# mine\nndx-graph 1\na = Placeholder():int32[3]\n"
                              "b=Shape(a) out_type=int64\n")
        p = run("graph", "fmt", g)
        check(p.stdout == "ndx-graph 1\na = Placeholder() : int32[3]\n"
                          "b = Shape(a) out_type=int64 : int64[1]\n", p.stdout)
        p = run("graph", "show", g)
        check("b = Shape(a) -> int64[1]  (known)" in p.stdout, p.stdout)


def test_errors():
    with Folder() as f:
        np.save(f.path("x.npy"), np.float32([1, 2]))
        x = "x=" + f.path("x.npy")
        y = "y=" + f.path("y.npy")
        run("run", expect=2)
        run("run", REPLACE_MINUS_ONE, "--feed", x, expect=2)  # nothing fetched
        run("run", REPLACE_MINUS_ONE, "--fetch", "y", expect=2)  # not NAME=FILE
        run("run", REPLACE_MINUS_ONE, REPLACE_MINUS_ONE, "--fetch", y, expect=2)
        run("run", REPLACE_MINUS_ONE, "--feed", expect=2)
        run("graph", "show", expect=2)
        run("graph", "draw", REPLACE_MINUS_ONE, expect=2)
        p = run("run", REPLACE_MINUS_ONE, "--fetch", y, expect=1)
        check("x: this placeholder must be fed" in error_of(p), p.stderr)
        p = run("run", REPLACE_MINUS_ONE, "--feed", x, "--fetch", "nope=" + f.path("n.npy"),
                expect=1)
        check("no node named 'nope'" in error_of(p), p.stderr)
        p = run("run", REPLACE_MINUS_ONE, "--feed", x, "--fetch",
                "DynamicPartition:2=" + f.path("n.npy"), expect=1)
        check("has 2 outputs, not an output 2" in error_of(p), p.stderr)
        p = run("run", REPLACE_MINUS_ONE, "--feed", x, "--fetch", y, "--fetch", y, expect=1)
        check("two fetches write" in error_of(p), p.stderr)
        bad = write(f, "bad.txt", "ndx-graph 1\nx = Placeholder() : float32[?]\n"
                                  "y = Identity(z)\n")
        p = run("graph", "show", bad, expect=1)
        check("bad.txt:3:14: no node named 'z' before this line" in error_of(p), p.stderr)
        run("run", bad, "--feed", x, "--fetch", y, expect=1)
        p = run("graph", "fmt", f.path("missing.txt"), expect=1)
        check("missing.txt: cannot open" in error_of(p), p.stderr)
        check(not os.path.exists(f.path("y.npy")), "an output appeared")


def test_help():
    for cmd in ("run", "graph"):
        p = run(cmd, "--help")
        check(p.stdout.startswith(f"usage: ndx {cmd}"), p.stdout[:100])
    p = run("--help")
    check(" run " in p.stdout and " graph " in p.stdout, "ndx --help lists run and graph")


if __name__ == "__main__":
    main(globals())
