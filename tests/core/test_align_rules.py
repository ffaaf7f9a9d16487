"""The span alignment's rules, one statement each (issue 25: ``diff.align``).

Which original span a user sees on the same row as which replay span: the merged tree (wrapped roots, parent
cycles, duplicate ids, spans below a leaf), span keys (kind + name + identity), and replace blocks (same-kind calls
re-paired, the most similar first). Spans are built in the test (``tests.builders``, ``tests.align_helpers``).
Sibling lists (the LCS, retries, concurrency): ``test_align_sibling_rules.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.align_helpers import attempts, row_ids, run_calls
from tests.builders import TraceBuilder, make_span
from tracetui.core.diff.align import (DP_CELLS, align, align_with_keys, align_with_same_keys, prepared_side,
                                       span_key, walk_rows)
from tracetui.core.model import Span
from tracetui.core.readers import read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader

# -- align: the tree -----------------------------------------------------------------------------------------------


def test_a_root_wraps_the_other_run_only_through_a_child_of_the_other_roots_kind_and_name() -> None:
    """The original's ``POST /chat`` root holding an agent ``billing`` does not wrap a replay whose root is the
    agent ``support`` (same kind, another name): the two roots are two one-sided trees at depth 0. Holding an
    agent ``support``, it wraps it: the server span stands alone and its agent pairs with the replay's root."""
    def original(agent: str) -> list[Span]:
        t = TraceBuilder("o")
        http = t.add("other", "POST /chat", span_id="ohttp")
        t.add("agent", agent, parent=http, span_id="oagent")
        return t.spans

    replay = TraceBuilder("r")
    replay.add("agent", "support", span_id="ragent")
    for agent, expected in (
        ("billing", [("ohttp", None, 0), ("oagent", None, 1), (None, "ragent", 0)]),
        ("support", [("ohttp", None, 0), ("oagent", "ragent", 1)]),
    ):
        a = original(agent)
        rows = align(a, replay.spans)
        assert [(a[r.original].span_id if r.original is not None else None,
                 replay.spans[r.replay].span_id if r.replay is not None else None, r.depth) for r in rows] == expected


def test_every_span_of_several_parent_cycles_gets_a_row() -> None:
    """Two separate parent cycles after a proper root: each is broken at its earliest span, and every span of
    both (and what hangs below them) appears once, paired with its copy."""
    spans = [make_span("agent", "root", span_id="root", seq=0),
             make_span("tool", "a", span_id="a", parent_id="b", seq=1),
             make_span("tool", "b", span_id="b", parent_id="a", seq=2),
             make_span("tool", "c", span_id="c", parent_id="d", seq=3),
             make_span("tool", "d", span_id="d", parent_id="c", seq=4),
             make_span("tool", "e", span_id="e", parent_id="d", seq=5)]
    rows = align(spans, list(spans))
    assert [(spans[r.original].span_id, r.replay == r.original, r.depth) for r in rows if r.original is not None] == [
        ("root", True, 0), ("a", True, 0), ("b", True, 1), ("c", True, 0), ("d", True, 1), ("e", True, 2)]
    assert len(rows) == len(spans)


def test_align_with_keys_gives_aligns_rows_and_each_sides_span_keys() -> None:
    """``align_with_keys``: the rows of ``align`` and, per side, ``span_key`` of each span in order."""
    a, b = run_calls("o", ["lookup", "refund", "notify"]), run_calls("r", ["lookup", "notify"])
    rows, ka, kb = align_with_keys(a, b)
    assert rows == align(a, b)
    assert list(ka) == [span_key(s) for s in a] and list(kb) == [span_key(s) for s in b]


