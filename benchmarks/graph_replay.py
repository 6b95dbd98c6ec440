#!/usr/bin/env python3
"""Host time of one graph replay against the same launches made one by one (issue 26, point 6).

The work: 100 small launches on one stream, each a repeatable aclnnInplaceAdd executor (x += 2 * y
on 4-element float32 tensors) run with ``Executor.run(stream)``. Timed, on the NumPy reference
backend and on the acl backend through the CANN host emulator (tests/emulator, 8.x layout):

  eager    the 100 ``run(stream)`` calls;
  replay   one ``Graph.replay()`` of those 100 launches captured once with ``stream.capture()``;

host time only (the stream is synchronized between batches, outside the timing), as the median
over batches. The target of the issue is replay <= 10% of eager; reported, never asserted (the
machine may be noisy).

Usage: python benchmarks/graph_replay.py [--batches N] [--launches N] [--json PATH] [--only numpy|acl]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EMULATOR_BUILD = REPO / "tests" / "emulator" / "build.py"


def measure(batches: int, launches: int) -> dict[str, Any]:
    """In this process, on the backend PYACLNN_BACKEND selects: per-batch host times (us)."""
    import numpy as np
    import pyaclnn

    eager: list[float] = []
    replay: list[float] = []
    with pyaclnn.Device(0) as device, device.create_stream() as stream:
        x = pyaclnn.Tensor.zeros(4, device=device)
        y = pyaclnn.Tensor.from_numpy(np.ones(4, np.float32), device)
        ops = [pyaclnn.Op("InplaceAdd", x, y, np.float32(2), repeatable=True) for _ in range(launches)]
        with stream.capture() as graph:
            for op in ops:
                op.run(stream)
        for _ in range(batches + 1):  # the first batch warms up
            t0 = time.perf_counter()
            for op in ops:
                op.run(stream)
            t1 = time.perf_counter()
            stream.synchronize()
            t2 = time.perf_counter()
            graph.replay()
            t3 = time.perf_counter()
            stream.synchronize()
            eager.append((t1 - t0) * 1e6)
            replay.append((t3 - t2) * 1e6)
        total = float(x.numpy()[0])
        graph.close()
        for op in ops:
            op.close()
    assert total == 2 * 2 * launches * (batches + 1), total  # every launch and replay ran
    return {"backend": pyaclnn.backend_info()["backend"] if isinstance(pyaclnn.backend_info(), dict) else "",
            "eager_us": eager[1:], "replay_us": replay[1:]}


def _summary(name: str, r: dict[str, Any], launches: int) -> dict[str, float]:
    eager, replay = statistics.median(r["eager_us"]), statistics.median(r["replay_us"])
    out = {"eager_us": eager, "replay_us": replay, "ratio": replay / eager}
    print(f"{name:<22} {launches} eager launches {eager:9.1f} us   one replay {replay:8.1f} us   "
          f"replay/eager {100 * out['ratio']:5.1f}% (target <= 10%)")
    return out


def _emulator(batches: int, launches: int) -> dict[str, Any] | None:
    spec = importlib.util.spec_from_file_location("pyaclnn_bench_emulator_build", EMULATOR_BUILD)
    if spec is None or spec.loader is None:
        return None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    with tempfile.TemporaryDirectory(prefix="pyaclnn-graph-replay-") as tmp:
        try:
            home = build.build_toolkit(Path(tmp), "8.x")
        except build.EmulatorBuildError as exc:
            print(f"graph_replay: cannot build the emulator: {exc}", file=sys.stderr)
            return None
        env = dict(os.environ)
        env.update(build.toolkit_env(home))
        env["PYACLNN_BACKEND"] = "acl"
        env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        proc = subprocess.run([sys.executable, __file__, "--worker", "--batches", str(batches), "--launches",
                               str(launches)], env=env, stdout=subprocess.PIPE, text=True, check=False)
        if proc.returncode != 0:
            print("graph_replay: the emulator worker failed", file=sys.stderr)
            return None
        return json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", choices=("numpy", "acl"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.batches, args.launches)))
        return 0
    results: dict[str, Any] = {}
    if args.only in (None, "numpy"):
        os.environ["PYACLNN_BACKEND"] = "numpy"
        results["reference"] = _summary("reference (numpy)", measure(args.batches, args.launches), args.launches)
    if args.only in (None, "acl"):
        emu = _emulator(args.batches, args.launches)
        if emu is None:
            return 1
        results["emulator"] = _summary("acl on the emulator", emu, args.launches)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
