"""Reading a pair of runs at once, fast: ``read_pair`` (and ``start_pair``, its first step taken ahead).

Same result as ``read_trace(original)`` and ``read_replay(replay)``. A big tracetui/1 file goes
through the index loader (``native_index``: payloads left in the file), the replay is parsed in a
child process meanwhile, and the early look (``early``) finds the first divergence before either
file is read whole. Two big OTLP/JSON files have their own early look (``otlp_early``: each side
made in a child process), then are read whole by the OTLP reader, the replay in a child process meanwhile
(``read_child``; with the early look, once it is over). The readers are called through their module
(``readers.read_trace``) so that a test can stand in for them.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import Any, Callable

from tracetui.core import readers
from tracetui.core.errors import ReadError, TraceNotFound
from tracetui.core.load import early as early_look
from tracetui.core.load import index_cache
from tracetui.core.load import native_index as ni
from tracetui.core.load import otlp_early
from tracetui.core.load.read_child import ReadChild
from tracetui.core.model import Trace
from tracetui.core.readers import split_run_ref
from tracetui.core.readers.base import ReaderOutput
from tracetui.core.readers.gc_paused import promote_young_objects

__all__ = ["PairStart", "keep_pair", "read_pair", "start_pair"]


def read_pair(
    original: str | os.PathLike[str],
    replay: str | os.PathLike[str],
    *,
    original_format: str | None = None,
    replay_format: str | None = None,
    trace_id: str | None = None,
    replay_trace_id: str | None = None,
    index_min_bytes: int | None = None,
    processes: bool = True,
    early: Callable[[Any], None] | None = None,
    progress: Callable[[float], None] | None = None,
    started: PairStart | None = None,
    keep: bool = True,
) -> tuple[Trace, Trace]:
    """Read both runs of a pair: ``(readers.read_trace(original, ...), readers.read_replay(replay, ...))``, faster.

    Same runs, spans, issues and errors as those two calls (the original's error first). A
    tracetui/1 file of at least ``index_min_bytes`` goes through the index loader
    (``native_index``): its spans are ``LazySpan``s whose ``data`` is read from the file on
    first access, and alignment and comparison use what the loader computed. When both files
    qualify and two cores are free, the replay is parsed in a child process meanwhile.

    Args:
        original: The original run (``FILE`` or ``FILE#RUN``).
        replay: The replay (``FILE`` or ``FILE#RUN``).
        original_format, replay_format: Reader names, as ``read_trace``'s ``format``.
        trace_id: The original's run (``read_trace``), and the replay's when the file holds it (``read_replay``).
        replay_trace_id: The replay's run (``read_replay``).
        index_min_bytes: Smallest file read by the index loader (default ``native_index.INDEX_MIN_BYTES``).
        processes: Allow the child process (False: both files parsed here, one after the other).
        early: Called with the first rows of the pair's diff and its first divergence
            (``core.load.early.EarlyTraceDiff``) before the files are read whole, when both are
            read by the index loader or both are OTLP/JSON files of ``OtlpJsonReader.lazy_min_bytes``
            or more (``otlp_early``), no run is picked, and the early look finds the first
            divergence cheaply (not called otherwise). It runs in this thread; the read goes
            on when it returns. Its exceptions propagate.
        progress: Called often while the original is read by the index loader, with the share of
            its bytes parsed (0..1; 0 while the early look runs). An exception it raises ends the
            read (it propagates; the child process is stopped): the TUI stops a read this way
            when it quits.
        started: ``start_pair``'s result for the same arguments (files opened and the replay's
            child started ahead, while the caller did something else); used when its arguments
            are these, else stopped and ignored.
        keep: Keep each side read here in the index cache (``core.load.index_cache``) for the next
            opening (False: the caller may call ``keep_pair`` later, once it has shown the pair). A
            side the cache holds (same file, unchanged, same arguments) is taken from it: no early
            look then, and nothing read but the other side.

    Returns:
        ``(original, replay)``.

    Raises:
        ReadError, FormatNotRecognised, TraceNotFound, ValueError: as ``read_trace`` /
            ``read_replay``; the exception's ``side`` attribute is ``"original"`` or ``"replay"``.
    """
    args = (os.fspath(original), os.fspath(replay), original_format, replay_format, trace_id, replay_trace_id,
            index_min_bytes, processes, early is not None)
    po, orun = split_run_ref(original)
    if orun is not None and trace_id is not None and orun.lower() != trace_id.lower():
        if started is not None:
            started.cancel()
        err = ReadError(po, f"two runs asked for: #{orun} and --trace-id {trace_id}")
        err.side = "original"  # type: ignore[attr-defined]
        raise err
    sides = _sides(args)
    hit = started.cached if started is not None and started.args == args and started.opened else None
    if hit is None:
        hit = _cached(sides, early is not None)
    if hit[0] is not None or hit[1] is not None:  # kept by an earlier opening (index_cache): no early look
        if started is not None:
            started.cancel()
        return _with_cached(sides, hit, index_min_bytes, keep)
    first, second = _read_pair(args, early, progress, started)
    if keep:
        index_cache.store(sides[0], first)
        index_cache.store(sides[1], second)
    return first, second


def keep_pair(original: str | os.PathLike[str], replay: str | os.PathLike[str], pair: tuple[Trace, Trace], *,
              original_format: str | None = None, replay_format: str | None = None, trace_id: str | None = None,
              replay_trace_id: str | None = None) -> None:
    """Keep ``pair`` (``read_pair(original, replay, ..., keep=False)``'s result, same arguments) in the index cache
    for the next opening: what ``read_pair`` does itself by default. A side already kept costs a 55-byte read.
    Never raises but for ``KeyboardInterrupt``-like exceptions."""
    sides = _sides((os.fspath(original), os.fspath(replay), original_format, replay_format, trace_id,
                    replay_trace_id))
    index_cache.store(sides[0], pair[0])
    index_cache.store(sides[1], pair[1])


def _read_pair(args: tuple[Any, ...], early: Callable[[Any], None] | None, progress: Callable[[float], None] | None,
               started: PairStart | None) -> tuple[Trace, Trace]:
    """``read_pair`` of files not in the index cache."""
    original, replay, original_format, replay_format, trace_id, replay_trace_id = args[:6]
    po, orun = split_run_ref(original)
    pr, rrun = split_run_ref(replay)
    osrc = rsrc = early_mod = None
    gc_held = False  # the collector disabled here (the early look), enabled again at the end
    child = None  # the replay parsed in a forked child; the original is parsed here meanwhile (both in
    # children measured slower: 7.0 against 5.9 s to the loaded pair, docs/performance.md)
    side = "original"
    try:
        if started is not None and started.args == args and started.opened:
            osrc, rsrc, early_mod, child = started.osrc, started.rsrc, started.early_mod, started.child
        else:
            if started is not None:
                started.cancel()
            osrc, rsrc, early_mod, child = _open_pair(*args)
        known: dict[int, Any] = {}  # the original's spans the early look parsed: not parsed again
        if early_mod is not None:
            # The collector stays off from the early look to the end of the read (a collection between
            # the two, over every span parsed so far, took ~0.1 s before the early rows were shown).
            gc_held = gc.isenabled()
            gc.disable()
            found = early_mod.early_diff(osrc, rsrc, stream=child, known=known,  # type: ignore[arg-type]
                               tick=(lambda: progress(0.0)) if progress is not None else None)
            if found is not None:
                early(found)  # type: ignore[misc]
            elif progress is not None:
                progress(0.0)  # a read stopped during the early look (its tick raised) stops here
        if type(child) is ReadChild:
            child.go()  # the replay read in the child (gated while the early look had the cores) from now
        held = early_mod if type(early_mod) is otlp_early.OtlpPair else None  # the files' bytes it read
        if osrc is None:
            first = held.read_whole(0) if held is not None else None
            if first is None:
                first = readers.read_trace(original, format=original_format, trace_id=trace_id)
        else:
            got = _indexed(lambda src: ni.parse_indexed(src, known, progress), osrc)
            first = readers.pick_run(ni.NATIVE, got, po, trace_id if trace_id is not None else orun, indexed=True)
        side = "replay"
        if rsrc is None:
            second = child.result() if type(child) is ReadChild else None
            if second is None and child is not None and progress is not None:
                progress(1.0)  # the original is read; a stopped read (the child killed) ends here
            child = None
            if second is None and held is not None:
                second = held.read_whole(1)
            if second is None:
                second = readers.read_replay(replay, format=replay_format, trace_id=trace_id,
                                             replay_trace_id=replay_trace_id)
            return first, second
        if rrun is not None and replay_trace_id is not None and rrun.lower() != replay_trace_id.lower():
            raise ReadError(pr, f"two runs asked for: #{rrun} and --trace-id {replay_trace_id}")
        out = child.result() if child is not None else None
        child = None
        if out is None:
            if progress is not None:
                progress(1.0)  # the original is read; a stopped read (the child killed) ends here
            out = _indexed(ni.parse_indexed, rsrc)
        else:
            promote_young_objects()
        return first, _pick_replay(out, pr, rrun, trace_id, replay_trace_id)
    except BaseException as exc:
        if child is not None:
            child.cancel()
        if type(early_mod) is otlp_early.OtlpPair:
            early_mod.cancel()
        try:
            exc.side = side  # type: ignore[attr-defined]
        except AttributeError:
            pass
        raise
    finally:
        if gc_held:
            gc.enable()


@dataclass(slots=True)
class PairStart:
    """``read_pair``'s first step taken ahead (``start_pair``): both files opened for the index loader
    and the replay's child process started. Pass it to ``read_pair(started=)`` with the same
    arguments; ``cancel`` stops the child when it will not be used."""

    args: tuple[Any, ...]
    opened: bool = False
    osrc: Any = None
    rsrc: Any = None
    early_mod: Any = None
    child: Any = None
    cached: tuple[Trace | None, Trace | None] | None = None  # the sides the index cache held (no child then)

    def cancel(self) -> None:
        """Stop the child process, if one was started, and let go of the files (idempotent; safe while
        ``read_pair`` uses it in another thread: that read then fails or stops)."""
        child, self.child, self.opened = self.child, None, False
        self.osrc = self.rsrc = None  # closed when no span holds them (PayloadFile)
        if child is not None:
            child.cancel()
        if type(self.early_mod) is otlp_early.OtlpPair:  # its own children (the early sides)
            self.early_mod.cancel()


def start_pair(
    original: str | os.PathLike[str],
    replay: str | os.PathLike[str],
    *,
    original_format: str | None = None,
    replay_format: str | None = None,
    trace_id: str | None = None,
    replay_trace_id: str | None = None,
    index_min_bytes: int | None = None,
    processes: bool = True,
    early: bool = True,
) -> PairStart:
    """Take ``read_pair``'s first step now, in this thread: open both files and start the child process
    that parses the replay (forked here: call it before starting threads, as ``tracetui ORIGINAL REPLAY``
    does before importing the TUI, and the child works while the caller goes on). Arguments as
    ``read_pair``'s (``early``: whether an ``early`` callback will be passed). With an early look the
    child, having started ahead, also scans more of the original (``core.load.structure.Meet``); for
    two big OTLP/JSON files the two children of ``otlp_early.OtlpPair.start`` make each file's early
    side meanwhile.

    Never raises: a file that cannot be opened is left to ``read_pair``, which reports it.
    """
    args = (os.fspath(original), os.fspath(replay), original_format, replay_format, trace_id, replay_trace_id,
            index_min_bytes, processes, early)
    start = PairStart(args)
    try:
        start.cached = _cached(_sides(args), early)
        if start.cached[0] is not None or start.cached[1] is not None:
            start.opened = True  # read_pair reads the other side, if any, itself
            return start
        start.osrc, start.rsrc, start.early_mod, start.child = _open_pair(*args)
        start.opened = True
    except Exception:  # noqa: BLE001 - read_pair opens them again and reports
        start.cancel()
    return start


def _open_pair(original: str, replay: str, original_format: str | None, replay_format: str | None,
               trace_id: str | None, replay_trace_id: str | None, index_min_bytes: int | None,
               processes: bool, early: bool) -> tuple[Any, Any, Any, Any]:
    """``(osrc, rsrc, early module or None, child or None)``: the files opened for the index loader (None:
    not indexable), ``core.load.early`` when an early look applies, and the replay's child process."""
    least = ni.INDEX_MIN_BYTES if index_min_bytes is None else index_min_bytes
    po, orun = split_run_ref(original)
    pr, rrun = split_run_ref(replay)
    osrc = ni.indexable(po, original_format, least)
    rsrc = ni.indexable(pr, replay_format, least)
    early_mod: Any = None
    child: Any = None
    if early and orun is None and rrun is None and trace_id is None and replay_trace_id is None:
        if osrc is not None and rsrc is not None:
            early_mod = early_look
        elif osrc is None and rsrc is None:  # two big OTLP/JSON files: their own early look
            early_mod = otlp_early.otlp_pair(po, pr, original_format, replay_format)
            if early_mod is not None and processes and ni.can_fork():
                child = _read_child(replay, replay_format, trace_id, replay_trace_id, gated=True)
                early_mod.start()  # each file's early side made in a child meanwhile
    if osrc is not None and rsrc is not None and processes and ni.can_fork():
        if early_mod is not None:
            child = early_mod.start_stream(osrc, rsrc)
        else:
            child = ni.fork_parse(rsrc)
    elif (osrc is None and rsrc is None and early_mod is None and processes and ni.can_fork()
          and otlp_early.otlp_pair(po, pr, original_format, replay_format) is not None):
        child = _read_child(replay, replay_format, trace_id, replay_trace_id, gated=False)
    return osrc, rsrc, early_mod, child


def _read_child(replay: str, replay_format: str | None, trace_id: str | None, replay_trace_id: str | None,
                gated: bool) -> ReadChild | None:
    """Two big OTLP/JSON files: the replay read in a child meanwhile (``read_child``; gated while an early look
    runs: forked before its children, so that they do not hold its pipes); None when it cannot start."""
    try:
        return ReadChild(replay, replay=True, format=replay_format, trace_id=trace_id,
                         replay_trace_id=replay_trace_id, gated=gated)
    except OSError:
        return None  # read here


def _indexed(parse: Callable[[Any], ReaderOutput], src: Any) -> ReaderOutput:
    """``parse(src)`` as ``_read_file`` runs a reader: OSError as ReadError, GC paused, objects promoted."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        return parse(src)
    except OSError as exc:
        raise ReadError(src.path, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        promote_young_objects()
        if gc_was:
            gc.enable()


def _sides(args: tuple[Any, ...]) -> tuple[index_cache.Side, index_cache.Side]:
    original, replay, original_format, replay_format, trace_id, replay_trace_id = args[:6]
    return (index_cache.Side(original, False, original_format, trace_id, None),
            index_cache.Side(replay, True, replay_format, trace_id, replay_trace_id))


def _cached(sides: tuple[index_cache.Side, index_cache.Side], early: bool) -> tuple[Trace | None, Trace | None]:
    """Both sides from the index cache, or either alone. With an early look asked for, one side alone is not
    taken: the other read alone (one core, no early rows) would show the first divergence later than the early
    look does (a new replay of a kept original, in the TUI)."""
    if early and not (index_cache.holds(sides[0]) and index_cache.holds(sides[1])):
        return None, None  # (asked before loading: a side loaded and then not taken is start-up time lost)
    got = index_cache.load(sides[0]), index_cache.load(sides[1])
    if early and (got[0] is None) != (got[1] is None):
        return None, None
    return got


def _with_cached(sides: tuple[index_cache.Side, index_cache.Side], hit: tuple[Trace | None, Trace | None],
                 index_min_bytes: int | None, keep: bool) -> tuple[Trace, Trace]:
    """The pair when the index cache held one side or both: the other side read alone (and kept)."""
    got: list[Trace] = []
    for i, (side, trace) in enumerate(zip(sides, hit)):
        if trace is None:
            try:
                trace = _read_alone(side, index_min_bytes)
            except BaseException as exc:
                try:
                    exc.side = ("original", "replay")[i]  # type: ignore[attr-defined]
                except AttributeError:
                    pass
                raise
            if keep:
                index_cache.store(side, trace)
        got.append(trace)
    return got[0], got[1]


def _read_alone(side: index_cache.Side, index_min_bytes: int | None) -> Trace:
    """``read_trace`` (original) or ``read_replay`` (replay) of one side, a big tracetui/1 file through the index
    loader (as ``read_pair`` reads it)."""
    path, run = split_run_ref(side.ref)
    src = ni.indexable(path, side.format, ni.INDEX_MIN_BYTES if index_min_bytes is None else index_min_bytes)
    if src is None:
        if side.replay:
            return readers.read_replay(side.ref, format=side.format, trace_id=side.trace_id,
                                       replay_trace_id=side.replay_trace_id)
        return readers.read_trace(side.ref, format=side.format, trace_id=side.trace_id)
    out = _indexed(ni.parse_indexed, src)
    if not side.replay:
        return readers.pick_run(ni.NATIVE, out, path, side.trace_id if side.trace_id is not None else run,
                                indexed=True)
    if run is not None and side.replay_trace_id is not None and run.lower() != side.replay_trace_id.lower():
        raise ReadError(path, f"two runs asked for: #{run} and --trace-id {side.replay_trace_id}")
    return _pick_replay(out, path, run, side.trace_id, side.replay_trace_id)


def _pick_replay(out: ReaderOutput, path: str, run: str | None, trace_id: str | None,
                 replay_trace_id: str | None) -> Trace:
    """``readers.read_replay``'s run choice on the index loader's output: the run asked for (``replay_trace_id`` or
    ``#RUN``), else the original's ``trace_id`` when the file holds it, else the first run."""
    if run is not None or replay_trace_id is not None or trace_id is None:
        return readers.pick_run(ni.NATIVE, out, path, replay_trace_id if replay_trace_id is not None else run,
                                indexed=True)
    try:
        return readers.pick_run(ni.NATIVE, out, path, trace_id, indexed=True)
    except TraceNotFound:
        return readers.pick_run(ni.NATIVE, out, path, None, indexed=True)