def test_a_side_prepared_from_a_known_tree_walks_to_the_rows_of_align() -> None:
    """``prepared_side`` (spans, their keys and parent indices known already, as the early loader knows them) and
    ``walk_rows`` give ``align``'s rows, and per row whether the two keys are equal."""
    def run(prefix: str, extra: bool) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent")
        step = t.add("agent", "step", parent=root)
        t.add("tool", "lookup", parent=step, arguments={"id": 1})
        if extra:
            t.add("tool", "retry", parent=step, arguments={"id": 1})
        t.add("llm", "chat", parent=root, model="m")
        t.add("tool", "reply", parent=root, arguments={"to": prefix})
        return t.spans

    a, b = run("o", False), run("r", True)

    def side(spans: list[Span]) -> object:
        ids = {s.span_id: n for n, s in enumerate(spans)}
        return prepared_side(spans, [span_key(s) for s in spans], [ids.get(s.parent_id, -1) for s in spans])

    same: list[bool] = []
    rows = list(walk_rows(side(a), side(b), {}, same))  # type: ignore[arg-type]
    assert rows == align(a, b)
    assert same == align_with_same_keys(a, b)[1]
    assert False in same and True in same


# -- align: replace blocks, most similar first -----------------------------------------------------------------------

_SYS = {"role": "system", "content": "You are a support agent. " * 20}  # longer than similarity reads (300 bytes)


def _msgs(text: str) -> list[dict]:
    return [_SYS, {"role": "user", "content": text}]


# (kind, the two originals' (name, fields), the replay's (name, fields)): the replay's span has a key of its own
# (a replace block) and is closest to the SECOND original through one identifying field only
_SIMILAR = {
    "llm last message": ("llm", [("chat", {"model": "m1", "messages": _msgs("refund policy for order 17")}),
                                 ("chat", {"model": "m1", "messages": _msgs("shipping delays north region")})],
                         ("chat", {"model": "m2", "messages": _msgs("shipping delays in the north region")})),
    "llm model": ("llm", [("chat", {"model": "claude-3-opus", "messages": _msgs("hi")}),
                          ("chat", {"model": "gpt-4o-2024-08-06", "messages": _msgs("hi")})],
                  ("chat", {"model": "gpt-4o-2024-11-20", "messages": _msgs("hi")})),
    "llm prompt string": ("llm", [("chat", {"model": "m1", "messages": "refund policy for order 17"}),
                                  ("chat", {"model": "m1", "messages": "shipping delays north region 8"})],
                          ("chat", {"model": "m2", "messages": "shipping delays in the north region 7"})),
    "retrieval query": ("retrieval", [("kb", {"index": "faq", "query": "refund policy for order 17"}),
                                      ("kb", {"index": "faq", "query": "shipping delays north region"})],
                        ("kb", {"index": "faq", "query": "shipping delays in the north region"})),
    "retrieval index": ("retrieval", [("kb", {"index": "orders-2023-archive", "query": "q"}),
                                      ("kb", {"index": "shipping-faq-europe", "query": "q"})],
                        ("kb", {"index": "shipping-faq-europe-v2", "query": "q"})),
    "decision": ("decision", [("route", {"decision": "refund the order now", "value": 1}),
                              ("route", {"decision": "escalate to human agent", "value": 1})],
                 ("route", {"decision": "escalate to a human agent", "value": 1})),
    "decision value": ("decision", [("route", {"decision": "d", "value": "refund the order now"}),
                                    ("route", {"decision": "d", "value": "escalate to human agent"})],
                       ("route", {"decision": "e", "value": "escalate to a human agent"})),
    "memory operation": ("memory", [("store", {"operation": "read", "key": "k", "query": "q"}),
                                    ("store", {"operation": "delete_everything", "key": "k", "query": "q"})],
                         ("cache", {"operation": "delete_everything", "key": "k", "query": "q"})),
    "memory key": ("memory", [("store", {"operation": "read", "key": "refunds:17", "query": "q"}),
                              ("store", {"operation": "read", "key": "shipping:north", "query": "q"})],
                   ("cache", {"operation": "read", "key": "shipping:north:v2", "query": "q"})),
    "memory query": ("memory", [("store", {"operation": "read", "key": "k", "query": "refund policy for order 17"}),
                                ("store", {"operation": "read", "key": "k", "query": "shipping delays north"})],
                     ("cache", {"operation": "read", "key": "k", "query": "shipping delays in the north"})),
}


