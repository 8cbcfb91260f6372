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
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_sum,
    sqrt,
    square,
    subtract,
)

__all__ = ["abs", "add", "divide", "equal", "floordiv", "floormod", "greater", "greater_equal",
           "less", "less_equal", "logical_and", "logical_not", "logical_or", "logical_xor",
           "maximum", "minimum", "multiply", "negative", "not_equal", "reduce_max", "reduce_mean",
           "reduce_min", "reduce_sum", "sqrt", "square", "subtract"]

# The segment reductions (ndx/_segment.py).
from ._segment import (segment_max, segment_mean, segment_min, segment_prod,  # noqa: E402
                       segment_sum, unsorted_segment_max, unsorted_segment_mean,
                       unsorted_segment_min, unsorted_segment_prod, unsorted_segment_sqrt_n,
                       unsorted_segment_sum)

__all__ += ["segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
            "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min",
            "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum"]

# bincount (ndx/_bincount.py).
from ._bincount import bincount  # noqa: E402

__all__ += ["bincount"]
