#!/bin/sh
# cli-python.sh: the Python package (python/, issue 40) as a user gets it:
# `pip install` of the checkout's python/ into a fresh virtual environment
# (the C library compiled from src/ by setup.py, no autotools), then its
# pytest suite (python/tests/: the same expected values as tests/check-api.c).
# Skipped (77) without a python3 that has venv, setuptools, wheel and pytest
# (CI installs python3-pytest and python3-venv: .ci/run).  Nothing is
# written into the source tree: python/ and its tests are copied to a
# temporary folder, the venv sees the system's pytest and setuptools
# (--system-site-packages) and pip reaches no network (--no-index).
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

py=
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
	command -v "$cand" >/dev/null 2>&1 || continue
	if "$cand" -c 'import venv, setuptools, pytest
try:
    import wheel
except ImportError:
    import setuptools.command.bdist_wheel' >/dev/null 2>&1; then
		py=$cand
		break
	fi
done
if [ -z "$py" ]; then
	echo "cli-python: no python3 with venv, setuptools, wheel and pytest; skipped"
	exit 77
fi
if ! "$py" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1; then
	echo "cli-python: $py -m venv failed (python3-venv missing?); skipped"
	cat "$tmp/venv.log"
	exit 77
fi
export PYTHONDONTWRITEBYTECODE=1

# the package's own files, without what a build in the checkout left there
mkdir "$tmp/pkg"
(cd "$top_srcdir/python" && tar cf - --exclude=build --exclude='*.egg-info' \
	--exclude=__pycache__ --exclude='_libkvplan*' --exclude=profiles .) |
	(cd "$tmp/pkg" && tar xf -)
KVPLAN_SOURCE_DIR=$top_srcdir
KVPLAN_CLI=$KVPLAN
export KVPLAN_SOURCE_DIR KVPLAN_CLI

name="pip install ./python"
if "$tmp/venv/bin/python" -m pip install --no-build-isolation --no-index -q "$tmp/pkg" \
	>"$tmp/pip.log" 2>&1; then
	ok
else
	bad "$(tail -n 30 "$tmp/pip.log")"
	finish
fi

# pytest from the temporary folder, so `import kvplan` is the installed one
name="pytest python/tests"
cd "$tmp" || exit 1
if "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$tmp/pkg/tests" >"$tmp/pytest.log" 2>&1; then
	ok
	tail -n 1 "$tmp/pytest.log"
else
	bad "$(tail -n 40 "$tmp/pytest.log")"
fi

# the benchmark script runs against the installed package (a few calls)
run "$tmp/venv/bin/python" "$top_srcdir/bench/api-bench.py" 900
expect_rc 0
expect_out "us per call"

finish