@pytest.mark.parametrize("case", list(_SIMILAR))
def test_in_a_replace_block_a_span_pairs_with_the_candidate_whose_identifying_inputs_are_closest(case: str) -> None:
    """Two original spans that may pair with the replay's one (same kind; neither has its key): it pairs with
    the one closer in what identifies a call of its kind — an LLM call's model and last message, a retrieval's
    index and query, a decision's decision and value, a memory access's operation, key and query; the other is
    original-only (listed first). Equally close candidates pair the first."""
    kind, originals, (rname, rfields) = _SIMILAR[case]
    t = TraceBuilder("o")
    root = t.add("agent", "agent", span_id="oroot")
    for n, (name, fields) in enumerate(originals):
        t.add(kind, name, parent=root, span_id=f"o{n}", **fields)
    u = TraceBuilder("r")
    rroot = u.add("agent", "agent", span_id="rroot")
    u.add(kind, rname, parent=rroot, span_id="r0", **rfields)
    assert row_ids(t.spans, u.spans) == [("o0", None), ("o1", "r0")]


def _block(originals: list[tuple[str, dict]], replays: list[tuple[str, dict]]) -> list[tuple[str | None, str | None]]:
    """The rows of two runs whose root holds the tool calls ``(tool, arguments)`` given, span ids ``o0``... and
    ``r0``...; none of the calls is equal across the runs here, so the lists are one replace block."""
    def run(prefix: str, calls: list[tuple[str, dict]]) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", span_id=f"{prefix}root")
        for n, (tool, args) in enumerate(calls):
            t.add("tool", tool, parent=root, arguments=args, span_id=f"{prefix}{n}")
        return t.spans

    return row_ids(run("o", originals), run("r", replays))


def test_in_a_mixed_replace_block_a_call_pairs_only_with_a_call_of_its_own_tool() -> None:
    """Original ``refund``, ``cancel``; replay ``cancel`` with other arguments: the two ``cancel`` calls pair,
    ``refund`` is original-only, though it comes first."""
    assert _block([("refund", {"id": 1}), ("cancel", {"id": 1})], [("cancel", {"id": 2})]) == [
        ("o0", None), ("o1", "r0")]


def test_in_a_replace_block_the_closest_candidate_pairs_whichever_comes_first() -> None:
    """The original's first call is the closer to the replay's: it pairs, the second is original-only; with
    the replay holding the two candidates, the original's call pairs with the closer, the replay's second."""
    near, far = {"query": "shipping delays north region"}, {"query": "refund policy for order 17"}
    close = {"query": "shipping delays in the north region"}
    assert _block([("search", near), ("search", far)], [("search", close)]) == [("o0", "r0"), ("o1", None)]
    assert _block([("search", close)], [("search", far), ("search", near)]) == [(None, "r0"), ("o0", "r1")]


def test_equally_close_candidates_and_candidates_below_the_similarity_cutoff_pair_the_first() -> None:
    """Two identical candidates: the first pairs. Two candidates both under ``SIMILARITY_CUTOFF`` (30) of
    ``fuzz.ratio``: neither counts as similar, so the first pairs, even if the second is a little closer."""
    same = {"query": "refund policy"}
    assert _block([("search", same), ("search", same)], [("search", {"query": "refund policies"})]) == [
        ("o0", "r0"), ("o1", None)]
    replay = {"q": "b" * 30}
    farther, a_little_closer = {"q": "z" * 30}, {"q": "b" + "z" * 29}  # ratio 25 and 27.5 against the replay's
    assert _block([("t", farther), ("t", a_little_closer)], [("t", replay)]) == [("o0", "r0"), ("o1", None)]


