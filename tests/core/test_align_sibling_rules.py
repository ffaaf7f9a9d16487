"""The span alignment's rules for sibling lists, one statement each (issue 25: ``diff.lcs``, ``diff.siblings``).

Which original span a user sees on the same row as which replay span among siblings: the equal runs and the longest
common subsequence under the pairing (and its tie-breaks), failed attempts retried, and siblings that ran as a set.
Spans are built in the test (``tests.builders``, ``tests.align_helpers``). The tree, the keys and the replace blocks:
``test_align_rules.py``.
"""

from __future__ import annotations

import random

import pytest

from tests.align_helpers import attempts, row_ids, run_calls
from tests.builders import TraceBuilder, make_span
from tracetui.core.diff.align import align
from tracetui.core.diff.lcs import equal_run, equal_run_back, matching_blocks, myers
from tracetui.core.diff.siblings import concurrent_groups
from tracetui.core.model import Span

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
    a, b = run_calls("o", ["lookup", "refund"]), run_calls("r", ["refund", "lookup"])
    assert row_ids(a, b) == [("olookup1", None), ("orefund1", "rrefund1"), (None, "rlookup1")]


def test_calls_inserted_before_a_common_ending_leave_the_ending_paired_end_to_end() -> None:
    """Original ``plan, lookup, answer``; replay ``lookup, lookup, answer``: the runs end alike, so the last
    ``lookup`` and ``answer`` pair with the original's; the replay's first ``lookup`` is the extra one."""
    a, b = run_calls("o", ["plan", "lookup", "answer"]), run_calls("r", ["lookup", "lookup", "answer"])
    assert row_ids(a, b) == [("oplan1", None), (None, "rlookup1"), ("olookup1", "rlookup2"), ("oanswer1", "ranswer1")]


def test_a_call_repeated_at_the_start_of_the_replay_pairs_the_first_repeat() -> None:
    """Original ``lookup, answer``; replay ``lookup, lookup, answer``: the common start pairs first with first, the
    second ``lookup`` is the extra one (the common beginning and ending never share a span)."""
    a, b = run_calls("o", ["lookup", "answer"]), run_calls("r", ["lookup", "lookup", "answer"])
    assert row_ids(a, b) == [("olookup1", "rlookup1"), (None, "rlookup2"), ("oanswer1", "ranswer1")]


# -- siblings: what makes two spans attempts of one call (retries) -------------------------------------------------




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
    a = attempts("o", "llm", "chat", [("error", fields), ("ok", again)])
    b = attempts("r", "llm", "chat", [("ok", fields)])
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
    a = attempts("o", "llm", "chat", [("error", fields), ("ok", {**fields, **changed})])
    b = attempts("r", "llm", "chat", [("ok", {**fields, **changed})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]


@pytest.mark.parametrize("kind", ["agent", "other"])
def test_a_failed_agent_or_other_span_is_retried_only_by_one_with_the_same_input(kind: str) -> None:
    """An agent (or other) span's attempts share name and input: the same input is a retry, another input is
    another step."""
    a = attempts("o", kind, "worker", [("error", {"input": {"task": 1}}), ("ok", {"input": {"task": 1}})])
    b = attempts("r", kind, "worker", [("ok", {"input": {"task": 1}})])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]
    a = attempts("o", kind, "worker", [("error", {"input": {"task": 1}}), ("ok", {"input": {"task": 2}})])
    b = attempts("r", kind, "worker", [("ok", {"input": {"task": 2}})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]


def test_inputs_that_are_not_json_tell_attempts_apart_by_their_value() -> None:
    """Spans built in code may hold values JSON cannot write (a set): two such inputs that differ are two steps,
    equal ones are attempts of one."""
    a = attempts("o", "agent", "worker", [("error", {"input": {1, 2}}), ("ok", {"input": {3}})])
    b = attempts("r", "agent", "worker", [("ok", {"input": {3}})])
    assert _retry_rows(a, b) == [("o0", "r0", False), ("o1", None, False)]
    a = attempts("o", "agent", "worker", [("error", {"input": {1, 2}}), ("ok", {"input": {1, 2}})])
    b = attempts("r", "agent", "worker", [("ok", {"input": {1, 2}})])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]


@pytest.mark.parametrize("changed", [{"operation": "write"}, {"key": "user:8"}, {"query": "refunds of 8"}])
def test_a_failed_memory_read_is_retried_only_by_one_with_the_same_operation_key_and_query(changed: dict) -> None:
    """A memory span's attempts share operation, key and query: any of them changed makes another step."""
    fields = {"operation": "read", "key": "user:7", "query": "refunds of 7"}
    a = attempts("o", "memory", "store", [("error", fields), ("ok", fields)])
    b = attempts("r", "memory", "store", [("ok", fields)])
    assert _retry_rows(a, b) == [("o0", None, True), ("o1", "r0", False)]
    a = attempts("o", "memory", "store", [("error", fields), ("ok", {**fields, **changed})])
    b = attempts("r", "memory", "store", [("ok", {**fields, **changed})])
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
    assert row_ids(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), ("ofinal", "rfinal")]


def test_tool_calls_without_a_string_id_are_ignored_and_the_others_still_make_a_set() -> None:
    """An answer's ``tool_calls`` may hold entries with no id, a numeric id, or no object at all (damaged
    exports): they name no call of the turn, and the calls that do carry an id still pair as a set."""
    output = {"role": "assistant", "tool_calls": [{"type": "function"}, {"id": 7}, "clock", *_calls("weather", "clock")]}
    a = _turn("o", ["weather", "clock"], output)
    b = _turn("r", ["clock", "weather"], output)
    assert row_ids(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), ("ofinal", "rfinal")]


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
    assert row_ids(a, b) == [("ofetch1", "rfetch1"), ("olookup0", "rlookup0"), ("ofetch2", "rfetch2"),
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
    assert row_ids(a, b) == [("oturn", "rturn"), ("oweather", "rweather"), ("oclock", "rclock"), (None, "rnotify"),
                           ("ofinal", "rfinal")]
