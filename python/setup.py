# SPDX-License-Identifier: BSD-3-Clause
"""The build step of the rfx Python package that pyproject.toml cannot state
(its metadata is there, in [project]).

The package is pure Python over librfx through cffi's ABI mode; the build
copies the C library into it, so an installed package does not depend on
the build tree: the library named by RFX_LIBRARY, else ../build/librfx.so
(what `make` builds). Without either, the package is installed without the
library and looks for an installed librfx at import (RFX_LIBRARY, then the
system library path).
"""
import os
import re
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(HERE, "rfx", "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _library():
    env = os.environ.get("RFX_LIBRARY")
    if env:
        if not os.path.isfile(env):
            sys.exit("setup.py: RFX_LIBRARY=%s is not a file" % env)
        return env
    built = os.path.join(os.path.dirname(HERE), "build", "librfx.so")
    return built if os.path.isfile(built) else None


class BuildWithLibrary(build_py):
    """build_py, plus librfx copied into the package as librfx.so.<major>."""

    def run(self):
        super().run()
        lib = _library()
        if lib is None:
            print("setup.py: no librfx.so found (set RFX_LIBRARY, or build first with make); "
                  "the package will look for an installed librfx at import", file=sys.stderr)
            return
        major = _version().split(".")[0]
        dest = os.path.join(self.build_lib, "rfx", "librfx.so." + major)
        print("setup.py: bundling %s as %s" % (os.path.realpath(lib), dest), file=sys.stderr)
        shutil.copyfile(os.path.realpath(lib), dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """A wheel that carries a shared library is platform-specific."""

    def has_ext_modules(self):
        return _library() is not None


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
