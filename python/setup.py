"""Builds ndx._ndx: the module's C sources and libndx's core, ops, graph layer and .npy/.npz io,
compiled together (no installed libndx needed). Install with `pip install --no-build-isolation ./python`.

libndx is compiled with the flags cmake/libndx_flags.txt defines, the file CMakeLists.txt reads
too (warnings, and the memcpy strategy when the compiler takes it), plus what CMake's Release
build adds (-O3 -DNDEBUG), C11 with GNU extensions, POSIX threads and hidden visibility."""
import glob
import os
import re
import shlex
import tempfile

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.relpath(os.path.join(here, ".."), here)


def ndx_version():
    """MAJOR.MINOR.PATCH from the NDX_VERSION_* macros of include/ndx.h (the one version number)."""
    with open(os.path.join(here, "..", "include", "ndx.h")) as header:
        parts = dict(re.findall(r"^#define NDX_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", header.read(), re.M))
    return "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


library = sorted(glob.glob(os.path.join(root, "src", "core", "*.c")) +
                 glob.glob(os.path.join(root, "src", "ops", "*.c")) +
                 glob.glob(os.path.join(root, "src", "graph", "*", "*.c")) +
                 glob.glob(os.path.join(root, "src", "io", "*.c")))


def libndx_flags():
    """The "name: flags" lines of cmake/libndx_flags.txt, as {name: [flag, ...]}."""
    flags = {}
    with open(os.path.join(here, root, "cmake", "libndx_flags.txt")) as f:
        for line in f:
            name, sep, value = line.partition(":")
            if sep and not line.startswith("#") and name.isalpha():
                flags[name] = shlex.split(value)
    return flags


FLAGS = libndx_flags()

# As CMakeLists.txt: the optimizer-step kernels round every step as the element type does (no
# fused multiply-add in their AVX2/AVX-512 clones), so the Python module's training steps give
# the C library's bits.
PER_FILE_FLAGS = {os.path.join("src", "ops", "sparse_apply_kernels.c"):
                  ["-ffp-contract=off", "-fno-math-errno"]}


class BuildExt(build_ext):
    """Adds the stringop flags when this compiler takes them, as CMake's check does."""

    def build_extensions(self):
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "probe.c")
            with open(probe, "w") as f:
                f.write("int main(void) { return 0; }\n")
            try:
                self.compiler.compile([probe], output_dir=tmp, extra_postargs=FLAGS["stringop"])
                taken = FLAGS["stringop"]
            except Exception:  # (a CompileError: this compiler has no such option)
                taken = []
        for ext in self.extensions:
            ext.extra_compile_args += taken
            # Files CMakeLists.txt compiles with flags of their own (set_source_files_properties):
            # compiled here with the same, linked in as objects.
            for src, flags in PER_FILE_FLAGS.items():
                path = os.path.join(root, src)
                ext.sources.remove(path)
                obj = self.compiler.object_filenames([path], output_dir=self.build_temp)[0]
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                ext.extra_objects += self.compiler.compile(
                    [path], output_dir=self.build_temp, macros=ext.define_macros,
                    include_dirs=ext.include_dirs,
                    extra_postargs=ext.extra_compile_args + flags)
        super().build_extensions()


# The graph layer's folders, by job (src/graph/README.md), as CMakeLists.txt's NDX_GRAPH_DIRS.
GRAPH_DIRS = ["kinds", "build", "text", "session", "grad"]

extension = Extension(
    "ndx._ndx",
    sources=sorted(glob.glob("src/*.c")) + library,
    include_dirs=[os.path.join(root, "include"), os.path.join(root, "src", "core"),
                  os.path.join(root, "src", "ops"), os.path.join(root, "src", "io"), "src",
                  numpy.get_include()] +
                 [os.path.join(root, "src", "graph", d) for d in GRAPH_DIRS],
    define_macros=[("NDEBUG", None)],
    extra_compile_args=["-std=gnu11", "-O3", "-pthread", "-fvisibility=hidden"] + FLAGS["warnings"],
    extra_link_args=["-pthread", "-lm"],
    libraries=["z"],  # src/io: .npz members are deflated with zlib
)

setup(version=ndx_version(), ext_modules=[extension], packages=["ndx"],
      cmdclass={"build_ext": BuildExt},
      package_data={"ndx": ["*.pyi", "py.typed"]})