def test_a_replace_block_keeps_every_pair_it_can_make_in_order() -> None:
    """Three original calls of one tool against two of the replay's, each replay call close to one original
    (the first two): both pair, and the third original is original-only (the most pairs, in order)."""
    assert _block([("search", {"query": "refund policy for order 17"}),
                   ("search", {"query": "shipping delays north region"}),
                   ("search", {"query": "warranty terms for laptops"})],
                  [("search", {"query": "refund policy for order 18"}),
                   ("search", {"query": "shipping delays in the north region"})]) == [
        ("o0", "r0"), ("o1", "r1"), ("o2", None)]


def test_a_replace_block_beyond_dp_cells_pairs_by_call_kind_alone_in_order() -> None:
    """Up to ``DP_CELLS`` (4096) original x replay spans a replace block pairs the most similar calls; beyond it,
    calls of the same tool pair in order, similarity aside. Original: ``search`` X, ``search`` Y, then
    ``fetch`` calls; replay: ``search`` close to Y, then ``fetch`` calls (every argument changed: one block)."""
    def rows(fetches_o: int, fetches_r: int) -> list[tuple[str | None, str | None]]:
        originals = [("search", {"query": "refund policy for order 17"}),
                     ("search", {"query": "shipping delays north region"})]
        originals += [("fetch", {"page": n}) for n in range(fetches_o)]
        replays = [("search", {"query": "shipping delays in the north region"})]
        replays += [("fetch", {"page": -n - 1}) for n in range(fetches_r)]
        return _block(originals, replays)

    assert DP_CELLS == 4096
    assert rows(62, 63)[:2] == [("o0", None), ("o1", "r0")]  # 64 x 64 = 4096 cells: the closest
    assert rows(63, 63) == [("o0", "r0"), ("o1", None)] + [(f"o{n + 2}", f"r{n + 1}") for n in range(63)]  # 65 x 64


# -- align: span keys ------------------------------------------------------------------------------------------------


def test_numbers_key_by_value_and_type_and_values_json_cannot_write_key_equal_to_nothing() -> None:
    """A retrieval's query 1.5 (or 7) keys equal to the same query elsewhere; a value JSON cannot write (a set, an
    object) makes a key equal to no other, not even its own computed again: such spans pair only in a replace
    block, and aligning them works."""
    for q in (1.5, 7, True):
        assert span_key(make_span("retrieval", "kb", index="faq", query=q)) == span_key(
            make_span("retrieval", "kb", index="faq", query=q))
    for odd in ({1, 2}, object()):
        span = make_span("decision", "route", decision=odd)
        assert span_key(span) != span_key(span)
        a = attempts("o", "decision", "route", [("ok", {"decision": odd})])
        b = attempts("r", "decision", "route", [("ok", {"decision": odd})])
        assert row_ids(a, b) == [("o0", "r0")]


def test_tool_arguments_with_non_string_keys_key_alike_in_any_order() -> None:
    """Arguments built in code with integer keys: the same mapping in another insertion order is the same call."""
    one = make_span("tool", "lookup", arguments={1: "a", 2: {"y": 1, "x": 2}})
    other = make_span("tool", "lookup", arguments={2: {"x": 2, "y": 1}, 1: "a"})
    assert span_key(one) == span_key(other)
    assert span_key(one) != span_key(make_span("tool", "lookup", arguments={1: "a", 2: {"x": 3, "y": 1}}))


def test_an_identical_call_pairs_with_its_twin_before_similar_calls_pair_up() -> None:
    """Original ``search`` a, b; replay ``search`` b, c (a, b, c alike): the identical ``b`` calls pair (equal keys
    first), then a and c are one-sided, though pairing by similarity alone would have paired a-b and b-c."""
    a_, b_, c_ = ({"query": f"refund for order {n}"} for n in (17, 18, 19))
    assert _block([("search", a_), ("search", b_)], [("search", b_), ("search", c_)]) == [
        ("o0", None), ("o1", "r0"), (None, "r1")]


