"""Reader registry: sniff a file's format from its content, read it, pick one run.

``read_trace(path)`` is the one entry point. Formats are recognised by content,
never by extension (``../shared/design/formats.md`` §10); ``format=`` overrides.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from typing import BinaryIO

from tracetui.core.errors import FormatNotRecognised, ReadError, TraceNotFound
from tracetui.core.model import ReadIssue, Span, SpanKind, Trace
from tracetui.core.readers.bare_args import name_bare_arguments
from tracetui.core.readers.base import IssueList, Reader, ReaderOutput, RunSpans
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.limits import read_rest
from tracetui.core.readers.mask import mask_data, mask_spans
from tracetui.core.readers.gc_paused import promote_young_objects
from tracetui.core.readers.native import NativeReader
from tracetui.core.readers.sniff_keys import SKELETON_READ, skeleton
from tracetui.core.readers.otlp import OtlpJsonReader
from tracetui.core.readers.tree import NOT_IN_FILE_WHY, content_issues, finish_spans

__all__ = ["READERS", "READER_NAMES", "all_readers", "Reader", "ReaderOutput", "RunSpans", "TraceFile", "finish_spans", "pick_run", "read_replay", "read_runs", "read_trace", "reader_names", "sniff_format", "split_run_ref"]

def _readers() -> tuple[Reader, ...]:
    """Known readers, in sniffing order: most specific shape first, the generic
    hand-written cassette shapes last (one ``# reader:`` block per module)."""
    readers: list[Reader] = [NativeReader(), OtlpJsonReader()]
    # reader: otel-sdk-json (ConsoleSpanExporter, any-agent, JS ReadableSpan)
    from tracetui.core.readers.otel_sdk import OtelSdkJsonReader
    readers.append(OtelSdkJsonReader())
    # reader: langfuse
    from tracetui.core.readers.langfuse import LangfuseReader
    readers.append(LangfuseReader())
    # reader: langsmith (run-ingest post/patch payloads, run exports)
    from tracetui.core.readers.langsmith import LangSmithReader
    readers.append(LangSmithReader())
    # reader: openai-agents (Agents SDK trace-ingest batches)
    from tracetui.core.readers.openai_agents import OpenAIAgentsReader
    readers.append(OpenAIAgentsReader())
    # reader: inspect-ai (.json logs and .eval zips, one run per sample x epoch)
    from tracetui.core.readers.inspect_ai import InspectAiReader
    readers.append(InspectAiReader())
    # reader: vcrpy (cassettes: LLM calls, reconstructed tool calls, other HTTP)
    from tracetui.core.readers.vcrpy import VcrpyReader
    readers.append(VcrpyReader())
    # reader: tau-bench (results arrays {task_id, trial, reward, info, traj}, one run per trial)
    from tracetui.core.readers.tau_bench import TauBenchReader
    readers.append(TauBenchReader())
    # reader: swe-agent (.traj trajectories, v1 function-calling and legacy v0.x)
    from tracetui.core.readers.swe_agent import SweAgentReader
    readers.append(SweAgentReader())
    # reader: openhands (V0 action/observation events, V1 SDK events)
    from tracetui.core.readers.openhands import OpenHandsReader
    readers.append(OpenHandsReader())
    # reader: atif (Harbor ATIF-v1.x trajectories)
    from tracetui.core.readers.atif import AtifReader
    readers.append(AtifReader())
    # reader: cassettes (hand-written shapes a-e; most generic, keep last)
    from tracetui.core.readers.cassettes import CASSETTE_READERS
    readers.extend(r() for r in CASSETTE_READERS)  # cassette-tools, -keyed, -events, -hashed, -blobs
    return tuple(readers)


READER_NAMES: tuple[str, ...] = (
    "tracetui", "otlp-json", "otel-sdk-json", "langfuse", "langsmith", "openai-agents", "inspect-ai", "vcrpy",
    "tau-bench", "swe-agent", "openhands", "atif",
    "cassette-tools", "cassette-keyed", "cassette-events", "cassette-hashed", "cassette-blobs",
)
"""Every reader's name, in sniffing order, known without importing the reader modules (the CLI's
``--input-format`` choices): start-up stays light. tests/core/test_reader_native.py checks it
against the registry."""

_REGISTRY: tuple[Reader, ...] | None = None


def all_readers() -> tuple[Reader, ...]:
    """The readers in sniffing order, built (their modules imported) on first use: a command that
    reads no file, and the TUI's first frame, never pay for twenty reader modules."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _readers()
    return _REGISTRY


_MOVED = {"read_pair", "start_pair", "PairStart"}
"""Names that lived here before the fast paths for big files became ``tracetui.core.load``."""


def __getattr__(name: str) -> object:
    if name == "READERS":  # the registry, as a module attribute (built on first use)
        return all_readers()
    if name in _MOVED:  # deprecated: docs/performance.md showed tracetui.core.readers.read_pair
        import importlib
        import warnings

        warnings.warn(f"tracetui.core.readers.{name} moved to tracetui.core.load.{name}", DeprecationWarning,
                      stacklevel=2)
        return getattr(importlib.import_module("tracetui.core.load"), name)  # the layer above: no import statement
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
"""Known readers, in sniffing order (most specific first)."""

SNIFF_BYTES = 64 * 1024

def reader_names() -> list[str]:
    """The ``--format`` names, in sniffing order."""
    return list(READER_NAMES)


def _reader(name: str) -> Reader:
    for r in all_readers():
        if r.name == name:
            return r
    raise ValueError(f"unknown format {name!r}; known formats: {', '.join(reader_names())}")


def sniff_format(head: bytes) -> str | None:
    """Name of the first reader whose ``sniff`` accepts these leading bytes, or None."""
    for r in all_readers():
        if r.sniff(head):
            return r.name
    return None


def split_run_ref(ref: str | os.PathLike[str]) -> tuple[str, str | None]:
    """Split ``FILE#RUN`` into the file and the run id.

    A path that exists as written is a file, even with a ``#`` in its name;
    otherwise the text after the last ``#`` names a run (``runs.json#task-3-trial-1``).
    An empty run (``FILE#``) means "no run given".

    Returns:
        ``(path, run)``; ``run`` is None when the reference names no run.
    """
    text = os.fspath(ref)
    if "#" not in text or os.path.exists(text):
        return text, None
    path, run = text.rsplit("#", 1)
    return path, (run or None)


def _open(p: str) -> BinaryIO:
    try:
        return open(p, "rb")  # closed by the caller's with-block
    except FileNotFoundError:
        raise ReadError(p, "no such file") from None
    except IsADirectoryError:
        raise ReadError(p, "is a directory, expected a trace file") from None
    except OSError as exc:
        raise ReadError(p, f"cannot be read: {exc.strerror or exc}") from None


def _read_file(p: str, format: str | None) -> tuple[Reader, ReaderOutput]:
    """Sniff (unless ``format`` is given) and run the reader on one file, with the cyclic GC off."""
    with _open(p) as fh:
        try:
            head = fh.read(SNIFF_BYTES)
            if format is None:
                if not head or head.isspace():
                    rest = fh.read() if len(head) == SNIFF_BYTES else b""
                    if not rest or rest.isspace():  # no strip(): it copies the whole file
                        raise ReadError(p, "file is empty")
                format = sniff_format(head)
                if format is None and len(head) == SNIFF_BYTES and not head.startswith(b"PK"):
                    # a long value first hides the keys: sniff again on the keys and structure (sniff_keys)
                    head += fh.read(SKELETON_READ - len(head))  # fh stays right after head, as _read wants
                    format = sniff_format(skeleton(head, SNIFF_BYTES))
                if format is None:
                    raise FormatNotRecognised(
                        p,
                        f"format not recognised: none of the {len(all_readers())} readers knows this content "
                        "(OTLP/JSON, OTel span dumps, Langfuse, LangSmith, OpenAI Agents, inspect-ai, vcrpy, "
                        "tau-bench, SWE-agent, OpenHands, ATIF, cassettes, tracetui/1); "
                        "pass --input-format NAME if you know it (`tracetui show --help` lists the names)",
                    )
            reader = _reader(format)
            gc_was = gc.isenabled()
            gc.disable()  # readers build many small containers and no cycles: the cyclic GC only costs (performance.md: x2.4)
            try:
                return reader, _read(reader, p, fh, head)
            finally:
                promote_young_objects()
                if gc_was:
                    gc.enable()
        except OSError as exc:
            raise ReadError(p, f"cannot be read: {exc.strerror or exc}") from None


def read_trace(path: str | os.PathLike[str], *, format: str | None = None, trace_id: str | None = None) -> Trace:
    """Read one run from a trace file.

    Args:
        path: The file, or ``FILE#RUN`` to pick a run (``split_run_ref``).
        format: A reader name (see ``reader_names()``) to skip sniffing.
        trace_id: Which run to pick when the file holds several (its trace id
            or run id: exact, case-insensitive, or a unique prefix); default the
            ``#RUN`` of ``path``, else the first in file order. ``Trace.trace_ids``
            lists them all.

    Returns:
        The run's ``Trace``: spans sorted by ``seq`` (derived from ``start_ns``
        where the source has no order), with ``issues`` listing everything
        skipped or doubted (file, line, field).

    Raises:
        ReadError: the file cannot be opened, or nothing in it can be loaded;
            ``FILE#RUN`` and ``trace_id`` name different runs.
        FormatNotRecognised: no reader recognises the content.
        TraceNotFound: the run is not in the file, or a prefix matches several.
        ValueError: ``format`` is not a known reader name.
    """
    p, run = split_run_ref(path)
    if run is not None and trace_id is not None and run.lower() != trace_id.lower():
        raise ReadError(p, f"two runs asked for: #{run} and --trace-id {trace_id}")
    reader, out = _read_file(p, format)
    return pick_run(reader, out, p, trace_id if trace_id is not None else run)


@dataclass(slots=True)
class TraceFile:
    """Every run of one trace file (``read_runs``).

    Attributes:
        path: The file.
        format: The reader's name.
        runs: One ``Trace`` per run, in file order (each finished like ``read_trace``'s).
        issues: What the reader skipped or doubted, for the whole file.
    """

    path: str
    format: str
    runs: list[Trace]
    issues: list[ReadIssue] = field(default_factory=list)


def read_runs(path: str | os.PathLike[str], *, format: str | None = None) -> TraceFile:
    """Read every run of a trace file (``tracetui show``); ``FILE#RUN`` keeps only that run.

    Raises:
        ReadError, FormatNotRecognised, TraceNotFound, ValueError: as ``read_trace``.
    """
    p, run = split_run_ref(path)
    reader, out = _read_file(p, format)
    if run is not None:
        t = pick_run(reader, out, p, run)
        return TraceFile(p, reader.name, [t], list(t.issues))
    runs = [r for r in out.runs if r.spans or r.header]
    if not runs:
        raise ReadError(p, "no spans could be loaded" + (f"; first problem: {out.issues[0]}" if out.issues else ""))
    ids = [r.trace_id for r in runs if r.trace_id is not None]
    traces = [_finish(reader, r, p, ids, out.issues, named=len(runs) > 1) for r in runs]
    issues = list(out.issues)
    for t in traces:
        issues.extend(t.issues[len(out.issues):])  # each run's own, after the file's
    return TraceFile(p, reader.name, traces, issues)


def read_replay(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    trace_id: str | None = None,
    replay_trace_id: str | None = None,
) -> Trace:
    """Read the replay side of a pair: ``replay_trace_id`` (or ``REPLAY#RUN``) if given, else the
    original's ``trace_id`` when the file holds it, else the first run (a replay usually runs under a
    trace id of its own).

    Raises:
        TraceNotFound: ``replay_trace_id`` is given and not in the file.
        ReadError, FormatNotRecognised, ValueError: as ``read_trace``.
    """
    p, run = split_run_ref(path)
    if run is not None or replay_trace_id is not None or trace_id is None:
        return read_trace(path, format=format, trace_id=replay_trace_id)
    try:
        return read_trace(p, format=format, trace_id=trace_id)
    except TraceNotFound:
        return read_trace(p, format=format)


def _read(reader: Reader, path: str, fh: BinaryIO, head: bytes) -> ReaderOutput:
    """Run a reader on an open file whose first bytes, ``head``, are already read.

    A reader with ``read_file`` (tracetui/1) parses while reading; the others
    get the whole file as bytes, read again from the start when the file can
    seek (``head + rest`` would copy it all once more), up to ``limits.read_budget``.
    """
    read_file = getattr(reader, "read_file", None)
    if read_file is not None:
        return read_file(path, fh, head)  # type: ignore[no-any-return]
    return reader.read(path, read_rest(fh, path, head))  # a pipe or /dev/zero: stopped past its allowance


def _select(runs: list[RunSpans], p: str, want: str) -> RunSpans:
    """The run named ``want``: exact id (case-insensitive), else the one run whose id starts with it.
    A run's id is its ``trace_id``; its header's ``run_id`` (tracetui/1) names it too."""
    w = want.lower()
    named = [r for r in runs if r.trace_id is not None]

    def names(r: RunSpans) -> list[str]:
        alias = r.header.get("run_id") if r.header else None
        return [r.trace_id.lower(), alias.lower()] if isinstance(alias, str) else [r.trace_id.lower()]  # type: ignore[union-attr]

    found = [r for r in named if w in names(r)]
    if not found:
        found = [r for r in named if any(n.startswith(w) for n in names(r))]
    if len(found) == 1 or (found and all(r.trace_id == found[0].trace_id for r in found)):
        return found[0]
    ids = [r.trace_id for r in (found or named)]
    shown = ", ".join(i for i in ids[:12] if i) + (f", ... ({len(ids)} in all)" if len(ids) > 12 else "")
    if found:
        raise TraceNotFound(p, f"run {want!r} is ambiguous: it starts {len(found)} run ids ({shown})")
    raise TraceNotFound(p, f"run {want!r} not in file; it holds: {shown or '(no run ids)'}")


def pick_run(reader: Reader, out: ReaderOutput, p: str, trace_id: str | None, *, indexed: bool = False) -> Trace:
    runs = [r for r in out.runs if r.spans or r.header]
    if not runs:
        raise ReadError(p, "no spans could be loaded" + (f"; first problem: {out.issues[0]}" if out.issues else ""))
    ids = [r.trace_id for r in runs if r.trace_id is not None]
    # No run asked for: the first with spans (a header written twice at the top makes an empty first run).
    run = next((r for r in runs if r.spans), runs[0]) if trace_id is None else _select(runs, p, trace_id)
    return _finish(reader, run, p, ids, out.issues, named=len(runs) > 1, indexed=indexed)


def _finish(reader: Reader, run: RunSpans, p: str, ids: list[str], file_issues: list[ReadIssue], *, named: bool,
            indexed: bool = False) -> Trace:
    """One run as a ``Trace``: its tree made sound, its issues = the file's, the run's own, then
    what finishing found (orphans, skew) and content the producer did not capture."""
    issues = IssueList(file_issues)  # capped (base.MAX_ISSUES) and counted, whatever list each reader kept
    issues.extend(run.issues)
    spans = run.spans if run.in_order else finish_spans(run.spans, p, issues)
    if not indexed and reader.name != "tracetui":  # tracetui/1 holds arguments as the agent passed them
        name_bare_arguments(spans)
    hint = getattr(reader, "content_hint", None)  # optional Reader attribute (base.py)
    shown = _content_view(spans)  # LazySpans: what the loader found, payloads unread
    issues.extend(content_issues(shown, p, run.trace_id if named else None, why=hint or NOT_IN_FILE_WHY))
    mask_spans(spans)  # credentials the file carries never reach show/diff/the TUI (readers.mask)
    header = run.header
    if header and isinstance(header.get("input"), (str, dict)):
        header = {**header, "input": mask_data(SpanKind.OTHER, {"input": header["input"]})["input"]}
    return Trace(spans=spans, header=header, path=p, format=reader.name,
                 trace_id=run.trace_id, trace_ids=ids, issues=issues.finished())


def _content_view(spans: list[Span]) -> list[Span]:
    """``spans`` for ``content_issues``, each ``LazySpan`` the loader found complete replaced by a
    stand-in of its kind with content (same verdict, no payload read)."""
    stand_in = {
        SpanKind.LLM: Span("", None, 0, SpanKind.LLM, "", data={"messages": [{"content": "-"}]}),
        SpanKind.TOOL: Span("", None, 0, SpanKind.TOOL, "", data={"arguments": {}}),
    }
    get = stand_in.get
    return [get(s.kind, s) if type(s) is LazySpan and not s._miss and (s._key is not None or s._part is not None)
            else s for s in spans]
