"""pip install for the Python module eddy (issue 13): `python3 -m pip install --no-build-isolation .`

Builds the extension with eddy's own CMake (the library, no tests, benchmarks or viewer) and installs
the package python/eddy with it. Offline: setuptools, pybind11 and numpy come from Debian
(scripts/install-deps.sh), nothing from PyPI. docs/python.md.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        jobs = os.environ.get("EDDY_JOBS", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                        "-DEDDY_PYTHON=ON", "-DEDDY_BUILD_TESTS=OFF", "-DEDDY_BUILD_BENCH=OFF",
                        "-DEDDY_BUILD_VIEWER=OFF", "-DEDDY_NATIVE=OFF", f"-DPython3_EXECUTABLE={sys.executable}"],
                       check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "_eddy", "-j", jobs], check=True)
        built = next((build / "python" / "eddy").glob("_eddy*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        # The bundled scenes (and the models and heightmaps they name) travel with the package: the
        # source tree the extension was built from may be gone when it is imported.
        scenes = target.parent / "scenes"
        if scenes.exists():
            shutil.rmtree(scenes)
        shutil.copytree(ROOT / "scenes", scenes)


setup(
    name="eddy",
    version="0.1.0",
    description="Particle fluids (WCSPH, DFSPH, PBF, Clavet), shallow water and fluid surfaces",
    packages=["eddy"],
    package_dir={"eddy": "python/eddy"},
    package_data={"eddy": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("eddy._eddy", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is the CMake build folder of `make build` (pip builds in the source tree).
    options={"build": {"build_base": "build-pip"}},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
)