def test_a_common_start_and_ending_stay_paired_around_a_changed_middle() -> None:
    """Original ``lookup, notify, search, notify``; replay ``lookup, refund, notify``: the first and last calls
    pair, and the original's first ``notify`` in the middle does not take the replay's last one."""
    a, b = run_calls("o", ["lookup", "notify", "search", "notify"]), run_calls("r", ["lookup", "refund", "notify"])
    assert row_ids(a, b) == [("olookup1", "rlookup1"), ("onotify1", None), ("osearch1", None), (None, "rrefund1"),
                           ("onotify2", "rnotify1")]


def test_spans_sharing_an_id_the_first_keeps_it_for_their_children() -> None:
    """Two spans with the same id (a damaged export): a child naming that id hangs under the first of them."""
    spans = [make_span("agent", "first", span_id="x", seq=0),
             make_span("agent", "second", span_id="x", seq=1),
             make_span("tool", "child", span_id="c", parent_id="x", seq=2)]
    rows = align(spans, list(spans))
    assert [(spans[r.original].name, r.depth) for r in rows if r.original is not None] == [
        ("first", 0), ("child", 1), ("second", 0)]


def test_a_wrapping_root_stands_alone_and_its_call_pairs_with_the_replays_root_call_even_when_changed() -> None:
    """The original's ``POST /chat`` root wraps one LLM call ``chat``; the replay's root is that call, with another
    model: the server span is one-sided (its row is no pair of equal keys) and the two calls pair below it."""
    t = TraceBuilder("o")
    http = t.add("other", "POST /chat", span_id="ohttp")
    t.add("llm", "chat", parent=http, model="m1", span_id="ochat")
    u = TraceBuilder("r")
    u.add("llm", "chat", model="m2", span_id="rchat")
    rows, same = align_with_same_keys(t.spans, u.spans)
    assert [(r.original, r.replay, r.depth) for r in rows] == [(0, None, 0), (1, 0, 1)]
    assert same == [False, False]


@pytest.mark.parametrize("cyclic", ["original", "replay"])
def test_a_parent_cycle_on_one_side_only_still_gives_every_span_of_both_a_row(cyclic: str) -> None:
    """One run's export has a parent cycle (``a`` and ``b`` name each other), the other's has ``a`` as a root with
    ``b`` below it, and other arguments: the cycle is broken at its earliest span, ``a``, which then pairs with the
    other side's ``a`` as a changed call, and ``b`` with ``b`` below them; every span of both sides appears once."""
    def run(prefix: str, cycle: bool, q: int) -> list[Span]:
        return [make_span("agent", "agent", span_id=f"{prefix}root", seq=0),
                make_span("tool", "a", span_id=f"{prefix}a", parent_id=f"{prefix}b" if cycle else None, seq=1,
                          arguments={"q": q}),
                make_span("tool", "b", span_id=f"{prefix}b", parent_id=f"{prefix}a", seq=2, arguments={"q": q})]

    a = run("o", cyclic == "original", 1)
    b = run("r", cyclic == "replay", 2)
    assert [(r.original, r.replay, r.depth) for r in align(a, b)] == [(0, 0, 0), (1, 1, 0), (2, 2, 1)]


def test_a_replay_root_wrapping_the_originals_root_call_stands_alone_above_the_pair() -> None:
    """The mirror case: the replay's ``POST /chat`` root wraps its LLM call, the original's root is that call
    (another model): the server span is a replay-only row at depth 0, the two calls pair at depth 1."""
    t = TraceBuilder("o")
    t.add("llm", "chat", model="m1", span_id="ochat")
    u = TraceBuilder("r")
    http = u.add("other", "POST /chat", span_id="rhttp")
    u.add("llm", "chat", parent=http, model="m2", span_id="rchat")
    rows, same = align_with_same_keys(t.spans, u.spans)
    assert [(r.original, r.replay, r.depth) for r in rows] == [(None, 0, 0), (0, 1, 1)]
    assert same == [False, False]


