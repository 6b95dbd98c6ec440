"""Official samples build and run against the emulated toolkit as on a real one, in both layouts.

Two sets of real clients nobody on this project wrote, read in place from ../shared (never
copied into the project):

- the official op examples of hicann/ops-math and hicann/ops-nn (``samples/ops/test_aclnn_*.cpp``,
  one per operator the emulator implements; SOURCES.txt says where each comes from);
- the C++ samples of the four operators' docs (inside ``spec/*.txt``), whose output must be what
  the Python ports (examples/*_acl.py) print on the reference backend.

They are built as CANN builds them. CANN 9 (hicann/ops-nn build.sh run_example, eager mode):
``g++ FILE -I $INCLUDE -I $INCLUDE/aclnnop -L lib64 -lopapi_nn -lopapi_math -lascendcl
-lnnopbase`` for ops-nn's examples, ``-lopapi_math -lascendcl -lnnopbase`` for ops-math's, with
set_env.sh's LD_LIBRARY_PATH (the link editor finds the libraries' own dependencies there). The
8.x toolkit has one op library, libopapi.so. They run with set_env.sh's environment.

What this needed (tests/emulator): CANN 9's compat libascendcl.so gives the link editor the
acl/aclrt symbols (it had none: "DSO missing from command line"); kernels may read past the
bytes asked for inside the block aclrtMalloc really allocates (ops-nn's cross-entropy example
declares an int64 target over 8 bytes of float data: on a device that read returns garbage, it
does not fault); the operator headers include what the real ones include (<array>, <string>).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import subprocess_env
from emulator.build import toolkit_env
from test_emulator import toolkits  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]


def _shared() -> Path:
    """../shared beside the checkout; for a git worktree, beside the main checkout."""
    here = ROOT.parent / "shared"
    if here.is_dir() or shutil.which("git") is None:
        return here
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                          capture_output=True, text=True)
    main = Path(proc.stdout.strip()).parent.parent / "shared" if proc.returncode == 0 else here
    return main if main.is_dir() else here


SHARED = _shared()
OPS = SHARED / "samples" / "ops"
SPEC = SHARED / "spec"
CXX = os.environ.get("CXX") or "g++"

pytestmark = [
    pytest.mark.skipif(not OPS.is_dir() or not SPEC.is_dir(),
                       reason=f"the official samples are read from {SHARED}/samples and {SHARED}/spec, absent here"),
    pytest.mark.skipif(shutil.which(CXX) is None, reason=f"no C++ compiler ({CXX}) to build the samples"),
]


def op_examples() -> dict[str, str]:
    """samples/ops/test_aclnn_<op>.cpp -> the repository it comes from ("ops-math" / "ops-nn")."""
    if not OPS.is_dir():
        return {}
    repos = {}
    for line in (OPS / "SOURCES.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ops-math", "ops-nn") and parts[1].endswith(".cpp"):
            repos[Path(parts[1]).name] = parts[0]
    return repos


def doc_samples() -> dict[str, tuple[str, str]]:
    """spec/<file>.txt that holds a C++ sample -> (its operator, the sample's source text): from
    the first #include line to the last line that is only "}" (the docs' code block)."""
    found = {}
    for path in sorted(SPEC.glob("*.txt")) if SPEC.is_dir() else []:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("#include")]
        ends = [i for i, line in enumerate(lines) if line.rstrip() == "}"]
        if starts and ends:
            op = lines[0].lstrip("# ").strip()
            found[path.name] = (op, "\n".join(lines[starts[0]:ends[-1] + 1]) + "\n")
    return found


def link_flags(layout: str, repo: str) -> list[str]:
    if layout == "8.x":
        return ["-lopapi", "-lnnopbase", "-lascendcl"]
    ops = ["-lopapi_nn", "-lopapi_math"] if repo == "ops-nn" else ["-lopapi_math"]
    return [*ops, "-lascendcl", "-lnnopbase"]


