"""The documentation cannot rot: every ```python block of docs/ runs, so does every ``Example:``
of the docstrings the API reference renders, and the examples are shown.

Each page's blocks run in order in one namespace (a page is one program, as a reader follows
it), on the NumPy reference backend and on the acl backend through the CANN ABI emulator. Blocks that import torch are left out where torch is not
installed (the oldest-dependencies run of .ci/run). The site itself is built by .ci/run with
``mkdocs build --strict`` (warnings, such as a broken link or a docstring parameter the signature
lacks, fail it).
"""
from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
BLOCK = re.compile(r"^[ \t]*```python\n(.*?)^[ \t]*```", re.S | re.M)


def python_blocks(text: str) -> list[str]:
    """The page's python blocks, each padded with blank lines so that a traceback gives the
    line numbers of the page itself."""
    # A block that only includes a file (``--8<-- "examples/x.py"``, the examples page) is that
    # file: tests/cli/test_examples.py runs those.
    return ["\n" * text.count("\n", 0, m.start(1)) + m.group(1) for m in BLOCK.finditer(text)
            if not m.group(1).lstrip().startswith("--8<--")]


def test_the_guide_has_code() -> None:
    # a broken extraction (a changed fence style) must not turn this file into a no-op
    guide = [p for p in PAGES if p.startswith("guide/")]
    assert len(guide) >= 8, guide
    with_code = [p for p in guide if python_blocks((DOCS / p).read_text())]
    assert len(with_code) >= 6, with_code


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks((DOCS / p).read_text())])
def test_page_code_blocks_run(page: str, backend: str) -> None:
    # On the reference backend, and on the acl backend through the CANN ABI emulator, where the
    # blocks for a device (`if ... == "acl":`, operators without a NumPy reference) run too.
    path = DOCS / page
    has_torch = importlib.util.find_spec("torch") is not None
    namespace: dict = {"__name__": "__docs__"}
    skipped = 0
    for block in python_blocks(path.read_text()):
        if not has_torch and re.search(r"^\s*(import torch|from torch\b)", block, re.M):
            skipped += 1
            continue
        exec(compile(block, str(path), "exec"), namespace)  # noqa: S102 - our own documentation
    if skipped:
        pytest.skip(f"{skipped} block(s) of {page} need torch, which is not installed (the others ran)")


def test_the_porting_guide_prints_what_the_sample_prints(use_backend, capsys) -> None:
    # The side-by-side port, run as a reader runs it, prints the C++ sample's lines
    # (2 * (self - target) * gradOutput / 4, the documented formula, computed here by hand).
    use_backend("numpy")
    path = DOCS / "guide" / "porting.md"
    namespace: dict = {"__name__": "__docs__"}
    for block in python_blocks(path.read_text()):
        exec(compile(block, str(path), "exec"), namespace)  # noqa: S102
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("result[")]
    expected = [2 * (s - t) * g / 4 for g, s, t in zip([0.0, 1, 2, 3], [0.0, 1, 2, 3], [1.0, 1, 1, 1])]  # -0.0 first
    assert lines == ["result[%d] is: %f" % (i, v) for i, v in enumerate(expected)]


def run_command(path: Path) -> str | None:
    """The command an example's docstring gives for running it."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    m = re.search(r"^\s*(\.venv/bin/python examples/\S+\.py)\s*$", doc, re.M)
    return m.group(1) if m else None


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_each_example_says_how_to_run_it_and_is_in_the_docs(name: str) -> None:
    assert run_command(EXAMPLES / name) == f".venv/bin/python examples/{name}"
    page = (DOCS / "guide" / "examples.md").read_text()
    assert f'--8<-- "examples/{name}"' in page, f"docs/guide/examples.md does not show {name}"


# The modules whose docstrings the API pages (docs/api/) render.
API_MODULES = ("pyaclnn", "pyaclnn._functions.functional", "pyaclnn._objects.backend", "pyaclnn._objects.device", "pyaclnn._objects.tensor",
               "pyaclnn._objects.executor", "pyaclnn.acl", "pyaclnn.errors", "pyaclnn.dtypes",
               # each operator's public face (pyaclnn/ops/<op>/api.py: its class and function)
               *(f"pyaclnn.ops.{name}.api" for name in ("mse_loss_backward", "group_norm_backward",
                                                        "cross_entropy_loss_grad", "prelu_backward")))


def docstring_examples() -> list[doctest.DocTest]:
    import numpy as np
    import pyaclnn
    finder = doctest.DocTestFinder()
    found = []
    for name in API_MODULES:
        module = importlib.import_module(name)
        found += [t for t in finder.find(module, globs={"np": np, "pyaclnn": pyaclnn}) if t.examples]
    return sorted(found, key=lambda t: t.name)


EXAMPLES_IN_DOCSTRINGS = docstring_examples()


def test_the_docstrings_have_examples() -> None:
    names = {t.name.rsplit(".", 1)[-1] for t in EXAMPLES_IN_DOCSTRINGS}
    assert {"mse_loss_backward", "group_norm_backward", "cross_entropy_loss_grad", "prelu_backward"} <= names


@pytest.mark.parametrize("test", EXAMPLES_IN_DOCSTRINGS, ids=lambda t: t.name)
def test_docstring_example_runs(test: doctest.DocTest, backend: str) -> None:
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=report.append, clear_globs=False)
    assert runner.failures == 0, "".join(report)


def test_no_page_says_an_operator_with_a_reference_has_none() -> None:
    # docs/guide/operators.md kept its Cat example behind `if backend == "acl":  # Cat has no NumPy
    # reference (yet)` after Cat got one, so the example never ran on the reference backend
    from pyaclnn import ops
    with_reference = set(ops.names())
    for page in PAGES:
        for m in re.finditer(r"\b(\w+) has no NumPy reference", (DOCS / page).read_text()):
            assert m.group(1) not in with_reference, (page, m.group(0))


def test_a_page_that_counts_the_operators_with_a_reference_counts_them_all() -> None:
    # the command-line guide said `ops` lists "the four operators with a reference" when it lists ten
    from pyaclnn import ops
    words = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
             "twelve": 12}
    pattern = re.compile(r"\bthe (\w+) operators with a (?:NumPy )?reference", re.I)
    for page in PAGES:
        for m in pattern.finditer((DOCS / page).read_text()):
            if m.group(1).lower() in words:
                assert words[m.group(1).lower()] == len(ops.names()), (page, m.group(0))