@pytest.mark.parametrize("flip", [False, True])
def test_a_failed_attempts_subtree_is_marked_retry_and_its_row_is_no_equal_pair(flip: bool) -> None:
    """A ``worker`` agent failed with a tool call inside and was run again: the failed attempt and the tool call
    below it are retry rows (either side holding them), flagged as no pair of equal keys; the successful worker
    and its call pair with the other run's."""
    def run(prefix: str, retried: bool) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", span_id=f"{prefix}root")
        if retried:
            w = t.add("agent", "worker", parent=root, status="error", input={"task": 1}, span_id=f"{prefix}w0")
            t.add("tool", "fetch", parent=w, arguments={"id": 1}, span_id=f"{prefix}t0")
        w = t.add("agent", "worker", parent=root, input={"task": 1}, span_id=f"{prefix}w1")
        t.add("tool", "fetch", parent=w, arguments={"id": 1}, span_id=f"{prefix}t1")
        return t.spans

    a, b = (run("o", True), run("r", False)) if not flip else (run("o", False), run("r", True))
    rows, same = align_with_same_keys(a, b)
    got = [(a[r.original].span_id if r.original is not None else None,
            b[r.replay].span_id if r.replay is not None else None, r.retry) for r in rows]
    if not flip:
        assert got == [("oroot", "rroot", False), ("ow0", None, True), ("ot0", None, True), ("ow1", "rw1", False),
                       ("ot1", "rt1", False)]
    else:
        assert got == [("oroot", "rroot", False), (None, "rw0", True), (None, "rt0", True), ("ow1", "rw1", False),
                       ("ot1", "rt1", False)]
    assert same == [True, False, False, True, True]


def test_spans_below_a_call_that_the_replay_made_as_a_leaf_are_still_listed() -> None:
    """The original's ``lookup`` call has a span below it (an HTTP request), the replay's same call has none: the
    calls pair, and the original's span below is an original-only row under them."""
    t = TraceBuilder("o")
    root = t.add("agent", "agent", span_id="oroot")
    call = t.add("tool", "lookup", parent=root, arguments={"id": 1}, span_id="olookup")
    t.add("other", "GET /orders/1", parent=call, span_id="ohttp")
    u = TraceBuilder("r")
    rroot = u.add("agent", "agent", span_id="rroot")
    u.add("tool", "lookup", parent=rroot, arguments={"id": 1}, span_id="rlookup")
    rows = align(t.spans, u.spans)
    assert [(r.original, r.replay, r.depth) for r in rows] == [(0, 0, 0), (1, 1, 1), (2, None, 2)]


