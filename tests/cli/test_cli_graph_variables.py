"""ndx run with variables: an SGD step as a --target against a NumPy loop written here, the
variables saved with --save-variables and read back with --variables, and a failed step that
writes no file."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, check_same, error_of, main, run  # noqa: E402

TRAIN = """ndx-graph 1
init = Const() value=[0, 1, 2, 3, 4, 5, 6, 7] : float32[4, 2]
table = Variable(init) : float32[4, 2]
ids = Placeholder() : int32[?]
grad = Placeholder() : float32[?, 2]
lr = Const() value=[0.5] : float32[]
step = ResourceSparseApplyGradientDescent(table, lr, grad, ids)
"""


def sgd(table, ids, grad, lr):
    """One entry after another, as TensorFlow's kernel on one thread."""
    table = table.copy()
    for i, r in enumerate(ids):
        table[r] = table[r] - np.float32(lr) * grad[i]
    return table


def test_training_steps_and_variable_files():
    rng = np.random.default_rng(7)
    with Folder() as f:
        graph = f.path("train.txt")
        with open(graph, "w") as out:
            out.write(TRAIN)
        want = np.arange(8, dtype=np.float32).reshape(4, 2)
        for k in range(3):
            ids = rng.integers(0, 4, size=6).astype(np.int32)  # duplicates likely
            grad = rng.standard_normal((6, 2)).astype(np.float32)
            np.save(f.path("ids.npy"), ids)
            np.save(f.path("grad.npy"), grad)
            args = ["run", graph, "--feed", "ids=" + f.path("ids.npy"), "--feed",
                    "grad=" + f.path("grad.npy"), "--target", "step", "--fetch",
                    "table=" + f.path("before.npy"), "--save-variables", f.path("vars.npz"),
                    "--threads", 1 + k % 2]
            if k:
                args += ["--variables", f.path("vars.npz")]
            run(*args)
            check_same(np.load(f.path("before.npy")), want, f"step {k}: the start-of-run table")
            want = sgd(want, ids, grad, 0.5)
            with np.load(f.path("vars.npz")) as z:
                check_same(z["table"], want, f"step {k}: the saved table")
        # a bad index: the run fails naming the node, and neither file is written
        np.save(f.path("ids.npy"), np.int32([1, 9, 0, 0, 0, 0]))
        p = run("run", graph, "--variables", f.path("vars.npz"), "--feed",
                "ids=" + f.path("ids.npy"), "--feed", "grad=" + f.path("grad.npy"), "--target",
                "step", "--fetch", "table=" + f.path("out.npy"), "--save-variables",
                f.path("after.npz"), expect=1)
        check("train.txt:7: step: sparse_apply_sgd: indices[1] = [9] is out of range"
              in error_of(p), p.stderr)
        check(not os.path.exists(f.path("out.npy")) and not os.path.exists(f.path("after.npz")),
              "a failed run wrote a file")
        # a variables file of another shape is refused, naming the variable
        np.savez(f.path("wrong.npz"), table=np.zeros((2, 2), np.float32))
        p = run("run", graph, "--variables", f.path("wrong.npz"), "--target", "step", expect=1)
        check("table" in error_of(p) and "[2, 2]" in error_of(p), p.stderr)
        p = run("run", graph, "--target", "nosuch", expect=1)
        check("no node named 'nosuch'" in error_of(p), p.stderr)
        p = run("run", graph, "--target", expect=2)


if __name__ == "__main__":
    main(globals())
