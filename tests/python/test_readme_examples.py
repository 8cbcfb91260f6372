"""The README's Python example runs as written and gives what NumPy gives for the same program
(keep the -1 entries of x, add 1 to the others); its saved text form loads back and agrees."""
import os
import textwrap

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def readme_python_block():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    start = text.index("```python\n") + len("```python\n")
    return textwrap.dedent(text[start:text.index("```", start)])


def test_the_readme_python_example_does_what_numpy_does(tmp_path, monkeypatch):
    import ndx
    monkeypatch.chdir(tmp_path)  # the example saves replace.txt in the working directory
    scope = {}
    exec(compile(readme_python_block(), "README.md", "exec"), scope)
    f = scope["replace_minus_one"]
    rng = np.random.default_rng(7)
    for n in (0, 1, 6, 1000):
        x = rng.choice(np.array([-1.0, 0.5, 2.25, -3.0], np.float32), size=n)
        np.testing.assert_array_equal(f(x), np.where(x != -1, x + np.float32(1), x))
    loaded = ndx.load(str(tmp_path / "replace.txt"))
    x = np.array([0.1, -1.0, 5.2], np.float32)
    np.testing.assert_array_equal(loaded(x=x), np.where(x != -1, x + np.float32(1), x))
