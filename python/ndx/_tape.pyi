# Type stubs for ndx._tape: the arrays an eager GradientTape returns.
import numpy as np

class TapedArray(np.ndarray): ...
