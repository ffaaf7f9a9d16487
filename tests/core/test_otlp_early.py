"""The early first divergence of a big OTLP/JSON pair (``core.load.otlp_early``): the first rows before the rest.

Every test compares against ``diff_traces`` of the pair read whole: the early rows must be its first rows,
the early first divergence its first divergence, and anything the early look cannot prove gives None. Files
are a few MB at most: the size threshold (``OtlpJsonReader.lazy_min_bytes``) is lowered to 0.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.otlp_helpers import corpus_otlp_documents
from tracetui.core.diff import TraceDiff, diff_traces
from tracetui.core.load import otlp_early, read_pair, start_pair
from tracetui.core.load.early import EARLY_CONTEXT, EarlyTraceDiff, agrees
from tracetui.core.readers import read_replay, read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader

ROOT = Path(__file__).resolve().parents[2]
TID = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_762_161_242_118_000_000


@pytest.fixture(scope="module")
def gen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where generated pairs are kept for the module (``ensure_otlp_pair`` reuses them)."""
    return tmp_path_factory.mktemp("otlp_generated")


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of any size are big enough for the early look (and read in two passes, as big ones are)."""
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)


def _early(original: Path | str, replay: Path | str, *, child: bool = False, **kw: Any) -> EarlyTraceDiff | None:
    """The early look; with ``child``, each side made in a child process (``OtlpPair.start``)."""
    pair = otlp_early.otlp_pair(str(original), str(replay))
    assert pair is not None
    kw.setdefault("max_share", 1.0)
    if child:
        pair.start(kw["max_share"])
        assert len(pair.children) == 2
    try:
        return pair.early_diff(**kw)
    finally:
        assert pair.children == []  # stopped and reaped by early_diff


def _whole(original: Path | str, replay: Path | str) -> TraceDiff:
    return diff_traces(read_trace(str(original)), read_replay(str(replay)))


def _assert_same_start(got: EarlyTraceDiff, whole: TraceDiff) -> None:
    """The early rows are the whole diff's first rows: same spans (every field), per-row divergences and
    first divergence."""
    assert got.partial and agrees(got, whole)
    n = len(got.rows)
    for k in range(n):
        a, b = got.row_divergence[k], whole.row_divergence[k]
        assert (a.type, a.fields) == (b.type, b.fields) if a is not None and b is not None else a is b, k
    assert got.divergent_rows == [k for k in whole.divergent_rows if k < n]
    assert got.first is not None and whole.first is not None
    assert (got.first.row, got.first.order, got.first.type) == (whole.first.row, whole.first.order, whole.first.type)
    assert got.original.format == whole.original.format == "otlp-json"
    assert all(type(s) is LazySpan for s in [*got.original.spans, *got.replay.spans])
    for side in ("original", "replay"):
        early_spans, whole_spans = getattr(got, side).spans, getattr(whole, side).spans
        for row, wrow in zip(got.rows, whole.rows):
            i, j = getattr(row, side), getattr(wrow, side)
            if i is not None:
                a, b = early_spans[i], whole_spans[j]
                assert a == b and a.line == b.line and a.seq == b.seq, (side, a.span_id, b.span_id)


def _starts_the_whole(original: Path | str, replay: Path | str, **kw: Any) -> TraceDiff:
    """The early look (``_early``), checked against the whole diff, returned."""
    got = _early(original, replay, **kw)
    whole = _whole(original, replay)
    assert got is not None
    _assert_same_start(got, whole)
    return whole


# -- generated pairs ---------------------------------------------------------------------------------------


def _generated(folder: Path, n: int, edits: int, seed: int) -> tuple[Path, Path]:
    """The benchmarks' OTLP pair (``bench_otlp.ensure_otlp_pair``: one document, GenAI attributes)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_otlp import ensure_otlp_pair
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return ensure_otlp_pair(folder, n, edits, seed)


def _relaid(path: Path, form: str) -> Path:
    """The same document pretty-printed, or as Collector JSON Lines (batches of 50 spans, last batch first:
    the file's order is not the start order)."""
    doc = json.loads(path.read_bytes())
    out = path.with_name(f"{path.stem}.{form}.json{'l' if form == 'jsonl' else ''}")
    if form == "pretty":
        out.write_text(json.dumps(doc, indent=2))
        return out
    rs = doc["resourceSpans"][0]
    spans = rs["scopeSpans"][0]["spans"]
    batches = [spans[k:k + 50] for k in range(0, len(spans), 50)][::-1]
    out.write_text("".join(json.dumps({"resourceSpans": [{**rs, "scopeSpans": [{**rs["scopeSpans"][0], "spans": b}]}]})
                           + "\n" for b in batches))
    return out


