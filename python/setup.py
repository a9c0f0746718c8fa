"""setup.py: build the kvplan C library into the Python package.

The library's sources are the checkout's own (src/ less the CLI and the
layers the API does not reach: check/, plot/, report/), compiled by
setuptools as one shared object, kvplan/_libkvplan*.so, that kvplan/_ffi.py
loads with ctypes: no Python C API, no autotools.  The sources, the header
and the built-in profiles are copied under build/ and kvplan/profiles/ first,
so the build never writes into the checkout's src/.  Needs a C11 compiler
and libyaml's headers and library (Debian/Ubuntu: libyaml-dev; Fedora:
libyaml-devel; macOS: brew install libyaml).

The checkout is this file's parent directory, or $KVPLAN_SOURCE_DIR.
"""
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get("KVPLAN_SOURCE_DIR") or os.path.dirname(HERE)
# layers of src/ the API reaches (ARCHITECTURE.md): base .. size, and api
LAYERS = ["base", "out", "model", "read", "memory", "time", "frag", "size", "api"]
STAGE = os.path.join("build", "kvplan-src")


def version():
    """The package version, configure.ac's (AC_INIT)."""
    with open(os.path.join(TOP, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[kvplan\],\s*\[([^\]]+)\]", f.read())
    if not m:
        raise SystemExit("setup.py: no AC_INIT version in %s/configure.ac" % TOP)
    return m.group(1)


def stage():
    """Copy the C sources, the header and the profiles beside setup.py;
    returns the list of .c files to compile (relative paths)."""
    if not os.path.isfile(os.path.join(TOP, "src", "api", "api.c")):
        raise SystemExit("setup.py: %s is not a kvplan checkout (no src/api/api.c); "
                         "set KVPLAN_SOURCE_DIR" % TOP)
    dst = os.path.join(HERE, STAGE)
    shutil.rmtree(dst, ignore_errors=True)
    sources = []
    for layer in LAYERS:
        src_dir = os.path.join(TOP, "src", layer)
        shutil.copytree(src_dir, os.path.join(dst, "src", layer))
        sources += sorted(os.path.join(STAGE, "src", layer, f)
                          for f in os.listdir(src_dir) if f.endswith(".c"))
    shutil.copytree(os.path.join(TOP, "include"), os.path.join(dst, "include"))
    prof = os.path.join(HERE, "kvplan", "profiles")
    shutil.rmtree(prof, ignore_errors=True)
    for kind in ("models", "gpus", "workloads", "engines", "kernels"):
        shutil.copytree(os.path.join(TOP, "profiles", kind), os.path.join(prof, kind))
    return sources


def yaml_flags():
    """libyaml's compile and link flags from pkg-config, else -lyaml."""
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "yaml-0.1"], check=True,
                                capture_output=True, text=True).stdout.split()
        libs = subprocess.run(["pkg-config", "--libs", "yaml-0.1"], check=True,
                              capture_output=True, text=True).stdout.split()
        return cflags, libs
    except (OSError, subprocess.CalledProcessError):
        return [], ["-lyaml"]


class BuildLibrary(build_ext):
    """build_ext compiling in parallel (the library is ~60 files), and
    saying what is missing when libyaml's header is."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self):
        try:
            super().run()
        except Exception as e:  # the compiler's own message is above
            if "yaml.h" in str(e):
                raise SystemExit("kvplan: libyaml's header is missing: install libyaml-dev "
                                 "(Debian/Ubuntu) or libyaml-devel (Fedora)") from e
            raise


VERSION = version()
YAML_CFLAGS, YAML_LIBS = yaml_flags()
library = Extension(
    "kvplan._libkvplan",
    sources=stage(),
    include_dirs=[os.path.join(STAGE, "src"), os.path.join(STAGE, "include")],
    define_macros=[("_POSIX_C_SOURCE", "200809L"), ("_DEFAULT_SOURCE", None),
                   ("KVPLAN_BUILD", None),
                   ("KVPLAN_VERSION_STRING", '"%s"' % VERSION),
                   # no source tree to fall back on: profiles come with the
                   # package ($KVPLAN_PROFILES, set by kvplan/_ffi.py)
                   ("KVP_SRCDIR", '"/nonexistent"')],
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-O2"] + YAML_CFLAGS,
    extra_link_args=YAML_LIBS + ["-lm", "-lpthread"],
)

setup(version=VERSION, ext_modules=[library], cmdclass={"build_ext": BuildLibrary})
