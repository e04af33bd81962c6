# SPDX-License-Identifier: BSD-3-Clause
"""pip install --no-build-isolation ./python works offline and bundles the
library: built from a copy of python/ (pip builds in the source tree), into
a scratch target directory, then imported with no RFX_LIBRARY and no build
tree in reach."""
import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

import rfx

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


def test_pip_install_bundles_the_library(tmp_path):
    try:  # metadata only: importing setuptools here would patch distutils
        for dist in ("pip", "setuptools", "wheel"):
            importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pip, setuptools or wheel missing (Debian: python3-pip)")
    src = tmp_path / "src"
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info",
                                                            "__pycache__"))
    site = tmp_path / "site"
    env = dict(os.environ, RFX_LIBRARY=os.path.realpath(rfx.library_path),
               PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                        "--no-deps", "--target", str(site), str(src)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (site / "rfx" / "librfx.so.0").is_file()
    env = {k: v for k, v in os.environ.items() if k not in ("RFX_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    code = ("import numpy as np, rfx; print(rfx.library_path); "
            "print(rfx.RFFRegressor(16, alpha=1.0, random_state=0)"
            ".fit(np.eye(4), np.arange(4.0)).predict(np.eye(4)).shape)")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    path, shape = r.stdout.split("\n")[:2]
    assert path == str(site / "rfx" / "librfx.so.0") and shape == "(4,)"
    # the metadata of pyproject.toml's [project] reached the installed package
    dist = [d for d in importlib.metadata.distributions(path=[str(site)])
            if d.metadata["Name"] == "rfx"]
    assert len(dist) == 1
    meta = dist[0].metadata
    assert meta["Version"] == rfx.__version__
    assert meta["License"] == "BSD-3-Clause"
    assert meta["Requires-Python"] == ">=3.9"
    assert "License :: OSI Approved :: BSD License" in meta.get_all("Classifier")
    assert sorted(r.split(" ")[0] for r in meta.get_all("Requires-Dist")) == [
        "cffi", "numpy", "scikit-learn"]
