"""The span alignment's rules, one statement each (issue 25: ``diff.align``, ``diff.lcs``, ``diff.siblings``).

Which original span a user sees on the same row as which replay span: pairing by kind + name + identity,
inserted and removed spans, retries, concurrent siblings, and the longest common subsequence under it all.
Spans are built in the test (``tests.builders``).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.builders import TraceBuilder, make_span
from tracetui.core.diff.align import (DP_CELLS, AlignedRow, align, align_with_keys, align_with_same_keys,
                                       prepared_side, span_key, walk_rows)
from tracetui.core.diff.lcs import equal_run, equal_run_back, matching_blocks, myers
from tracetui.core.diff.siblings import concurrent_groups
from tracetui.core.model import Span
from tracetui.core.readers import read_trace
from tracetui.core.readers.lazyspan import LazySpan
from tracetui.core.readers.otlp import OtlpJsonReader


def _run(prefix: str, calls: list[str]) -> list[Span]:
    """An agent root whose children are tool calls named ``calls``, one after the other (no overlap), span ids
    ``<prefix><tool><n>`` (the n-th call of that tool)."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    seen: dict[str, int] = {}
    for tool in calls:
        seen[tool] = seen.get(tool, 0) + 1
        t.add("tool", tool, parent=root, arguments={"q": 1}, span_id=f"{prefix}{tool}{seen[tool]}")
    return t.spans


def _rows(a: list[Span], b: list[Span]) -> list[tuple[str | None, str | None]]:
    """The rows under the root as (original span id, replay span id), as the diff view lists them."""
    rows: list[AlignedRow] = align(a, b)
    return [(a[r.original].span_id if r.original is not None else None,
             b[r.replay].span_id if r.replay is not None else None) for r in rows[1:]]


def _lcs_length(x: list[int], y: list[int]) -> int:
    t = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i, u in enumerate(x):
        for j, v in enumerate(y):
            t[i + 1][j + 1] = t[i][j] + 1 if u == v else max(t[i][j + 1], t[i + 1][j])
    return t[-1][-1]


def _lists(rnd: random.Random, count: int) -> list[tuple[list[int], list[int]]]:
    """Pairs of short lists over a 3-letter alphabet (many ties and equal runs), lengths 0-12 each."""
    return [([rnd.randrange(3) for _ in range(rnd.randint(0, 12))], [rnd.randrange(3) for _ in range(rnd.randint(0, 12))])
            for _ in range(count)]


# -- lcs: the equal runs and the longest common subsequence ------------------------------------------------------


def test_equal_run_is_the_length_of_the_common_run_from_a_position_capped_at_the_limit() -> None:
    """``equal_run(x, y, i, j, limit)``: how many elements from ``x[i]`` and ``y[j]`` on are equal, never more than
    ``limit`` (nor than either list holds from there); 0 when the first ones differ or the limit is 0."""
    rnd = random.Random(5)
    for x, y in _lists(rnd, 150):
        for i in range(len(x)):
            for j in range(len(y)):
                run = 0
                while i + run < len(x) and j + run < len(y) and x[i + run] == y[j + run]:
                    run += 1
                for limit in range(0, min(len(x) - i, len(y) - j) + 1):
                    assert equal_run(x, y, i, j, limit) == min(run, limit), (x, y, i, j, limit)


def test_equal_run_back_is_the_length_of_the_common_run_ending_at_a_position_capped_at_the_limit() -> None:
    """``equal_run_back(x, y, n, m, limit)``: how many elements ending at ``x[n-1]`` and ``y[m-1]`` are equal, never
    more than ``limit``; 0 when the last ones differ or the limit is 0."""
    rnd = random.Random(6)
    for x, y in _lists(rnd, 150):
        for n in range(1, len(x) + 1):
            for m in range(1, len(y) + 1):
                run = 0
                while run < n and run < m and x[n - 1 - run] == y[m - 1 - run]:
                    run += 1
                for limit in range(0, min(n, m) + 1):
                    assert equal_run_back(x, y, n, m, limit) == min(run, limit), (x, y, n, m, limit)