def set_env(home: Path) -> dict[str, str]:
    """This environment with what the toolkit's set_env.sh exports (and no emulator switches)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EMU_", "ASCEND_"))}
    env.update(toolkit_env(home))
    return env


@pytest.fixture(scope="module")
def built(toolkits, tmp_path_factory):  # noqa: F811
    """Every sample compiled for both layouts, as CANN builds them (the compilers run in parallel):
    (layout, name) -> (binary, the compile command and its errors)."""
    root = tmp_path_factory.mktemp("samples")
    jobs = [(name, OPS / name, repo) for name, repo in op_examples().items()]
    for name, (_, code) in doc_samples().items():
        (root / f"{name}.cpp").write_text(code)  # the docs hold the code inside their text: written out as is
        jobs.append((name, root / f"{name}.cpp", "ops-nn"))
    pending, done = [], {}
    for layout in ("8.x", "9.x"):
        home = toolkits[layout]
        for name, source, repo in jobs:
            out = root / f"{name}.{layout}"
            cmd = [CXX, str(source), "-I", str(home / "include"), "-I", str(home / "include" / "aclnnop"),
                   "-L", str(home / "lib64"), *link_flags(layout, repo), "-o", str(out)]
            pending.append(((layout, name), out, cmd, subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=set_env(home))))
            while sum(p.poll() is None for *_, p in pending) >= (os.cpu_count() or 2):
                pending[0][3].wait()
    for key, out, cmd, proc in pending:
        _, err = proc.communicate(timeout=300)
        done[key] = (out if proc.returncode == 0 else None, f"{' '.join(cmd)}\n{err}")
    return done


def run(built, toolkits, layout: str, name: str, **env: str) -> str:  # noqa: F811
    """Run a built sample with set_env.sh's environment; its stdout (asserting it succeeded)."""
    binary, log = built[(layout, name)]
    assert binary is not None, log
    ran = subprocess.run([str(binary)], capture_output=True, text=True, env={**set_env(toolkits[layout]), **env},
                         timeout=120)
    assert ran.returncode == 0 and "failed" not in ran.stdout, ran.stdout + ran.stderr
    return ran.stdout


@pytest.mark.parametrize("layout", ["8.x", "9.x"])
@pytest.mark.parametrize("example", sorted(op_examples()))
def test_official_op_example_builds_and_runs(built, toolkits, layout, example):  # noqa: F811
    """Each example prints its results and exits 0. Fresh device memory holds zeros here (one
    garbage a device may hold): the cross-entropy example reads 8 such bytes as its second target."""
    out = run(built, toolkits, layout, example, EMU_MALLOC_FILL="0")
    assert any(" is: " in line or "result:" in line for line in out.splitlines()), out


PORTS = {"aclnnMseLossBackward": "mse_loss_backward_acl.py", "aclnnGroupNormBackward": "group_norm_backward_acl.py",
         "aclnnPreluBackward": "prelu_backward_acl.py", "aclnnCrossEntropyLossGrad": "cross_entropy_loss_grad_acl.py"}
_port_output: dict[str, list[str]] = {}


def port_output(op: str) -> list[str]:
    """What the Python port of ``op``'s doc sample prints on the reference backend (its first
    line names the backend, which the C++ sample does not print)."""
    if op not in _port_output:
        proc = subprocess.run([sys.executable, str(ROOT / "examples" / PORTS[op])], capture_output=True, text=True,
                              env=subprocess_env(), timeout=120)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("backend: numpy")
        _port_output[op] = lines[1:]
    return _port_output[op]


@pytest.mark.parametrize("layout", ["8.x", "9.x"])
@pytest.mark.parametrize("spec", sorted(doc_samples()))
def test_doc_sample_prints_what_the_python_port_prints(built, toolkits, layout, spec):  # noqa: F811
    op, _ = doc_samples()[spec]
    out = run(built, toolkits, layout, spec)
    assert printed(out.splitlines()) == pytest.approx(printed(port_output(op)), abs=1.5e-6)
    assert [line.split(" is: ")[0] for line in out.splitlines()] == [line.split(" is: ")[0] for line in port_output(op)]


def printed(lines: list[str]) -> list[float]:
    """The values of "name[i] is: %f" lines. Compared to the printed precision: a result that
    cancels to about 0 prints as 0.000000 or -0.000000 depending on the summation order (the
    GroupNorm sample's gradInput[5] is -4.3e-08 in float64), which no backend fixes."""
    return [float(line.split(" is: ")[1]) for line in lines]


def test_every_emulated_operator_has_its_official_example():
    """The examples cover the operators of the emulator (README "The four operators", "issue 11"),
    GroupNormBackward aside: ops-nn ships no example of it (its doc sample is tested above)."""
    ops = {name[len("test_aclnn_"):-len(".cpp")] for name in op_examples()}
    assert ops == {"add", "inplace_add", "cat", "reduce_sum", "amp_update_scale", "foreach_mul_scalar_list",
                   "cross_entropy_loss_grad", "mse_loss_backward", "prelu_backward"}
    assert {op for op, _ in doc_samples().values()} == {"aclnnMseLossBackward", "aclnnGroupNormBackward",
                                                         "aclnnPreluBackward"}