@pytest.mark.parametrize("child", [False, True], ids=["here", "child"])
@pytest.mark.parametrize("form", ["document", "pretty", "jsonl"])
@pytest.mark.parametrize(("n", "edits", "seed"), [(1200, 10, 3), (1200, 1, 5), (800, 30, 11)])
def test_early_rows_are_the_first_rows_of_the_whole_diff(gen_dir: Path, n: int, edits: int, seed: int,
                                                          form: str, child: bool) -> None:
    orig, rep = _generated(gen_dir, n, edits, seed)
    if form != "document":
        orig, rep = _relaid(orig, form), _relaid(rep, form)
    got = _early(orig, rep, child=child)
    assert got is not None
    whole = _whole(orig, rep)
    _assert_same_start(got, whole)
    assert whole.first is not None
    assert len(got.rows) <= whole.first.row + EARLY_CONTEXT + 1  # it stopped soon after: not the whole pair
    assert got.spans_total == (len(whole.original.spans), len(whole.replay.spans))


def test_read_pair_hands_the_early_rows_over_then_reads_the_same_runs(gen_dir: Path) -> None:
    """``read_pair(early=)`` on two OTLP files: the callback gets the early rows; the runs returned are those
    ``read_trace``/``read_replay`` give (read from the bytes the early look read)."""
    orig, rep = _generated(gen_dir, 1200, 10, 3)
    seen: list[Any] = []
    got_o, got_r = read_pair(str(orig), str(rep), early=seen.append)
    assert len(seen) == 1 and type(seen[0]) is EarlyTraceDiff
    want_o, want_r = read_trace(str(orig)), read_replay(str(rep))
    assert got_o.spans == want_o.spans and got_r.spans == want_r.spans
    assert (got_o.header, got_o.format, got_o.trace_id) == (want_o.header, want_o.format, want_o.trace_id)
    assert [str(i) for i in got_r.issues] == [str(i) for i in want_r.issues]
    _assert_same_start(seen[0], diff_traces(got_o, got_r))


# -- hand-built pairs --------------------------------------------------------------------------------------


def _span(sid: int, parent: int | None, name: str, start: int, attrs: dict[str, Any], *, tid: str = TID,
          status: int = 0) -> dict[str, Any]:
    kv = [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
          for k, v in attrs.items()]
    return {"traceId": tid, "spanId": f"{sid:016x}", "parentSpanId": "" if parent is None else f"{parent:016x}",
            "name": name, "kind": 1, "startTimeUnixNano": str(T0 + start * 1000),
            "endTimeUnixNano": str(T0 + start * 1000 + 500), "attributes": kv, "status": {"code": status}}


def _agent(sid: int, parent: int | None, start: int, name: str = "support") -> dict[str, Any]:
    return _span(sid, parent, f"invoke_agent {name}", start,
                 {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name})


def _tool(sid: int, parent: int | None, start: int, name: str, args: Any, result: Any = "ok") -> dict[str, Any]:
    return _span(sid, parent, f"execute_tool {name}", start, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": args if isinstance(args, str) else json.dumps(args),
        "gen_ai.tool.call.result": json.dumps(result)})


def _write(path: Path, spans: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}))
    return path


def _run(base: int, n_tools: int = 6, changed: int | None = None, start: int = 0) -> list[dict[str, Any]]:
    """An agent with ``n_tools`` tool calls; tool ``changed`` gets other arguments."""
    out = [_agent(base, None, start)]
    for k in range(n_tools):
        out.append(_tool(base + 1 + k, base, start + 1 + k, "lookup", {"k": 99 if k == changed else k}))
    return out


@pytest.mark.parametrize("changed", [0, 3, 5])
def test_a_divergence_at_the_start_in_the_middle_or_last(tmp_path: Path, changed: int) -> None:
    o = _write(tmp_path / "o.json", _run(0x100))
    r = _write(tmp_path / "r.json", _run(0x900, changed=changed))
    whole = _starts_the_whole(o, r)
    assert whole.first is not None and whole.first.row == changed + 1


