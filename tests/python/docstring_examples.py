"""What the Python tests share: running the examples of a function's docstring."""
import doctest

import numpy as np

import ndx


def check_docstring_examples(obj):
    """Runs the examples of obj's docstring as doctests (ndx and np in scope, whitespace
    normalized); there must be at least one, and each must print what the docstring shows."""
    test = doctest.DocTestParser().get_doctest(obj.__doc__, {"ndx": ndx, "np": np}, obj.__name__,
                                               None, 0)
    assert test.examples, f"{obj.__name__} has no examples"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
