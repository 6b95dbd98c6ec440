"""Graph: work captured on a stream (aclmdlRICaptureBegin ... aclmdlRICaptureEnd), replayed for one call.

CANN's graph capture (hicann/runtime docs/zh/dev_guide/04-01_single_stream_capture.md): between
Begin and End the work queued on the stream (phase 2 of the operators, async copies and memsets,
event records and waits) is recorded instead of run; aclmdlRIExecuteAsync replays all of it for
the cost of one call, at the addresses it was captured with, reading what they hold then. So the
memory a graph uses must stay allocated until aclmdlRIDestroy (the guide's limit 7): a Graph keeps
every Tensor its launches used (their memory: a closed Tensor's storage is freed only when the
Graph is closed), the executors' bookkeeping, and the workspace of its launches (a workspace of its
own, not the stream's: eager work on the stream never reuses it). ``close()`` waits for the
streams its replays were queued on, then aclmdlRIDestroy, then frees what it kept.
"""
from __future__ import annotations

from typing import Any

from .._core.constants import (ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
                               ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
from . import lifetimes
from .device import Device, free_now
from .resource import Resource

Stream = Any  # a pyaclnn.Stream (pyaclnn._objects.stream imports this module: no import back)

MODES = {"global": ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, "thread_local": ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
         "relaxed": ACL_MODEL_RI_CAPTURE_MODE_RELAXED}


class Graph(Resource):
    """A captured graph (CANN's aclmdlRI): ``with stream.capture() as graph:`` records the work
    queued on ``stream`` in the block, then ``graph.replay()`` runs all of it again for one call.

    As with torch's CUDAGraph: the captured work does not run during the capture; each replay
    runs it at the addresses it was captured with, so to change inputs between replays, write
    new values into the captured tensors (``Tensor.copy_from``) and read the results from the
    captured outputs. A Graph keeps alive every Tensor, executor and workspace it captured until
    ``close()`` (also ``with graph:``, ``reset()``).

    Attributes:
        stream: the Stream it was captured on (where ``replay()`` runs by default).
        mode: the capture mode, "global", "thread_local" or "relaxed".
        launches: the operator launches captured (through pyaclnn's objects).
    """
    _what = "Graph"

    def __init__(self, stream: Stream, mode: str) -> None:
        """Made by ``Stream.capture`` (aclmdlRICaptureBegin on ``stream``)."""
        self.stream, self.mode, self.device = stream, mode, stream.device
        self.runtime = stream.runtime
        self.launches = 0
        self.raw: Any = None  # the aclmdlRI, once the capture ended
        self._tensors: list[Any] = []  # what its launches use (kept: module docstring)
        self._storages: dict[int, Any] = {}  # id -> Storage, each holding one user for the graph
        self._plans: list[Any] = []  # the executors' bookkeeping (pyaclnn._objects.launch.Planned)
        self._workspace = [0, 0]  # its own workspace slot, given to the stream while it captures
        self._spare: list[int] = []  # workspaces replaced during the capture: its launches may use them
        self._replays: dict[lifetimes.Order, int] = {}  # streams its replays were queued on
        self._box: list[Any] = [None]  # the aclmdlRI, shared with the release function
        self.device.use()
        self.runtime.capture_begin(stream.raw, MODES[mode])
        held = {"storages": self._storages, "workspace": self._workspace, "spare": self._spare}
        self._own(self.device.backend, self.device, "graph", _destroy_graph, self.device, self._box, held,
                  self._replays)
        self._previous = stream.workspace_slot  # the stream's own, given back at the end
        stream.workspace_slot = self._workspace
        stream.order.graph = self

    # -- what the capture records ------------------------------------------------------------------
    def keep(self, planned: Any) -> None:
        """A launch was captured: its Tensors (and their memory) and its executor's bookkeeping
        stay with the graph (called by the launch routine)."""
        self.launches += 1
        self._plans.append(planned)
        for t in planned.tensors:
            self._tensors.append(t)
            storage = t.storage
            if id(storage) not in self._storages:
                storage.users += 1  # freed when the graph lets go too (Storage.release_user)
                self._storages[id(storage)] = storage

    def spare(self, addr: int) -> None:
        """The capture replaced its workspace by a bigger one: the old one stays with the graph."""
        self._spare.append(addr)

    def _end(self) -> None:
        """aclmdlRICaptureEnd; the stream gets its own workspace back."""
        stream = self.stream
        stream.order.graph = None
        stream.workspace_slot = self._previous
        self.device.use()
        try:
            self._box[0] = self.raw = self.runtime.capture_end(stream.raw)
        except BaseException:
            self.close()  # the capture is over without a model (CANN): let go of what it kept
            raise

    # -- using it ----------------------------------------------------------------------------------
    def replay(self, stream: Stream | None = None) -> None:
        """Run the captured work again (aclmdlRIExecuteAsync): queued on ``stream`` (default: the
        stream it was captured on) after the work queued there before; asynchronous like any
        launch (``Tensor.numpy()`` of an output waits for it).

        Args:
            stream: the Stream to run it on; None for the capture stream.

        Raises:
            TypeError: ``stream`` is not a pyaclnn Stream.
            ClosedError: the graph (or the stream) is closed.
            RuntimeError: the capture has not ended (replay after the ``with`` block).
            AclError: CANN refused it, e.g. 107027 on a stream that is capturing.
        """
        self.check_open()
        if self.raw is None:
            raise RuntimeError("Graph.replay: the capture has not ended; replay after the `with stream.capture()` block")
        stream = self.stream if stream is None else stream
        if not isinstance(stream, type(self.stream)):  # a pyaclnn.Stream
            raise TypeError(f"Graph.replay: stream must be a pyaclnn.Stream or None, got {type(stream).__name__}")
        stream.check_open()
        self.device.use()
        self.runtime.model_execute_async(self.raw, stream.raw)
        uses = [s.uses for s in self._storages.values()]
        uses.append(self._replays)
        lifetimes.launched(stream.order, uses)  # host reads of its memory wait for the replay

    def held(self) -> set[tuple[str, Any]]:
        """What it keeps, for ``pyaclnn check``'s leak report: ("h", its aclmdlRI) and ("mem",
        address) of its workspaces and of the memory of the Tensors it captured."""
        held: set[tuple[str, Any]] = {("mem", a) for a in [self._workspace[0], *self._spare] if a}
        held |= {("mem", s.addr) for s in self._storages.values() if s.owned and s.addr}
        if self.raw is not None:
            held.add(("h", self.raw))
        return held

    def reset(self) -> None:
        """``close()`` (torch's CUDAGraph name)."""
        self.close()

    @property
    def handle(self) -> int:
        """The aclmdlRI pointer, as an int (0 while capturing)."""
        self.check_open()
        return 0 if self.raw is None else self.runtime.as_int(self.raw)

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("capturing" if self.raw is None else f"{self.launches} launch(es)")
        return f"<pyaclnn.Graph {state} on stream {self.stream!r}>"


def _destroy_graph(device: Device, box: list[Any], held: dict[str, Any], replays: dict[lifetimes.Order, int]) -> None:
    """Wait for the streams its replays were queued on, aclmdlRIDestroy, then let go of its memory."""
    device.use()
    runtime = device.runtime
    try:
        lifetimes.wait_for(replays)
        if box[0] is not None:
            model, box[0] = box[0], None
            runtime.model_destroy(model)
    finally:
        workspace, storages = held["workspace"], held["storages"]
        for addr in [workspace[0], *held["spare"]]:
            if addr:
                free_now(device, addr)
        workspace[:] = [0, 0]
        held["spare"].clear()
        for storage in list(storages.values()):
            storage.release_user()
        storages.clear()


class Capture:
    """``Stream.capture(mode)``: ``with`` it, the block's work on the stream is recorded into the
    Graph it yields (a class, not a generator: the Graph's line is the user's ``with``)."""

    def __init__(self, stream: Stream, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"Stream.capture: mode must be one of {sorted(MODES)}, got {mode!r}")
        self.stream, self.mode = stream, mode
        self.graph: Graph | None = None

    def __enter__(self) -> Graph:
        stream = self.stream
        stream.check_open()
        if stream.order.graph is not None:
            raise RuntimeError("Stream.capture: the stream is capturing already (one capture per stream)")
        self.graph = Graph(stream, self.mode)
        return self.graph

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        graph = self.graph
        assert graph is not None
        if kind is None:
            graph._end()  # private: this module's own class, ended by its capture context
            return
        if self.stream.order.graph is graph:  # the block failed: end the capture, drop what it made
            try:
                graph._end()  # private: as above
            except Exception:  # noqa: BLE001 - the block's own error is the one to raise
                pass
            graph.close()