def test_myers_gives_up_exactly_when_more_than_max_d_edits_are_needed() -> None:
    """``myers(x, y, max_d)`` is None when turning ``x`` into ``y`` takes more than ``max_d`` insertions and
    deletions (``len(x) + len(y) - 2 * LCS``), and a longest common subsequence when it takes ``max_d`` or fewer."""
    rnd = random.Random(8)
    for x, y in _lists(rnd, 300):
        lcs = _lcs_length(x, y)
        edits = len(x) + len(y) - 2 * lcs
        blocks = myers(x, y, edits)
        assert blocks is not None, (x, y)
        assert sum(size for _, _, size in blocks) == lcs
        i0 = j0 = 0
        for i, j, size in blocks:
            assert i >= i0 and j >= j0 and size > 0 and x[i:i + size] == y[j:j + size], (x, y, blocks)
            i0, j0 = i + size, j + size
        if edits:
            assert myers(x, y, edits - 1) is None, (x, y)


def test_matching_blocks_are_ordered_equal_runs_on_both_paths_and_none_for_disjoint_lists() -> None:
    """``matching_blocks`` gives equal runs ``(i, j, size)`` in order, a longest common subsequence while Myers
    stays within ``max_d`` edits and ordered equal runs past it (rapidfuzz's Levenshtein, which may substitute where
    an LCS would pair: the replace blocks re-pair those); nothing when no element is shared."""
    rnd = random.Random(9)
    for x, y in _lists(rnd, 300):
        lcs = _lcs_length(x, y)
        edits = len(x) + len(y) - 2 * lcs
        for max_d in (edits, max(edits - 3, 0)):
            blocks = matching_blocks(x, y, max_d)
            i0 = j0 = 0
            for i, j, size in blocks:
                assert i >= i0 and j >= j0 and size > 0 and x[i:i + size] == y[j:j + size], (x, y, max_d, blocks)
                i0, j0 = i + size, j + size
            if max_d == edits:
                assert sum(size for _, _, size in blocks) == lcs, (x, y)
    assert matching_blocks([1, 2], [3, 4], 10) == []
    assert matching_blocks([], [1], 10) == [] and matching_blocks([1], [], 10) == []


def test_two_calls_run_in_the_other_order_pair_the_later_one_and_show_the_earlier_as_missing_then_extra() -> None:
    """Original ``lookup, refund``; replay ``refund, lookup`` (one after the other: not a concurrent set). One of the
    two can pair; the alignment keeps the original's later call paired: the original's ``lookup`` is missing
    (first row), ``refund`` pairs, the replay's ``lookup`` is extra (last row)."""
    a, b = _run("o", ["lookup", "refund"]), _run("r", ["refund", "lookup"])
    assert _rows(a, b) == [("olookup1", None), ("orefund1", "rrefund1"), (None, "rlookup1")]


def test_calls_inserted_before_a_common_ending_leave_the_ending_paired_end_to_end() -> None:
    """Original ``plan, lookup, answer``; replay ``lookup, lookup, answer``: the runs end alike, so the last
    ``lookup`` and ``answer`` pair with the original's; the replay's first ``lookup`` is the extra one."""
    a, b = _run("o", ["plan", "lookup", "answer"]), _run("r", ["lookup", "lookup", "answer"])
    assert _rows(a, b) == [("oplan1", None), (None, "rlookup1"), ("olookup1", "rlookup2"), ("oanswer1", "ranswer1")]


def test_a_call_repeated_at_the_start_of_the_replay_pairs_the_first_repeat() -> None:
    """Original ``lookup, answer``; replay ``lookup, lookup, answer``: the common start pairs first with first, the
    second ``lookup`` is the extra one (the common beginning and ending never share a span)."""
    a, b = _run("o", ["lookup", "answer"]), _run("r", ["lookup", "lookup", "answer"])
    assert _rows(a, b) == [("olookup1", "rlookup1"), (None, "rlookup2"), ("oanswer1", "ranswer1")]


# -- siblings: what makes two spans attempts of one call (retries) -------------------------------------------------


