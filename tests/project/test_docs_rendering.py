"""The built site reads as written: what a newcomer found on it (issue 25) cannot come back.

test_docs.py runs the pages' code; this module builds the site (``mkdocs build --strict``, as
.ci/run does) and reads the HTML a browser gets:

- a placeholder such as <op> or <chip> in prose is an HTML element to the browser, which shows
  nothing for it: every element must be a real HTML one;
- reStructuredText's ``::`` is not Markdown: a paragraph ending in "::" shows the colons;
- the API pages name only what a user can import: no ``pyaclnn._x`` path, no ``_name``;
- code lines fit: at most CODE_WIDTH characters, SIDE_BY_SIDE_WIDTH in the porting guide's
  two columns (docs/css/extra.css sizes their font for it);
- the home page's count of operators with a reference is ``len(pyaclnn.ops.names())``, and that
  of the aten tier ``len(pyaclnn.ops.aten_names())``.

PYACLNN_DOCS_SITE=<dir> checks a site built already (the built HTML of another commit, say)
instead of building one. Skipped where mkdocs is not installed (the oldest-dependencies run).
"""
from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE_WIDTH = 100
SIDE_BY_SIDE_WIDTH = 60

# The elements of HTML5 and the SVG the theme inlines: anything else came from text.
HTML_ELEMENTS = frozenset("""
a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption
cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset
figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins
kbd label legend li link main map mark menu meta meter nav noscript object ol optgroup option
output p param picture pre progress q rp rt ruby s samp script search section select slot small
source span strong style sub summary sup table tbody td template textarea tfoot th thead time
title tr track u ul var video wbr
svg path g circle rect line polyline polygon ellipse defs use symbol clippath lineargradient stop
""".split())


class Page(HTMLParser):
    """One built page: its unknown elements, its text (with and without code), its paragraphs'
    text, its link attributes and its code blocks' lines."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.unknown: list[tuple[int, str]] = []
        self.text: list[str] = []
        self.paragraphs: list[str] = []
        self.attributes: list[str] = []
        self.code_lines: list[tuple[bool, str]] = []  # (in the side-by-side columns, line)
        self._skip = 0  # inside <script>/<style>
        self._para: list[str] | None = None
        self._pre: list[str] | None = None
        self._divs: list[bool] = []  # each open <div>: is it a side-by-side one
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in HTML_ELEMENTS:
            self.unknown.append((self.getpos()[0], tag))
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "p":
            self._para = []
        elif tag == "pre":
            self._pre = []
        elif tag == "div":
            self._divs.append("side-by-side" in (dict(attrs).get("class") or "").split())
        if tag == "a":
            self.attributes += [v for k, v in attrs if k in ("href", "title") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        elif tag == "p" and self._para is not None:
            self.paragraphs.append("".join(self._para).strip())
            self._para = None
        elif tag == "pre" and self._pre is not None:
            columns = any(self._divs)
            self.code_lines += [(columns, line) for line in "".join(self._pre).splitlines()]
            self._pre = None
        elif tag == "div" and self._divs:
            self._divs.pop()

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._para is not None:
            self._para.append(data)
        if self._pre is not None:
            self._pre.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Page]:
    """Every built page (but the search index's) by its path in the site."""
    built = os.environ.get("PYACLNN_DOCS_SITE")
    if built:
        out = Path(built)
    else:
        pytest.importorskip("mkdocs")
        pytest.importorskip("mkdocstrings")
        out = tmp_path_factory.mktemp("site")
        run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                             cwd=ROOT, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-4000:]
    pages = {p.relative_to(out).as_posix(): Page(p.read_text(encoding="utf-8"))
             for p in sorted(out.rglob("*.html")) if "search" not in p.relative_to(out).parts}
    assert "index.html" in pages and any(p.startswith("api/") for p in pages), sorted(pages)
    return pages


def api_pages(site: dict[str, Page]) -> dict[str, Page]:
    return {name: page for name, page in site.items() if name.startswith("api/")}


def test_no_placeholder_is_eaten_as_an_html_element(site: dict[str, Page]) -> None:
    # docs/guide/cli.md said the reason starts "acl on the NPU Simulator (<chip>)": the browser
    # showed "acl on the NPU Simulator ()"
    found = [f"{name}:{line}: <{tag}>" for name, page in site.items() for line, tag in page.unknown]
    assert not found, "write these as `code` or &lt;...&gt;:\n" + "\n".join(found)


def test_no_paragraph_ends_in_restructuredtext_double_colon(site: dict[str, Page]) -> None:
    # the docstrings are Markdown (mkdocstrings, Google style): "return values::" shows both colons
    found = [f"{name}: ...{p[-80:]}" for name, page in site.items() for p in page.paragraphs
             if p.endswith("::")]
    assert not found, "a Markdown code block follows a single colon:\n" + "\n".join(found)


PRIVATE = re.compile(r"\bpyaclnn[./]_\w+|(?<![\w/])_[a-z]\w*")


def test_the_api_pages_name_no_private_module_or_name(site: dict[str, Page]) -> None:
    # pyaclnn.acl's docstring sent readers to pyaclnn._objects.handles, which they cannot import
    found = []
    for name, page in api_pages(site).items():
        text = "".join(page.text)
        found += [f"{name}: {m.group(0)} in ...{text[max(0, m.start() - 60):m.end() + 20]!r}"
                  for m in PRIVATE.finditer(text)]
        found += [f"{name}: link {a!r}" for a in page.attributes if PRIVATE.search(a)]
    assert not found, "\n".join(found)


def test_code_lines_fit_the_page(site: dict[str, Page]) -> None:
    # the porting guide's C++ and Python columns scrolled (its lines of ~55 characters in code
    # of 12px, in half the page); elsewhere lines of up to 127 characters did
    found = [f"{name}: {len(line)} > {limit}: {line}" for name, page in site.items()
             for columns, line in page.code_lines
             for limit in [SIDE_BY_SIDE_WIDTH if columns else CODE_WIDTH] if len(line) > limit]
    assert not found, "\n".join(found)


NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                      "twelve thirteen fourteen fifteen sixteen seventeen eighteen "
                                      "nineteen twenty".split())}


def test_the_home_page_counts_the_operators_with_a_reference(site: dict[str, Page]) -> None:
    # docs/index.md listed four operators as those with a reference, and "operators beyond the
    # four", when ten had one
    from pyaclnn import ops
    count = len(ops.names())
    home = site["index.html"]
    said = [m for p in home.paragraphs
            for m in [re.search(r"\b(\w+) operators have an? (?:exact )?(?:NumPy )?reference", p)] if m]
    assert said, "the home page does not say how many operators have a reference"
    for m in said:
        assert NUMBERS.get(m.group(1).lower()) == count, (m.group(0), count)
    text = " ".join("".join(home.text).split())
    for m in re.finditer(r"\bthe (\w+)\b(?=(?: operators\b|[,.)]))", text):
        if m.group(1).lower() in NUMBERS:
            assert NUMBERS[m.group(1).lower()] == count, (m.group(0), count)
    assert any("guide/operators/" in a for a in home.attributes), "the home page does not link the operators page"
    # the aten tier's count, from its table (issue 24): "computes 534 more operators"
    aten = [int(m.group(1)) for p in home.paragraphs for m in re.finditer(r"\bcomputes (\d+) more operators", p)]
    assert aten, "the home page does not say how many operators the aten tier computes"
    assert set(aten) == {len(ops.aten_names())}, (aten, len(ops.aten_names()))
    assert any("coverage/" in a for a in home.attributes), "the home page does not link the coverage page"
