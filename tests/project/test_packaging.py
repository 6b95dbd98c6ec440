"""Package metadata: the LICENSE shipped for the declared Apache-2.0, project URLs, classifiers,
and the dependency floors that .ci/run proves (.ci/oldest.txt equals pyproject's floors)."""
from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_license_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    # The canonical text (www.apache.org/licenses/LICENSE-2.0.txt), byte for byte.
    assert hashlib.md5((ROOT / "LICENSE").read_bytes()).hexdigest() == "3b83ef96387f14655fc854ddc3c6bd57"
    assert "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    headings = re.findall(r"^   (\d)\. ([A-Z][^.]*)\.", text, re.M)
    assert [int(n) for n, _ in headings] == list(range(1, 10))


def test_urls_and_classifiers() -> None:
    assert PROJECT["urls"] and all(url.startswith("https://") for url in PROJECT["urls"].values())
    classifiers = PROJECT["classifiers"]
    assert "Typing :: Typed" in classifiers
    # setuptools >= 77 rejects License :: classifiers beside an SPDX license expression.
    assert not any(c.startswith("License ::") for c in classifiers)
    versions = [c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert versions[0] == PROJECT["requires-python"].removeprefix(">=") == "3.10"


def test_ci_proves_the_declared_floors() -> None:
    """.ci/oldest.txt pins exactly pyproject's floors, and .ci/run installs them on Python 3.10."""
    floors = dict(re.fullmatch(r"([\w-]+)>=([\d.]+)", d).groups() for d in PROJECT["dependencies"])
    pins = dict(line.split("==") for line in (ROOT / ".ci" / "oldest.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    assert set(pins) == set(floors)
    for name, floor in floors.items():
        assert pins[name] in (floor, floor + ".0"), (name, pins[name], floor)
    run = (ROOT / ".ci" / "run").read_text()
    assert "-r .ci/oldest.txt -c .ci/oldest.txt" in run and "sys.version_info[:2] == (3, 10)" in run


def test_wheel_ships_the_license_and_metadata(tmp_path: Path) -> None:
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the build's setuptools>=77")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, timeout=300, capture_output=True)
    (wheel,) = tmp_path.glob("pyaclnn-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (license_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        # the signature table (tools/gen_signatures.py), read from the package
        assert zf.read("pyaclnn/_signatures.json.gz") == (ROOT / "pyaclnn" / "_signatures.json.gz").read_bytes()
        assert zf.read(license_name) == (ROOT / "LICENSE").read_bytes()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert meta.count("Project-URL: ") == len(PROJECT["urls"])
    assert "Classifier: Programming Language :: Python :: 3.10" in meta


def test_no_test_module_needs_torch_to_be_collected() -> None:
    """The oldest-dependencies run of .ci/run has no torch: a module-level ``import torch``
    would stop its whole collection (pytest.importorskip("torch") skips instead)."""
    modules = sorted((ROOT / "tests").rglob("test_*.py"))  # the layer folders (tests/README.md)
    assert len(modules) > 50, modules
    offenders = [str(p.relative_to(ROOT)) for p in modules
                 if re.search(r"^(import torch|from torch\b)", p.read_text(), re.M)]
    assert offenders == []
