"""ndx.math: the elementwise ops under the names TensorFlow code writes as tf.math.<name>
(tf.math.abs, tf.math.less, tf.math.floormod, ...). Each is the ndx op of that name."""
from ._glue import (
    abs,
    add,
    divide,
    equal,
    floordiv,
    floormod,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    reduce_sum,
    sqrt,
    square,
    subtract,
)

__all__ = ["abs", "add", "divide", "equal", "floordiv", "floormod", "greater", "greater_equal",
           "less", "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor",
           "maximum", "minimum", "multiply", "negative", "not_equal", "reduce_sum", "sqrt",
           "square", "subtract"]
