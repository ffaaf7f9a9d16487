"""Small span and trace builders for tests: readable trees without file boilerplate.

``make_span(kind, name, **data)`` builds one span; ``TraceBuilder`` hands out
span ids and ``seq`` in emission order so tests only write what matters::

    t = TraceBuilder()
    root = t.add("agent", "support-agent", input={"q": 1})
    t.add("tool", "search", parent=root, arguments={"q": "x"}, output=[1])
    trace = t.trace()
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from tracetui.core.model import Span, SpanKind, Status, Trace

_COMMON = ("span_id", "parent_id", "seq", "start_ns", "end_ns", "status", "error_type", "attributes", "trace_id")


def make_span(kind: str | SpanKind, name: str, **fields: Any) -> Span:
    """One span; keyword arguments are common fields or the kind's section fields.

    Args:
        kind: A span kind (``"tool"``, ``SpanKind.LLM``...).
        name: Display name; for a tool span also the default ``tool_name``.
        **fields: ``span_id``, ``parent_id``, ``seq``, ``start_ns``, ``end_ns``,
            ``status`` (str or Status), ``error_type``, ``attributes``,
            ``trace_id``; anything else goes into ``span.data``.
    """
    k = SpanKind(kind)
    common = {key: fields.pop(key) for key in _COMMON if key in fields}
    if k is SpanKind.TOOL:
        fields.setdefault("tool_name", name)
    status = common.pop("status", Status.OK)
    return Span(
        span_id=common.pop("span_id", name),
        parent_id=common.pop("parent_id", None),
        seq=common.pop("seq", 0),
        kind=k,
        name=name,
        status=Status(status),
        data=fields,
        **common,
    )


class TraceBuilder:
    """Builds a trace span by span, in emission order (``seq`` = call order).

    Args:
        prefix: Span id prefix, so two runs of one scenario have different ids.
        start_ns: Timestamp of the first span; each span starts 1 ms later.
    """

    def __init__(self, prefix: str = "s", start_ns: int = 1_762_161_242_118_000_000) -> None:
        self.prefix = prefix
        self.start_ns = start_ns
        self.spans: list[Span] = []

    def add(self, kind: str | SpanKind, name: str, parent: str | None = None, **fields: Any) -> str:
        """Append a span under ``parent`` (a span id from an earlier ``add``); returns its id."""
        seq = len(self.spans)
        sid = fields.pop("span_id", f"{self.prefix}{seq}")
        start = self.start_ns + seq * 1_000_000
        span = make_span(kind, name, span_id=sid, parent_id=parent, seq=seq,
                         start_ns=start, end_ns=start + 500_000, **fields)
        self.spans.append(span)
        return sid

    def trace(self, path: str = "") -> Trace:
        """The built trace (spans already in ``seq`` order)."""
        return Trace(spans=list(self.spans), path=path, format="test")


def write_pair(tmp_path: Path, build: Callable[[Any, str], object]) -> tuple[str, str]:
    """Write ``original.jsonl`` and ``replay.jsonl`` in ``tmp_path``, each built by ``build(builder, side)`` on a
    ``tests.builders.TraceBuilder`` (prefix ``o`` / ``r``); returns their paths."""
    from tracetui.core.readers.native import write_trace

    paths = []
    for side in ("original", "replay"):
        t = TraceBuilder(prefix=side[0])
        build(t, side)
        path = tmp_path / f"{side}.jsonl"
        write_trace(str(path), t.trace())
        paths.append(str(path))
    return paths[0], paths[1]


def generated_pair(folder: Path, n: int, edits: int, seed: int) -> tuple[Path, Path]:
    """A synthetic original of ``n`` spans and a replay of it with ``edits`` edits, written in ``folder``
    by the benchmarks' generator (``benchmarks/bench_diff.ensure_data``; kept if already there)."""
    import sys

    root = str(Path(__file__).resolve().parents[1])
    sys.path.insert(0, root)
    try:
        from benchmarks.bench_diff import ensure_data
    finally:
        sys.path.remove(root)
    orig, replays = ensure_data(folder, n, [edits], seed)
    return orig, replays[edits]


class Ticker:
    """A span clock for harness tests: integer ns since the epoch, +1 ms a reading (spans get
    distinct, ordered times without reading the wall clock)."""

    def __init__(self) -> None:
        self.now = 1_790_000_000_000_000_000

    def __call__(self) -> int:
        self.now += 1_000_000
        return self.now


BANK_NEW_READ_FIRST = '''
import importlib.util
spec = importlib.util.spec_from_file_location("bank_agent_base", {bank!r})
base = importlib.util.module_from_spec(spec)
spec.loader.exec_module(base)
TOOLS, READ_TOOLS, RETRIEVERS, MODEL = base.TOOLS, base.READ_TOOLS, base.RETRIEVERS, base.MODEL
MODEL_INFO, PROMPTS, SENSITIVE_FIELDS = base.MODEL_INFO, base.PROMPTS, base.SENSITIVE_FIELDS
def run(ctx, input):
    ctx.tool("get_balance", {{"account": "B2"}})  # the fix: one new read before anything else
    return base.run(ctx, input)
'''
"""The held-out fix of issue 20 as an agent file (``.format(bank=PATH)``): the bank agent of PATH
with one new read before anything else."""


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``tracetui ARGV...`` in this process: ``(exit code, stdout, stderr)``."""
    import io

    from tracetui.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def row_events(d: Any) -> tuple[dict[int, int], dict[int, int]]:
    """Each row's enter and exit event position in the enter/exit walk of a diff's merged row tree (rows by depth),
    computed apart from the code under test: ``(enter, leave)``, row -> event number."""
    enter: dict[int, int] = {}
    leave: dict[int, int] = {}
    event = 0
    open_rows: list[int] = []
    for n, row in enumerate(d.rows):
        while open_rows and d.rows[open_rows[-1]].depth >= row.depth:
            leave[open_rows.pop()] = event
            event += 1
        enter[n] = event
        event += 1
        open_rows.append(n)
    while open_rows:
        leave[open_rows.pop()] = event
        event += 1
    return enter, leave