def _attempts(prefix: str, kind: str, name: str, inputs: list[tuple[str, dict]]) -> list[Span]:
    """An agent root with one child per ``(status, fields)`` in ``inputs``: spans of ``kind`` named ``name``,
    one after the other, span ids ``<prefix>0``, ``<prefix>1``... under ``<prefix>root``."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    for n, (status, fields) in enumerate(inputs):
        t.add(kind, name, parent=root, status=status, span_id=f"{prefix}{n}", **fields)
    return t.spans


def _retry_rows(a: list[Span], b: list[Span]) -> list[tuple[str | None, str | None, bool]]:
    """The rows under the root as (original span id, replay span id, marked retry)."""
    return [(a[r.original].span_id if r.original is not None else None,
             b[r.replay].span_id if r.replay is not None else None, r.retry) for r in align(a, b)[1:]]


MSGS = [{"role": "user", "content": "refund order 7"}]


def test_a_failed_llm_call_retried_with_the_same_messages_prompt_and_params_is_a_retry() -> None:
    """Same model, messages, prompt id and params (keys in another order): the failed call is an attempt of the
    successful one; the replay's single call pairs with the success, the attempt is a retry row."""
    fields = {"model": "m", "messages": MSGS, "prompt_id": "p1", "params": {"temperature": 0, "top_p": 1}}
    again = {"model": "m", "messages": MSGS, "prompt_id": "p1", "params": {"top_p": 1, "temperature": 0}}
    a = _attempts("o", "llm", "chat", [("error", fields), ("ok", again)])
    b = _attempts("r", "llm", "chat", [("ok", fields)])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]