def test_a_span_read_lazily_keys_like_the_same_span_read_whole_without_reading_its_payload(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An OTLP file read in two passes (every size): each span's key, asked twice, equals the key of the same span
    read in one pass, and asking it reads no payload not read already (the first pass kept the key's fields)."""
    path = Path(__file__).resolve().parents[2] / "sample_runs/order_lookup/replay.otlp.json"
    whole = read_trace(path).spans
    monkeypatch.setattr(OtlpJsonReader, "lazy_min_bytes", 0)
    lazy = read_trace(path).spans
    assert len(lazy) == len(whole) > 3 and all(type(s) is LazySpan for s in lazy)
    unread = [n for n, s in enumerate(lazy) if not s.loaded]  # the run header read the root's and a call's
    assert len(unread) >= 3
    assert [span_key(s) for s in lazy] == [span_key(s) for s in whole]
    assert [span_key(s) for s in lazy] == [span_key(s) for s in whole]
    assert [n for n, s in enumerate(lazy) if not s.loaded] == unread


def test_a_tool_call_is_identified_by_its_recorded_tool_name_not_its_span_name() -> None:
    """Two spans of one tool named differently (``execute_tool lookup``, ``lookup``) are the same call; two tools
    under one span name are not; without a recorded tool name the span name tells them apart."""
    assert span_key(make_span("tool", "execute_tool lookup", tool_name="lookup", arguments={"id": 1})) == span_key(
        make_span("tool", "lookup", arguments={"id": 1}))
    assert span_key(make_span("tool", "call", tool_name="lookup", arguments={"id": 1})) != span_key(
        make_span("tool", "call", tool_name="refund", arguments={"id": 1}))
    assert span_key(make_span("tool", "lookup", tool_name=None, arguments={"id": 1})) != span_key(
        make_span("tool", "refund", tool_name=None, arguments={"id": 1}))


def test_replace_block_similarity_reads_long_non_ascii_and_integer_keyed_arguments() -> None:
    """Similarity looks at the first 300 bytes of a call's arguments: a long non-ASCII text cut inside a character
    is still compared (the cut character dropped), and arguments with integer keys are compared by content."""
    near, far = {"note": "xx" + "été " * 100 + "north"}, {"note": "hiver " * 100}
    assert _block([("search", far), ("search", near)], [("search", {"note": "xx" + "été " * 100 + "south"})]) == [
        ("o0", None), ("o1", "r0")]
    assert _block([("search", {1: "refund policy for order 17"}), ("search", {1: "shipping delays north region"})],
                  [("search", {1: "shipping delays in the north region"})]) == [("o0", None), ("o1", "r0")]


def test_a_replace_block_keeps_every_pair_it_can_make_with_an_extra_replay_call_last() -> None:
    """Two original calls of one tool against three of the replay's, the first two close to them: both pair, and
    the replay's third call is replay-only."""
    assert _block([("search", {"query": "refund policy for order 17"}),
                   ("search", {"query": "shipping delays north region"})],
                  [("search", {"query": "refund policy for order 18"}),
                   ("search", {"query": "shipping delays in the north region"}),
                   ("search", {"query": "warranty terms for laptops"})]) == [
        ("o0", "r0"), ("o1", "r1"), (None, "r2")]


def test_a_malformed_tool_name_keys_by_its_value_and_still_aligns() -> None:
    """A tool name recorded as an object (a malformed trace): equal objects are the same tool, different ones
    are not, and two runs holding such calls among others align (the longest common subsequence hashes the keys)."""
    def key(name: object) -> object:
        return span_key(make_span("tool", "call", tool_name=name, arguments={"id": 1}))

    assert key({"n": 1}) == key({"n": 1}) and key({"n": 1}) != key({"n": 2})
    a = attempts("o", "tool", "call", [("ok", {"tool_name": {"n": 1}, "arguments": {"id": 1}}),
                                        ("ok", {"tool_name": "refund", "arguments": {}})])
    b = attempts("r", "tool", "call", [("ok", {"tool_name": "notify", "arguments": {}}),
                                        ("ok", {"tool_name": {"n": 1}, "arguments": {"id": 1}})])
    assert row_ids(a, b) == [(None, "r0"), ("o0", "r1"), ("o1", None)]


@pytest.mark.parametrize("cyclic", ["original", "replay"])
def test_a_cycle_is_repaired_even_when_the_one_sided_rows_happen_to_number_the_spans(cyclic: str) -> None:
    """One run: a root and a two-span parent cycle; the other: three unrelated calls. Before the cycle is broken the
    rows are four one-sided ones (as many as either run's spans); the cycle's spans must still get their rows."""
    looped = [make_span("agent", "agent", span_id="root", seq=0),
              make_span("other", "x", span_id="x", parent_id="y", seq=1),
              make_span("other", "y", span_id="y", parent_id="x", seq=2)]
    flat = [make_span("tool", f"t{n}", span_id=f"t{n}", seq=n, arguments={}) for n in range(3)]
    a, b = (looped, flat) if cyclic == "original" else (flat, looped)
    rows = align(a, b)
    assert sorted(r.original for r in rows if r.original is not None) == [0, 1, 2]
    assert sorted(r.replay for r in rows if r.replay is not None) == [0, 1, 2]


# -- round 9d: the last survivors of the alignment (tests/mutation_equivalents.md) ----------------------------------


def test_candidates_differing_only_past_the_first_300_bytes_of_their_arguments_are_equally_close() -> None:
    """Similarity reads a call's arguments up to their 300th byte: two replay candidates alike there (one differs
    from the original at byte 301, the other at byte 302) are equally close, so the first pairs."""
    original = {"q": "a" * 400}  # written '{"q":"aaa...': the 301st byte is the value's 295th character
    at_301, at_302 = {"q": "a" * 294 + "b" + "a" * 105}, {"q": "a" * 295 + "b" + "a" * 104}
    assert _block([("search", original)], [("search", at_301), ("search", at_302)]) == [("o0", "r0"), (None, "r1")]


def test_a_pair_weighs_100_plus_its_similarity_so_two_close_pairs_outweigh_three_with_one_close() -> None:
    """``_best_pairs``: each pair weighs 100 plus ``fuzz.ratio`` of the two calls (0 under the cutoff). Original
    ``search`` a, c, c'; replay g, a', c'' (a~a' and c~c'' at 99.13, c'~c'' at 97.39, every other pair under 30):
    the two close pairs (2 x 100 + 198.26) outweigh the three in order (3 x 100 + 97.39), so the replay's first
    call is replay-only and the original's last is original-only."""
    originals = [("search", {"q": "a" * 100}), ("search", {"q": "c" * 100}), ("search", {"q": "c" * 97 + "eee"})]
    replays = [("search", {"q": "g" * 100}), ("search", {"q": "a" * 99 + "b"}), ("search", {"q": "c" * 99 + "d"})]
    assert _block(originals, replays) == [(None, "r0"), ("o0", "r1"), ("o1", "r2"), ("o2", None)]


def test_a_tool_name_is_compared_as_recorded_even_when_it_reads_as_json() -> None:
    """A tool name is a name, not a JSON value (docs/format.md: a different ``tool_name`` is unpaired): tools
    recorded as ``{"a": 1}`` and ``{"a":1}`` are two tools (two keys, one-sided rows), though both texts parse to
    the same object; the same name on both sides is one call."""
    spaced, tight = '{"a": 1}', '{"a":1}'
    assert span_key(make_span("tool", spaced, arguments={})) != span_key(make_span("tool", tight, arguments={}))
    assert _block([(spaced, {})], [(tight, {})]) == [("o0", None), (None, "r0")]
    assert _block([(spaced, {})], [(spaced, {})]) == [("o0", "r0")]


def test_past_max_d_edits_a_same_named_agent_pairs_with_the_candidate_of_the_closest_input() -> None:
    """A sibling list more than ``MAX_D`` (200) edits apart is aligned by rapidfuzz's Levenshtein, which may leave
    spans of equal keys in one replace block: there, as anywhere, an agent span pairs with the candidate of its
    name whose input is closest. Original: agent ``planner`` (input "refund order 17"), five other agents, a shared
    ``summary``, 110 agents of its own; replay: four other agents, ``planner`` with another input, ``planner`` with
    the same input, ``summary``, 110 agents of its own. Substituting the first six is cheaper than matching a
    ``planner`` (9 edits), so they are one block, where the original's ``planner`` pairs with the second one."""
    from tracetui.core.diff.align import MAX_D

    def run(prefix: str, heads: list[tuple[str, object]]) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", span_id=f"{prefix}root")
        for n, (name, given) in enumerate(heads):
            t.add("agent", name, parent=root, input=given, span_id=f"{prefix}{n}")
        t.add("agent", "summary", parent=root, input="done", span_id=f"{prefix}summary")
        for n in range(110):
            t.add("agent", f"{prefix}-step-{n}", parent=root, input=n, span_id=f"{prefix}step{n}")
        return t.spans

    asked = {"message": "refund order 17"}
    a = run("o", [("planner", asked)] + [(f"checker{n}", asked) for n in range(5)])
    b = run("r", [(f"router{n}", asked) for n in range(4)]
            + [("planner", {"message": "cancel my subscription now"}), ("planner", asked)])
    assert MAX_D == 200 and 2 * 117 - 2 * 2 > MAX_D  # 117 children a side, 2 in common: 230 edits
    rows = row_ids(a, b)
    assert ("o0", "r5") in rows and (None, "r4") in rows
    assert rows.index((None, "r4")) < rows.index(("o0", "r5")) < rows.index(("osummary", "rsummary"))
