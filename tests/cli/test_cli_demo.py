"""ndx demo shows every example of TensorFlow's documentation of the ops (docs/testing.md, "The
TensorFlow examples") with the documented inputs and outputs. The expected texts below are copied
from those pages, not from ndx; they are matched
as token sequences (brackets, numbers, strings, names), so spacing, commas and quote style may
differ, as between TensorFlow's docs and NumPy's printing."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clitest import Folder, check, main, run  # noqa: E402

# The C++ API's GatherNd: string params (indices, params, output as the docs list them).
M = "params = [['a', 'b'], ['c', 'd']]"
T3 = "params = [[['a0', 'b0'], ['c0', 'd0']], [['a1', 'b1'], ['c1', 'd1']]]"
GATHER_STRINGS = [
    f"indices = [[0, 0], [1, 1]] {M} output = ['a', 'd']",
    f"indices = [[1], [0]] {M} output = [['c', 'd'], ['a', 'b']]",
    f"indices = [[1]] {T3} output = [[['a1', 'b1'], ['c1', 'd1']]]",
    f"indices = [[0, 1], [1, 0]] {T3} output = [['c0', 'd0'], ['a1', 'b1']]",
    f"indices = [[0, 0, 1], [1, 0, 1]] {T3} output = ['b0', 'b1']",
    f"indices = [[[0, 0]], [[0, 1]]] {M} output = [['a'], ['b']]",
    f"indices = [[[1]], [[0]]] {M} output = [[['c', 'd']], [['a', 'b']]]",
    f"""indices = [[[1]], [[0]]] {T3} output = [[[['a1', 'b1'], ['c1', 'd1']]],
              [[['a0', 'b0'], ['c0', 'd0']]]]""",
    f"""indices = [[[0, 1], [1, 0]], [[0, 0], [1, 1]]] {T3}
    output = [[['c0', 'd0'], ['a1', 'b1']],
              [['a0', 'b0'], ['c1', 'd1']]]""",
    f"indices = [[[0, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 1, 0]]] {T3} "
    "output = [['b0', 'b1'], ['d0', 'c1']]",
]

# tf.gather_nd on np.arange data (the gathered indices, then the printed result).
GATHER_ARANGE = [
    "indices = [1, 2] output = 8",
    "indices = [[1, 2], [2, 3]] output = [8, 15]",
    """indices = [[1],[2]] output = [[ 6 7 8 9 10 11]
 [12 13 14 15 16 17]]""",
    "indices = [[0, 0, 0], [1, 2, 1]] output = [0 11]",
    """indices = [[[0, 0], [0, 1]], [[1, 0], [1, 1]]] output = [[[0 1]
 [2 3]]

 [[6 7]
 [8 9]]]""",
    """indices = [[0, 0], [0, 1], [1, 0], [1, 1]] output = [[0 1]
 [2 3]
 [6 7]
 [8 9]]""",
]

# tf.tensor_scatter_nd_add.
SCATTER = [
    "indices = [[4], [3], [1], [7]] updates = [9, 10, 11, 12] updated = [1, 12, 1, 11, 10, 1, 1, 13]",
    """indices = [[0], [2]]
    updates = [[[5, 5, 5, 5], [6, 6, 6, 6],
                            [7, 7, 7, 7], [8, 8, 8, 8]],
                           [[5, 5, 5, 5], [6, 6, 6, 6],
                            [7, 7, 7, 7], [8, 8, 8, 8]]]""",
    """updated = [[[6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8], [9, 9, 9, 9]],
 [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]],
 [[6, 6, 6, 6], [7, 7, 7, 7], [8, 8, 8, 8], [9, 9, 9, 9]],
 [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]]""",
]

# tf.dynamic_stitch, and the replace -1 entries program (partition, then stitch).
STITCH = [
    """indices[0] = 6
    indices[1] = [4, 1]
    indices[2] = [[5, 2], [0, 3]]
    data[0] = [61, 62]
    data[1] = [[41, 42], [11, 12]]
    data[2] = [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]
    merged = [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42],
              [51, 52], [61, 62]]""",
    "x = [0.1, -1., 5.2, 4.3, -1., 7.4]",
    "x = [1.1, -1., 6.2, 5.3, -1, 8.4]",
]

# tf.sparse.concat (entries as listed, and the error without expand_nonconcat_dim).
SPARSE = [
    """sp_inputs[0]: shape = [2, 3]
