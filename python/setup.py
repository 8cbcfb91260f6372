"""Builds ndx._ndx: the module's C sources and libndx's core and ops, compiled together
(no installed libndx needed). Install with `pip install --no-build-isolation ./python`."""
import glob
import os
import re

import numpy
from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.relpath(os.path.join(here, ".."), here)


def ndx_version():
    """MAJOR.MINOR.PATCH from the NDX_VERSION_* macros of include/ndx.h (the one version number)."""
    with open(os.path.join(here, "..", "include", "ndx.h")) as header:
        parts = dict(re.findall(r"^#define NDX_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", header.read(), re.M))
    return "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


library = sorted(glob.glob(os.path.join(root, "src", "core", "*.c")) +
                 glob.glob(os.path.join(root, "src", "ops", "*.c")))

extension = Extension(
    "ndx._ndx",
    sources=sorted(glob.glob("src/*.c")) + library,
    include_dirs=[os.path.join(root, "include"), os.path.join(root, "src", "core"),
                  os.path.join(root, "src", "ops"), "src", numpy.get_include()],
    define_macros=[("NDEBUG", None)],
    extra_compile_args=["-std=gnu11", "-O3", "-fopenmp", "-fvisibility=hidden",
                        "-Wno-unused-parameter", "-Wno-missing-field-initializers"],
    extra_link_args=["-fopenmp", "-lm"],
)

setup(version=ndx_version(), ext_modules=[extension], packages=["ndx"],
      package_data={"ndx": ["*.pyi", "py.typed"]})
