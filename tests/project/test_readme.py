"""README.md: its Python tour runs on both backends, its set-up commands are the ones CI and the
main job use, and its links lead to files of the repository (GitHub renders them; mkdocs never
sees the README, so its --strict build cannot check them)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# The two set-up commands, exactly as a new user copies them.
MAIN_JOB = ("python3 -m venv .venv && .venv/bin/pip install -q . && "
            "PYACLNN_BACKEND=numpy .venv/bin/python -m pyaclnn samples")
TESTS = "bash .ci/run"


def test_readme_python_blocks_run(backend):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 1
    has_torch = importlib.util.find_spec("torch") is not None
    namespace: dict = {}
    skipped = 0
    for block in blocks:
        # The oldest-dependencies run of .ci/run has no torch: its blocks are all the README
        # examples that need it (torch interop), and only those are left out there.
        if not has_torch and re.search(r"^\s*(import torch|from torch\b)", block, re.M):
            skipped += 1
            continue
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own documentation
    if skipped:
        pytest.skip(f"{skipped} README block(s) need torch, which is not installed (the others ran)")


def test_readme_gives_the_two_set_up_commands():
    bash = "\n".join(re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S))
    commands = [line.strip() for line in bash.splitlines() if line.strip() and not line.startswith("#")]
    assert MAIN_JOB in commands and TESTS in commands, commands
    assert (ROOT / ".ci" / "run").is_file()


def test_readme_links_lead_to_files():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert len(local) >= 20, local  # the guide, the API pages, the behaviour pages
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_readme_counts_the_tiers():
    """The README's counts: ten exact references, the aten tier's from its table (issue 24)."""
    from pyaclnn import ops
    text = " ".join(README.read_text().split())
    assert "ten operators with an exact reference" in text and len(ops.names()) == 10
    said = re.findall(r"computes (\d+) more operators", text)
    assert said and {int(n) for n in said} == {len(ops.aten_names())}, said
    assert "pip install 'pyaclnn[torch]'" in text
