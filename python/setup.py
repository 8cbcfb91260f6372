"""Builds ndx._ndx with CMake: the top-level CMakeLists.txt's target ndx_python (cmake/python.cmake)
links the module's C sources with libndx's own objects, compiled as the C library is (no installed
libndx needed). Install with `pip install --no-build-isolation ./python`; needs cmake, a C compiler,
the Python headers and NumPy."""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.realpath(here))


def ndx_version():
    """MAJOR.MINOR.PATCH from the NDX_VERSION_* macros of include/ndx.h (the one version number)."""
    with open(os.path.join(root, "include", "ndx.h")) as header:
        parts = dict(re.findall(r"^#define NDX_VERSION_(MAJOR|MINOR|PATCH) (\d+)$", header.read(), re.M))
    return "{MAJOR}.{MINOR}.{PATCH}".format(**parts)


def cache_value(cache, name):
    """The value of `name` in a CMakeCache.txt, or None."""
    with open(cache) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep and key.split(":")[0] == name:
                return value
    return None


class CMakeBuild(build_ext):
    """Configures and builds the CMake target ndx_python in build_temp and copies the module to
    where setuptools packs it. A build tree made for another source tree or another Python is
    started afresh (CMake keeps the first Python it found)."""

    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        cache = os.path.join(build, "CMakeCache.txt")
        if os.path.exists(cache) and (
                cache_value(cache, "CMAKE_HOME_DIRECTORY") != root or
                cache_value(cache, "Python3_EXECUTABLE") != sys.executable):
            shutil.rmtree(build)
        subprocess.check_call(["cmake", "-S", root, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               "-DNDX_BUILD_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable,
                               "-DNDX_BUILD_TESTS=OFF", "-DNDX_BUILD_TOOLS=OFF",
                               "-DNDX_BUILD_MPI=OFF"])
        jobs = self.parallel if self.parallel and self.parallel is not True else os.cpu_count() or 1
        subprocess.check_call(["cmake", "--build", build, "--target", "ndx_python",
                               "--parallel", str(jobs)])
        built = os.path.join(build, "python", "ndx")
        module = [f for f in os.listdir(built) if f.startswith("_ndx.") and f.endswith(".so")]
        if len(module) != 1:
            raise RuntimeError(f"expected one _ndx*.so in {built}, found {module}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, module[0]), target)


setup(version=ndx_version(), ext_modules=[Extension("ndx._ndx", sources=[])], packages=["ndx"],
      cmdclass={"build_ext": CMakeBuild},
      package_data={"ndx": ["*.pyi", "py.typed"]})
