"""The documented samples, in idiomatic pyaclnn, for ``python -m pyaclnn samples`` and ``doctor``.

Each operator of pyaclnn/ops has its own in its api.py: ``sample(emit)`` runs the data of the
CANN documentation's C++ sample on the active backend and prints its results as the sample
prints them (one ``emit`` per line; ``examples/<op>.py`` are the same computations, not
installed with the package), ``EXPECTED`` holds each printed value, optionally ``NOTE`` says why
documented data give trivial values, ``ALIAS`` is its short name and ``IN_DOCTOR`` whether doctor
computes it. This module finds them (``pyaclnn.ops``).

The CANN pages print no outputs, so ``EXPECTED`` holds each sample's documented formula
(/work/shared/reference/ops.md) evaluated by hand in float64 on the sample's data; the
closed forms are in the comments, and tests/cli/test_samples.py checks every value against
PyTorch CPU. ``run`` prints each value beside its expected one and says OK or MISMATCH.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import ops

Emit = Callable[[str], None]
Expected = dict[str, tuple[float, ...]]

__all__ = ["samples", "expected", "notes", "aliases", "doctor_samples", "Expected", "run", "resolve",
           "print_values"]

# A float32 result matches when |got - expected| <= ATOL + RTOL * |expected|: float32 rounding
# of values up to ~200, and GroupNorm's cancellation noise (~1e-6) around its exact zeros.
ATOL, RTOL = 1e-5, 1e-5


def print_values(emit: Emit, label: str, tensor: Any) -> None:
    """Each value of ``tensor`` as the C++ samples print it: ``<label>[i] is: <value>``."""
    for i, value in enumerate(tensor.numpy().ravel()):
        emit("%s[%d] is: %f" % (label, i, value))


def _with_samples() -> dict[str, Any]:
    return {op: api for op, api in ops.apis().items() if hasattr(api, "sample")}


def samples() -> dict[str, Emit]:
    """{operator: its sample function}, in pyaclnn/ops folder order."""
    return {op: api.sample for op, api in _with_samples().items()}


def expected() -> dict[str, Expected]:
    """{operator: {printed label: the expected values}}."""
    return {op: api.EXPECTED for op, api in _with_samples().items()}


def notes() -> dict[str, str]:
    """{operator: what is said before its values} for the samples whose data give trivial values."""
    return {op: api.NOTE for op, api in _with_samples().items() if getattr(api, "NOTE", None)}


def aliases() -> dict[str, str]:
    """{short name: operator}: the names of ``bench --case`` too."""
    return {api.ALIAS: op for op, api in _with_samples().items() if getattr(api, "ALIAS", None)}


def doctor_samples() -> tuple[str, ...]:
    """The samples doctor computes and checks: those documented on every SoC."""
    return tuple(op for op, api in _with_samples().items() if getattr(api, "IN_DOCTOR", False))


_TABLES: dict[str, Callable[[], Any]] = {"SAMPLES": samples, "EXPECTED": expected, "NOTES": notes,
                                         "ALIASES": aliases, "DOCTOR_SAMPLES": doctor_samples}


def __getattr__(name: str) -> Any:
    """SAMPLES, EXPECTED, NOTES, ALIASES, DOCTOR_SAMPLES: the tables above, found on first use."""
    if name in _TABLES:
        return _TABLES[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve(name: str) -> str | None:
    """The sample for a name: the operator's (any case, "aclnn" prefix allowed), its short name
    (``ALIAS``, as ``bench --case``) or its folder's (the usual function name); None if there is none."""
    key = name.strip().lower()
    key = key[5:] if key.startswith("aclnn") else key
    for full in samples():
        if key in (full.lower(), ops.folder(full)):
            return full
    return aliases().get(key)


def run(name: str, emit: Emit = print) -> bool:
    """Run sample ``name`` on the active backend; emit each value with the expected one, then
    ``<name>: OK`` or ``<name>: MISMATCH ...``. True when every value matches."""
    api = _with_samples()[name]
    lines: list[str] = []
    api.sample(lines.append)
    wanted = [(label, i, value) for label, values in api.EXPECTED.items() for i, value in enumerate(values)]
    if getattr(api, "NOTE", None):
        emit(f"note: {api.NOTE}")
    bad = []
    for k, line in enumerate(lines):
        if k < len(wanted):
            label, i, want = wanted[k]
            got = float(line.rsplit(" ", 1)[1])
            ok = line.startswith(f"{label}[{i}] is: ") and abs(got - want) <= ATOL + RTOL * abs(want)
            line += f"  (expected {want:f})" + ("" if ok else "  MISMATCH")
            if not ok:
                bad.append(line.split(" is:")[0])
        emit(line)
    if len(lines) != len(wanted):
        bad.append(f"{len(lines)} values printed, {len(wanted)} expected")
    if bad:
        emit(f"aclnn{name}: MISMATCH ({len(bad)} of {len(wanted)}: {', '.join(bad)})")
    else:
        emit(f"aclnn{name}: OK ({len(wanted)} values match the expected within {ATOL:g} + {RTOL:g} * |expected|)")
    return not bad