[0, 2]: "a"
[1, 0]: "b"
[1, 1]: "c"

sp_inputs[1]: shape = [2, 4]
[0, 1]: "d"
[0, 2]: "e\"""",
    """shape = [2, 7]
[0, 2]: "a"
[0, 4]: "d"
[0, 5]: "e"
[1, 0]: "b"
[1, 1]: "c\"""",
    """sp_inputs[0]: shape = [3, 3]
[0, 2]: "a"
[1, 0]: "b"
[2, 1]: "c"

sp_inputs[1]: shape = [2, 4]
[0, 1]: "d"
[0, 2]: "e\"""",
    "expand_nonconcat_dim = False ) error :",
    """shape = [3, 7]
[0, 2]: "a"
[0, 4]: "d"
[0, 5]: "e"
[1, 0]: "b"
[2, 1]: "c\"""",
]

PICTURES = [
    ["[    a] concat [  d e  ] = [    a   d e  ]",
     "[b c  ]        [       ]   [b c          ]"],
    ["[    a] concat [  d e  ] = [    a   d e  ]",
     "[b    ]        [       ]   [b            ]",
     "[  c  ]                    [  c          ]"],
]

# A string never spans lines, so an apostrophe in prose ("TensorFlow's") cannot swallow text.
TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"""
                   r"""|[A-Za-z_][A-Za-z0-9_]*|[\[\]:=()]""")


def tokens(text):
    out = []
    for t in TOKEN.findall(text):
        if t[0] in "'\"":
            out.append(("s", t[1:-1]))
        elif t[0].isdigit() or t[0] in "+-.":
            out.append(("n", float(t)))
        else:
            out.append(("w", t))
    return out


def contains(haystack, needle):
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def demo_output(*flags):
    with Folder() as f:  # run away from the source tree: the examples are compiled in
        p = run("demo", *flags, cwd=f.dir)
    return p.stdout


def test_demo_shows_every_tensorflow_example():
    out = demo_output()
    have = tokens(out)
    for group in (GATHER_STRINGS, GATHER_ARANGE, SCATTER, STITCH, SPARSE):
        for expected in group:
            check(contains(have, tokens(expected)), f"the demo does not show:\n{expected}")
    lines = [line.strip() for line in out.splitlines()]
    for picture in PICTURES:
        found = any(lines[i:i + len(picture)] == picture for i in range(len(lines)))
        check(found, "the demo does not draw:\n" + "\n".join(picture))
    check("All 26 examples give the documented results." in out, out[-300:])
    # and the saved graph, as text, run
    check("the replace -1 entries program as a saved graph" in out and
          "y = DynamicStitch(DynamicPartition_1, DynamicPartition_1:1, DynamicPartition, AddV2)"
          in out, out[-2500:])
    # the replace -1 entries program as a graph: its nodes with the shapes inferred before any data, then its run
    check("replace/x" in out and "Placeholder       float32[?]" in out, out[-1500:])
    check("replace/partitioned_data" in out and "DynamicPartition  float32[?] float32[?]" in out,
          out[-1500:])
    check("(constant)" in out, out[-1500:])


def test_demo_is_the_same_at_any_thread_count():
    one = demo_output("--threads", "1")
    check(one == demo_output("--threads", "3") == demo_output(), "output depends on threads")


def test_demo_tokens_match_detects_a_difference():
    """The matcher itself must be able to fail."""
    have = tokens("output  = [['a', 'd']]\n    -> as documented")
    check(contains(have, tokens("output = [['a', 'd']]")), "plain match")
    check(not contains(have, tokens("output = [['a', 'b']]")), "a wrong value matched")
    check(not contains(have, tokens("output = ['a', 'd']")), "a wrong nesting matched")


main(globals())