@pytest.mark.parametrize("inner", [True, False], ids=["divergence-inside", "only-the-wrapper"])
def test_a_one_sided_root_that_wraps_the_run_is_placed_at_its_end(tmp_path: Path, inner: bool) -> None:
    """An HTTP server span around the original's agent (the replay has none): its divergence goes after its
    subtree, and the first divergence is inside it when there is one."""
    top = _span(0x50, None, "POST /chat", 0, {"http.request.method": "POST"})
    agent = _run(0x100, start=1)
    agent[0]["parentSpanId"] = f"{0x50:016x}"
    o = _write(tmp_path / "o.json", [top, *agent])
    r = _write(tmp_path / "r.json", _run(0x900, changed=2 if inner else None, start=1))
    whole = _starts_the_whole(o, r)
    assert whole.first is not None and (whole.first.row != 0) is inner


def _llm(sid: int, parent: int, start: int, quoting: str) -> dict[str, Any]:
    """A model call whose input quotes a tool's call id (``ties.order_ties``: it goes after that tool)."""
    messages = [{"role": "user", "parts": [{"type": "text", "content": "where is my order?"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": quoting, "response": "ok"}]}]
    return _span(sid, parent, "chat gpt-4o", start, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": json.dumps(messages)})


@pytest.mark.parametrize("child", [False, True], ids=["here", "child"])
def test_spans_starting_at_one_instant_are_ordered_as_the_read_orders_them(tmp_path: Path, child: bool) -> None:
    """Siblings tied at one start, a child tied with its parent and written before it, a model call tied with
    the tool whose result it quotes and written before it: the early structure takes the read's tie order
    (``ties.order_ties``, which reads the payloads of the last two), not the file's."""
    def run(base: int, changed: bool) -> list[dict[str, Any]]:
        spans = _run(base, 6, changed=4 if changed else None)
        spans[2]["startTimeUnixNano"] = spans[1]["startTimeUnixNano"]  # two sibling tools tied
        inner = _tool(base + 0x40, base + 4, 0, "inner", {"x": 1})
        inner["startTimeUnixNano"] = spans[4]["startTimeUnixNano"]  # tied with its parent, written first
        spans[5]["attributes"].append({"key": "gen_ai.tool.call.id", "value": {"stringValue": "call-5"}})
        llm = _llm(base + 0x41, base, 0, "call-5")
        llm["startTimeUnixNano"] = spans[5]["startTimeUnixNano"]  # tied with the tool it quotes
        return [inner, llm, *spans]

    o = _write(tmp_path / "o.json", run(0x100, False))
    r = _write(tmp_path / "r.json", run(0x900, True))
    whole = _starts_the_whole(o, r, child=child)
    names = [s.name for s in whole.original.spans]
    assert names.index("chat gpt-4o") == names.index("execute_tool lookup", 6) + 1  # the data's order, not the file's


def test_many_spans_at_one_instant_count_against_the_share(tmp_path: Path) -> None:
    """Ordering tied spans makes each of them: more than the share allowed, no early answer, even when the
    walk itself stops before them (a first divergence under the first sub-agent, ties under the second)."""
    def run(base: int, changed: bool) -> list[dict[str, Any]]:
        first = _run(base + 1, 10, changed=2 if changed else None, start=1)
        second = _run(base + 0x400, 150, start=20)
        for sp in second[1:]:
            sp["startTimeUnixNano"] = str(T0 + 21 * 1000)
        first[0]["parentSpanId"] = second[0]["parentSpanId"] = f"{base:016x}"
        return [_agent(base, None, 0, "main"), *first, *second]

    o = _write(tmp_path / "o.json", run(0x100, False))
    r = _write(tmp_path / "r.json", run(0x900, True))
    _starts_the_whole(o, r, context=5, max_share=1.0)
    assert _early(o, r, context=5, max_share=0.5) is None


def _give_up_case(case: str, base: int) -> list[dict[str, Any]]:
    spans = _run(base, 8)
    if case == "duplicate-id":
        spans[5]["spanId"] = spans[4]["spanId"]
    elif case == "orphan":
        spans[3]["parentSpanId"] = f"{0xdead:016x}"
    elif case == "two-runs":
        spans[6]["traceId"] = "5cf92f3577b34da6a3ce929d0e0e4737"
    elif case == "child-before-parent":
        spans[0]["startTimeUnixNano"] = str(T0 + 5 * 1000 + 1)  # the agent starts after some of its tools
    elif case == "bare-string-arguments":
        spans[2] = _tool(base + 2, base, 2, "lookup", "Paris")
    elif case == "no-start":
        del spans[4]["startTimeUnixNano"]
    elif case == "odd-id":
        spans[3]["spanId"] = "not-an-id"
    return spans


@pytest.mark.parametrize("case", ["duplicate-id", "orphan", "two-runs", "child-before-parent", "bare-string-arguments",
                                  "no-start", "odd-id"])
def test_what_it_cannot_prove_gives_none(tmp_path: Path, case: str) -> None:
    """Each shape whose order or spans the read may fix otherwise (issues, skew fix, named arguments): no early
    answer, and ``read_pair`` still reads the pair."""
    o = _write(tmp_path / "o.json", _give_up_case(case, 0x100))
    r = _write(tmp_path / "r.json", _run(0x900, 8, changed=5))
    assert _early(o, r) is None
    assert _early(r, o) is None
    assert _early(o, r, child=True) is None  # given up in the child
    assert _early(r, o, child=True) is None
    seen: list[Any] = []
    read_pair(str(o), str(r), early=seen.append)
    assert seen == []


def test_the_share_limit_and_a_pair_without_divergence(tmp_path: Path) -> None:
    o = _write(tmp_path / "o.json", _run(0x100, 200))
    r = _write(tmp_path / "r.json", _run(0x900, 200, changed=150))
    assert _early(o, r, max_share=1.0) is not None
    assert _early(o, r, max_share=0.5) is None  # the divergence lies past half of the spans
    same = _write(tmp_path / "same.json", _run(0x900, 200))
    assert _early(o, same) is None  # no divergence: nothing to show early


def test_not_for_other_formats_or_small_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    o = _write(tmp_path / "o.json", _run(0x100))
    native = ROOT / "sample_runs/order_lookup/original.jsonl"
    assert otlp_early.otlp_pair(str(o), str(native)) is None
    assert otlp_early.otlp_pair(str(o), str(o), replay_format="tracetui") is None
    assert otlp_early.otlp_pair(str(o), str(o)) is not None
    monkeypatch.setattr(otlp_early, "EARLY_MAX_BYTES", o.stat().st_size - 1)  # too big: its children's memory
    assert otlp_early.otlp_pair(str(o), str(o)) is None
    monkeypatch.setattr(otlp_early, "EARLY_MAX_BYTES", o.stat().st_size)
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 4 << 20)
    assert otlp_early.otlp_pair(str(o), str(o)) is None


# -- real files --------------------------------------------------------------------------------------------


def _real_files(tmp_path: Path) -> list[Path]:
    files = [ROOT / "sample_runs/order_lookup/original.otlp.json", ROOT / "sample_runs/order_lookup/replay.otlp.json",
             *sorted((ROOT / "tests/data/otlp").glob("*.json*"))]
    return [*files, *corpus_otlp_documents(tmp_path)]


def _edited(path: Path, out: Path, k: int) -> Path | None:
    """A copy of an OTLP document with span ``k`` (file order) failed (status error; ok when it was an error),
    or None when it has no such span."""
    doc = json.loads(path.read_bytes()) if path.suffix == ".json" else None
    if not isinstance(doc, dict):
        return None
    spans = [sp for rs in doc.get("resourceSpans", ()) for ss in rs.get("scopeSpans", ()) for sp in ss.get("spans", ())]
    if not 0 <= k < len(spans):
        return None
    failed = spans[k].get("status", {}).get("code") in (2, "STATUS_CODE_ERROR")
    spans[k]["status"] = {"code": 1} if failed else {"code": 2, "message": "edited"}
    out.write_text(json.dumps(doc))
    return out


def test_real_files_paired_with_edited_copies_and_the_sample_pair(tmp_path: Path) -> None:
    """The samples, test data and corpus OTLP files, each against copies with one span's status changed (first,
    middle, last), and the sample runs' own pair: whenever the early look answers, it is the whole diff's
    start; it answers on most of them (the test is not vacuous)."""
    pairs: list[tuple[Path, Path]] = [(ROOT / "sample_runs/order_lookup/original.otlp.json",
                                       ROOT / "sample_runs/order_lookup/replay.otlp.json")]
    for n, f in enumerate(_real_files(tmp_path)):
        spans = f.read_text().count('"spanId"')
        for k in sorted({0, spans // 2, spans - 1}):
            e = _edited(f, tmp_path / f"edited{n}_{k}.json", k)
            if e is not None:
                pairs.append((f, e))
    answered = 0
    for a, b in pairs:
        got = _early(a, b)
        if got is None:
            continue
        answered += 1
        _assert_same_start(got, _whole(a, b))
    assert answered >= len(pairs) // 2, (answered, len(pairs))


@pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2, reason="needs fork and two cores")
def test_start_pair_forks_a_child_per_file_and_cancel_ends_them(gen_dir: Path) -> None:
    """``start_pair`` (the CLI, before the TUI import) starts both children; a read that is not used is
    cancelled, and the children end with it (killed and reaped: no process left behind)."""
    orig, rep = _generated(gen_dir, 1200, 10, 3)
    started = start_pair(str(orig), str(rep))
    pair = started.early_mod
    assert type(pair) is otlp_early.OtlpPair and len(pair.children) == 2
    pids = [c.pid for c in pair.children]
    started.cancel()
    assert pair.children == []
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_heads_only_decoding_gives_each_spans_whole_struct_on_demand(gen_dir: Path, tmp_path: Path) -> None:
    """``quick_documents(heads=True)`` (what the early look's sides decode): every span's ids and start as the whole
    decode has them, ``QuickSpans.whole(i)`` the very ``Span`` Struct the whole decode gives, and its byte range
    the span's own bytes (read back, the same dict), in one document, pretty-printed, as JSON Lines, and in the
    corpus's and samples' OTLP documents."""
    from tracetui.core.readers.otlp import anyvalue
    from tracetui.core.readers.otlp_fast import AT, QuickSpans, quick_documents, span_dict

    orig, _rep = _generated(gen_dir, 1200, 10, 3)
    files = [orig, _relaid(orig, "pretty"), _relaid(orig, "jsonl"), *_real_files(tmp_path)]
    compared = 0
    for f in files:
        data = f.read_bytes()
        try:
            whole, several = quick_documents(data, anyvalue)
        except Exception:  # noqa: BLE001 - a file the quick decode refuses: refused with heads too
            with pytest.raises(Exception):  # noqa: B017
                quick_documents(data, anyvalue, heads=True)
            continue
        heads, several_h = quick_documents(data, anyvalue, heads=True)
        assert several_h == several and len(heads) == len(whole)

        def scopes(values: Any) -> list[QuickSpans]:
            return [ss["spans"] for _line, doc in values for rs in doc["resourceSpans"]
                    for ss in rs.get("scopeSpans", ()) if "spans" in ss]

        for w, h in zip(scopes(whole), scopes(heads), strict=True):
            assert len(w.structs) == len(h.structs)
            for i, sp in enumerate(w.structs):
                head = h.structs[i]
                assert (head.traceId, head.spanId, head.parentSpanId, head.startTimeUnixNano) == \
                    (sp.traceId, sp.spanId, sp.parentSpanId, sp.startTimeUnixNano)
                assert h.whole(i) == sp and w.whole(i) is sp
                off, n = h.dict(i)[AT]  # its byte range: its own bytes, read back as the same dict
                assert AT not in w.dict(i) and data[off:off + n] == bytes(h.raws[i])
                assert span_dict(data[off:off + n], anyvalue) == w.dict(i)
                compared += 1
    assert compared > 3600


@pytest.mark.skipif(not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2, reason="needs fork and two cores")
def test_the_sides_children_end_with_the_process_that_forked_them(gen_dir: Path) -> None:
    """A TUI killed (``kill -9``) during the early look leaves no child behind: a side's child waiting for the walk
    to take its messages would otherwise wait for a reader that is gone, forever."""
    import signal
    import time

    orig, rep = _generated(gen_dir, 1200, 10, 3)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the process that dies
        try:
            os.close(r)
            otlp_early.CHILD_AHEAD = 0  # each child waits before its first message for the walk to take it
            pair = otlp_early.otlp_pair(str(orig), str(rep))
            pair.start()
            os.write(w, " ".join(str(c.pid) for c in pair.children).encode())
            time.sleep(30)
        finally:
            os._exit(0)
    os.close(w)
    children = [int(x) for x in os.read(r, 64).split()]
    os.close(r)
    assert len(children) == 2
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    left = children
    for _ in range(100):
        left = [c for c in left if _alive(c)]
        if not left:
            break
        time.sleep(0.05)
    for c in left:
        os.kill(c, signal.SIGKILL)
    assert left == [], "a side's child outlived the process that forked it"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