@pytest.mark.parametrize("changed", [
    {"messages": [{"role": "user", "content": "refund order 8"}]},
    {"prompt_id": "p2"},
    {"params": {"temperature": 1}},
])
def test_a_failed_llm_call_followed_by_one_with_other_input_is_not_a_retry(changed: dict) -> None:
    """An LLM call that failed and a later one with other messages, prompt id or params are two calls, not two
    attempts of one: nothing is marked retry, and the replay's call pairs with the original's first."""
    fields = {"model": "m", "messages": MSGS, "prompt_id": "p1", "params": {"temperature": 0}}
    a = _attempts("o", "llm", "chat", [("error", fields), ("ok", {**fields, **changed})])
    b = _attempts("r", "llm", "chat", [("ok", {**fields, **changed})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]


@pytest.mark.parametrize("kind", ["agent", "other"])
def test_a_failed_agent_or_other_span_is_retried_only_by_one_with_the_same_input(kind: str) -> None:
    """An agent (or other) span's attempts share name and input: the same input is a retry, another input is
    another step."""
    a = _attempts("o", kind, "worker", [("error", {"input": {"task": 1}}), ("ok", {"input": {"task": 1}})])
    b = _attempts("r", kind, "worker", [("ok", {"input": {"task": 1}})])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]
    a = _attempts("o", kind, "worker", [("error", {"input": {"task": 1}}), ("ok", {"input": {"task": 2}})])
    b = _attempts("r", kind, "worker", [("ok", {"input": {"task": 2}})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]


def test_inputs_that_are_not_json_tell_attempts_apart_by_their_value() -> None:
    """Spans built in code may hold values JSON cannot write (a set): two such inputs that differ are two steps,
    equal ones are attempts of one."""
    a = _attempts("o", "agent", "worker", [("error", {"input": {1, 2}}), ("ok", {"input": {3}})])
    b = _attempts("r", "agent", "worker", [("ok", {"input": {3}})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]
    a = _attempts("o", "agent", "worker", [("error", {"input": {1, 2}}), ("ok", {"input": {1, 2}})])
    b = _attempts("r", "agent", "worker", [("ok", {"input": {1, 2}})])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]


@pytest.mark.parametrize("changed", [{"operation": "write"}, {"key": "user:8"}, {"query": "refunds of 8"}])
def test_a_failed_memory_read_is_retried_only_by_one_with_the_same_operation_key_and_query(changed: dict) -> None:
    """A memory span's attempts share operation, key and query: any of them changed makes another step."""
    fields = {"operation": "read", "key": "user:7", "query": "refunds of 7"}
    a = _attempts("o", "memory", "store", [("error", fields), ("ok", fields)])
    b = _attempts("r", "memory", "store", [("ok", fields)])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]
    a = _attempts("o", "memory", "store", [("error", fields), ("ok", {**fields, **changed})])
    b = _attempts("r", "memory", "store", [("ok", {**fields, **changed})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]


# -- siblings: which siblings ran as a set (concurrency) -------------------------------------------------------------


def _turn(prefix: str, order: list[str], output: object, *, call_ids: bool = True) -> list[Span]:
    """An agent root, an LLM turn answering ``output``, then one tool call per name in ``order``, one after the
    other (no overlap in time; each with ``call_id`` ``<name>-id`` when ``call_ids``), then a final LLM call."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    t.add("llm", "chat", parent=root, model="m", messages=MSGS, output=output, span_id=f"{prefix}turn")
    for name in order:
        t.add("tool", name, parent=root, arguments={"city": "Paris"}, span_id=f"{prefix}{name}",
              **({"call_id": f"{name}-id"} if call_ids else {}))
    t.add("llm", "chat", parent=root, model="m", messages=MSGS, output="done", span_id=f"{prefix}final")
    return t.spans


def _calls(*names: str) -> list[object]:
    return [{"id": f"{n}-id", "type": "function", "function": {"name": n}} for n in names]


def test_an_llm_answer_given_as_a_list_of_messages_makes_its_tool_calls_one_set() -> None:
    """The tool calls a turn asked for (``tool_calls`` of any message of its answer, here a list of two) ran as
    a set: the replay running them one after the other in another order pairs them call for call."""
    output = [{"role": "assistant", "content": "checking"}, {"role": "assistant", "tool_calls": _calls("weather", "clock")}]
    a = _turn("o", ["weather", "clock"], output)
    b = _turn("r", ["clock", "weather"], output)
    assert _rows(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), ("ofinal", "rfinal")]


def test_tool_calls_without_a_string_id_are_ignored_and_the_others_still_make_a_set() -> None:
    """An answer's ``tool_calls`` may hold entries with no id, a numeric id, or no object at all (damaged
    exports): they name no call of the turn, and the calls that do carry an id still pair as a set."""
    output = {"role": "assistant", "tool_calls": [{"type": "function"}, {"id": 7}, "clock", *_calls("weather", "clock")]}
    a = _turn("o", ["weather", "clock"], output)
    b = _turn("r", ["clock", "weather"], output)
    assert _rows(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), ("ofinal", "rfinal")]


MS = 1_000_000


def _timed(*spans: tuple[str, int | None, int | None]) -> list[Span]:
    """Sibling tool spans ``(name, start ms, end ms)`` (None: not recorded), in that order."""
    return [make_span("tool", name, span_id=f"{name}{n}", seq=n, start_ns=None if st is None else st * MS,
                      end_ns=None if en is None else en * MS, arguments={}) for n, (name, st, en) in enumerate(spans)]


def test_siblings_form_a_set_while_each_starts_before_every_earlier_one_of_the_set_has_ended() -> None:
    """A sibling joins the run before it when it starts before the latest end of the run so far (not only the
    previous span's end), or at the same timestamp as the previous sibling; one starting exactly when the run
    ended does not join. Runs of one span are no set."""
    spans = _timed(
        ("a", 0, 5), ("b", 3, 10), ("c", 4, 6), ("d", 8, 12),  # d starts before b's end (10), after a's and c's
        ("e", 12, 20), ("f", 12, 13),  # e starts when the run before ended; f at e's very start
        ("g", 30, None), ("h", 30, None),  # no end recorded: the same start alone makes them a set
        ("i", 40, 41),  # alone
        ("j", 50, 60), ("k", 55, 56),
        ("l", 70, 71),  # alone, last
    )
    assert concurrent_groups(list(range(len(spans))), spans) == [(0, 4), (4, 6), (6, 8), (9, 11)]


def test_siblings_without_timestamps_are_never_a_set_by_time() -> None:
    """Spans with no recorded start (nor end) tell nothing about overlap: they stay a sequence."""
    spans = _timed(("a", None, None), ("b", None, None), ("c", None, None))
    assert concurrent_groups([0, 1, 2], spans) == []


def test_only_tool_spans_whose_call_id_the_previous_llm_turn_asked_for_form_its_set() -> None:
    """Sequential siblings after an LLM turn asking for calls ``c1`` and ``c2``: the tool spans carrying those
    call ids are one set; tool spans with other call ids, and spans of other kinds carrying the turn's ids,
    are not."""
    turn = make_span("llm", "chat", span_id="turn", seq=0, start_ns=0, end_ns=1 * MS, model="m",
                     output={"role": "assistant", "tool_calls": [{"id": "c1"}, {"id": "c2"}]})

    def after(kind: str, ids: tuple[str, str]) -> list[Span]:
        return [turn] + [make_span(kind, f"s{n}", span_id=f"s{n}", seq=n + 1, start_ns=(2 + 2 * n) * MS,
                                   end_ns=(3 + 2 * n) * MS, call_id=cid) for n, cid in enumerate(ids)]

    spans = after("tool", ("c1", "c2"))
    assert concurrent_groups([0, 1, 2], spans) == [(1, 3)]
    spans = after("tool", ("x1", "x2"))
    assert concurrent_groups([0, 1, 2], spans) == []
    spans = after("agent", ("c1", "c2"))
    assert concurrent_groups([0, 1, 2], spans) == []


def test_identical_concurrent_calls_pair_in_order_the_nth_with_the_nth() -> None:
    """A set of concurrent calls with three identical fetches among them, started in another order by the
    replay: the replay's first fetch pairs with the original's first, the second with the second, the third
    with the third (their outputs are compared pair by pair)."""
    def run(prefix: str, calls: list[tuple[str, int]]) -> list[Span]:
        t0 = 1_762_161_242_118_000_000
        spans = [make_span("agent", "agent", span_id=f"{prefix}root", seq=0, start_ns=t0, end_ns=t0 + 100 * MS)]
        for n, (tool, out) in enumerate(calls):  # all overlapping: one concurrent set
            spans.append(make_span("tool", tool, span_id=f"{prefix}{tool}{out}", parent_id=f"{prefix}root", seq=n + 1,
                                   start_ns=t0 + (1 + n) * MS // 10, end_ns=t0 + 50 * MS, arguments={"page": 1},
                                   output=out))
        return spans

    a = run("o", [("fetch", 1), ("lookup", 0), ("fetch", 2), ("clock", 0), ("fetch", 3)])
    b = run("r", [("fetch", 1), ("fetch", 2), ("fetch", 3), ("lookup", 0), ("clock", 0)])
    assert _rows(a, b) == [("ofetch1", "rfetch1"), ("olookup0", "rlookup0"), ("ofetch2", "rfetch2"),
                           ("oclock0", "rclock0"), ("ofetch3", "rfetch3")]


def _tools_of(prefix: str, calls: list[tuple[str, str]]) -> list[Span]:
    """An agent root with tool calls ``(name, status)`` one after the other (same arguments each), span ids
    ``<prefix>0``, ``<prefix>1``..."""
    t = TraceBuilder(prefix)
    root = t.add("agent", "agent", span_id=f"{prefix}root")
    for n, (tool, status) in enumerate(calls):
        t.add("tool", tool, parent=root, status=status, arguments={"id": 7}, span_id=f"{prefix}{n}")
    return t.spans


@pytest.mark.parametrize("flip", [False, True])
def test_when_both_runs_retried_a_call_their_attempts_pair_and_so_do_their_successes(flip: bool) -> None:
    """Both runs retried ``refund`` once; one of them also made a later ``notify`` call. The failed attempts pair
    with each other, the successes with each other, ``notify`` is one-sided (either side holding it)."""
    one = [("refund", "error"), ("refund", "ok"), ("notify", "ok")]
    two = [("refund", "error"), ("refund", "ok")]
    a, b = (_tools_of("o", one), _tools_of("r", two)) if not flip else (_tools_of("o", two), _tools_of("r", one))
    expected = [("o0", "r0", False), ("o1", "r1", False)]
    expected.append(("o2", None, False) if not flip else (None, "r2", False))
    assert _retry_rows(a, b) == expected


@pytest.mark.parametrize("flip", [False, True])
def test_a_failure_given_up_on_pairs_with_the_other_runs_failed_attempt_even_when_both_runs_retried(flip: bool) -> None:
    """One run retried ``lookup`` and then gave up on ``refund`` after one failure; the other ran ``lookup`` once
    and retried ``refund``. The two ``refund`` failures are the same step and pair; the retried ``lookup``'s
    attempt is a retry row; the second run's successful ``refund`` is one-sided."""
    gave_up = [("lookup", "error"), ("lookup", "ok"), ("refund", "error")]
    retried = [("lookup", "ok"), ("refund", "error"), ("refund", "ok")]
    if not flip:
        a, b = _tools_of("o", gave_up), _tools_of("r", retried)
        expected = [("o0", None, True), ("o1", "r0", False), ("o2", "r1", False), (None, "r2", False)]
    else:
        a, b = _tools_of("o", retried), _tools_of("r", gave_up)
        expected = [(None, "r0", True), ("o0", "r1", False), ("o1", "r2", False), ("o2", None, False)]
    assert _retry_rows(a, b) == expected


def test_a_failure_followed_by_another_call_stays_a_call_even_in_a_run_that_retried_something_else() -> None:
    """Only a failure followed by a success of the same call is an attempt: the original's failed ``lookup``,
    followed by ``notify``, stays an ordinary (one-sided) call although the same run later retried ``refund``."""
    a = _tools_of("o", [("lookup", "error"), ("notify", "ok"), ("refund", "error"), ("refund", "ok")])
    b = _tools_of("r", [("notify", "ok"), ("refund", "ok")])
    assert _retry_rows(a, b) == [("o0", None, False), ("o1", "r0", False), ("o2", None, True), ("o3", "r1", False)]


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
    a, b = _run("o", ["lookup", "refund", "notify"]), _run("r", ["lookup", "notify"])
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
    assert _rows(t.spans, u.spans) == [("o0", None), ("o1", "r0")]


def _block(originals: list[tuple[str, dict]], replays: list[tuple[str, dict]]) -> list[tuple[str | None, str | None]]:
    """The rows of two runs whose root holds the tool calls ``(tool, arguments)`` given, span ids ``o0``... and
    ``r0``...; none of the calls is equal across the runs here, so the lists are one replace block."""
    def run(prefix: str, calls: list[tuple[str, dict]]) -> list[Span]:
        t = TraceBuilder(prefix)
        root = t.add("agent", "agent", span_id=f"{prefix}root")
        for n, (tool, args) in enumerate(calls):
            t.add("tool", tool, parent=root, arguments=args, span_id=f"{prefix}{n}")
        return t.spans

    return _rows(run("o", originals), run("r", replays))


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


@pytest.mark.parametrize("flip", [False, True])
def test_a_run_that_retried_two_calls_against_one_that_gave_up_on_the_second(flip: bool) -> None:
    """One run retried ``lookup`` and ``refund``; the other ran ``lookup`` once and gave up on ``refund`` after a
    failure. ``lookup``'s failed attempt is a retry row; the ``refund`` failures pair (the same step), and the
    retrying run's successful ``refund`` is one-sided."""
    retried = [("lookup", "error"), ("lookup", "ok"), ("refund", "error"), ("refund", "ok")]
    gave_up = [("lookup", "ok"), ("refund", "error")]
    if not flip:
        a, b = _tools_of("o", retried), _tools_of("r", gave_up)
        expected = [("o0", None, True), ("o1", "r0", False), ("o2", "r1", False), ("o3", None, False)]
    else:
        a, b = _tools_of("o", gave_up), _tools_of("r", retried)
        expected = [(None, "r0", True), ("o0", "r1", False), ("o1", "r2", False), (None, "r3", False)]
    assert _retry_rows(a, b) == expected


def test_a_concurrent_set_in_another_order_and_an_extra_call_after_it() -> None:
    """The replay ran one turn's tool calls in another order and then made an extra call: the set pairs call for
    call, the extra call is a replay-only row, and the final answer still pairs."""
    output = {"role": "assistant", "tool_calls": _calls("weather", "clock")}
    a = _turn("o", ["weather", "clock"], output)
    b = _turn("r", ["clock", "weather", "notify"], output)
    assert _rows(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), (None, "rnotify"),
                           ("ofinal", "rfinal")]


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
        a = _attempts("o", "decision", "route", [("ok", {"decision": odd})])
        b = _attempts("r", "decision", "route", [("ok", {"decision": odd})])
        assert _rows(a, b) == [("o0", "r0")]


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
    a, b = _run("o", ["lookup", "notify", "search", "notify"]), _run("r", ["lookup", "refund", "notify"])
    assert _rows(a, b) == [("olookup1", "rlookup1"), ("onotify1", None), ("osearch1", None), (None, "rrefund1"),
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
    a = _attempts("o", "tool", "call", [("ok", {"tool_name": {"n": 1}, "arguments": {"id": 1}}),
                                        ("ok", {"tool_name": "refund", "arguments": {}})])
    b = _attempts("r", "tool", "call", [("ok", {"tool_name": "notify", "arguments": {}}),
                                        ("ok", {"tool_name": {"n": 1}, "arguments": {"id": 1}})])
    assert _rows(a, b) == [(None, "r0"), ("o0", "r1"), ("o1", None)]


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
