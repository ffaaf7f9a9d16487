"""Collapse and expand subtrees (issue 7, item 3): `z` toggles the fold at the cursor, left/right like a tree,
`C` collapses to the cursor row's depth, `Z` expands all; n/p, search and jumps expand what hides their target.
Plus the pure helpers of tracetui.tui.rowfilter, checked against brute force.

The nested pair (written by ``nested_pair``) has 9 rows, depths and divergences::

    0 agent root (0)
    1   agent planner (1)
    2     tool lookup paris (2)
    3     tool lookup rome/roma (2)   args_mismatch, the first divergence
    4   agent booker (1)
    5     agent payer (2)
    6       tool charge 10/12 (3)     args_mismatch
    7     tool book (2)
    8   decision finish (1)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.helpers import wait_loaded
from tests.tui.test_pilot_search import _submit
from tracetui.tui import TraceTuiApp, rowfilter
from tracetui.tui.screens.help_screen import HelpScreen
from tracetui.tui.widgets.aligned_view import AlignedView
from tracetui.tui.widgets.span_detail import SpanDetail

FOLD_KEYS = ("toggle-fold", "fold-or-parent", "expand-or-child", "collapse-to-depth", "expand-all")


def _tool(i: int, sid: str, parent: str, name: str, args: dict, out: dict) -> dict:
    return {"span_id": sid, "parent_id": parent, "seq": i, "kind": "tool", "name": f"execute_tool {name}",
            "start_ns": 1000 + i * 10, "end_ns": 1005 + i * 10, "status": "ok", "error_type": None,
            "tool": {"tool_name": name, "arguments": args, "effect": "read", "mode": "live", "output": out}}


def _agent(i: int, sid: str, parent: str | None, name: str) -> dict:
    return {"span_id": sid, "parent_id": parent, "seq": i, "kind": "agent", "name": f"invoke_agent {name}",
            "start_ns": 1000 + i * 10, "end_ns": 2000, "status": "ok", "error_type": None,
            "agent": {"agent_name": name}}


def _spans(city: str, amount: int) -> list[dict]:
    return [
        _agent(0, "s0", None, "root"), _agent(1, "a1", "s0", "planner"),
        _tool(2, "t1", "a1", "lookup", {"city": "paris"}, {"hotels": 3}),
        _tool(3, "t2", "a1", "lookup", {"city": city}, {"hotels": 5}),
        _agent(4, "a2", "s0", "booker"), _agent(5, "a3", "a2", "payer"),
        _tool(6, "t3", "a3", "charge", {"amount": amount}, {"ok": True}),
        _tool(7, "t4", "a2", "book", {"slot": "09:00"}, {"ok": True}),
        {"span_id": "d1", "parent_id": "s0", "seq": 8, "kind": "decision", "name": "decision finish",
         "start_ns": 1090, "end_ns": 1095, "status": "ok", "error_type": None,
         "decision": {"decision": "finish", "value": "done"}},
    ]


@pytest.fixture
def nested_pair(tmp_path: Path) -> tuple[str, str]:
    """A 9-row pair three levels deep (see the module docstring)."""
    header = {"schema": "tracetui/1", "run_id": "run-fold", "agent": "fold-agent", "input": {"message": "trip"}}
    paths = []
    for name, spans in (("original", _spans("rome", 10)), ("replay", _spans("roma", 12))):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in [header, *spans]))
        paths.append(str(path))
    return paths[0], paths[1]


def _shown(view: AlignedView) -> list[int]:
    return [view.row_at_line(i) for i in range(view.line_count)]  # type: ignore[misc]


async def _open(pilot: Pilot[object]) -> AlignedView:
    await wait_loaded(pilot)
    view = pilot.app.query_one(AlignedView)
    assert view.row_count == 9 and view.cursor_row == 3
    return view


async def test_z_collapses_and_expands_the_subtree(nested_pair: tuple[str, str]) -> None:
    """z on a row with children: its subtree becomes one line saying how many rows and divergences it hides;
    the cursor keeps its row; movement skips the hidden rows; z again shows them."""
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        view = await _open(pilot)
        await pilot.press("j")
        assert view.cursor_row == 4
        await pilot.press("z")
        await pilot.pause()
        assert view.folds == {4: 8}
        assert _shown(view) == [0, 1, 2, 3, 4, 8] and view.cursor_row == 4
        line = view.render_line(view.line_of_row(4) - int(view.scroll_offset.y)).text  # type: ignore[operator]
        assert "invoke_agent booker" in line and "▸ … 3 rows, 1 divergent" in line
        assert "3 rows collapsed, 1 divergent" in view.message and "showing 6 of 9 rows" in view.message
        await pilot.press("j")
        assert view.cursor_row == 8  # the hidden rows are skipped
        await pilot.press("k", "z")
        await pilot.pause()
        assert view.folds == {} and view.line_count == 9 and "row 4 expanded" in view.message
        await pilot.press("home", "j", "j")
        assert view.cursor_row == 2
        await pilot.press("z")  # a leaf: nothing to collapse
        assert view.folds == {} and "no children" in view.message


async def test_left_and_right_walk_the_tree(nested_pair: tuple[str, str]) -> None:
    """left: collapse, or (collapsed or childless) go to the parent; right: expand, or go to the first child."""
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        view = await _open(pilot)
        await pilot.press("j", "j", "j")
        assert view.cursor_row == 6
        await pilot.press("left")  # a leaf: to its parent
        assert view.cursor_row == 5 and view.folds == {}
        await pilot.press("left")  # collapses 5
        assert view.cursor_row == 5 and view.folds == {5: 7}
        await pilot.press("left")  # collapsed: to its parent
        assert view.cursor_row == 4
        await pilot.press("right")  # expanded: to its first child (still collapsed)
        assert view.cursor_row == 5
        await pilot.press("right")  # expands
        assert view.folds == {} and view.cursor_row == 5
        await pilot.press("right")
        assert view.cursor_row == 6
        await pilot.press("home", "left")  # a root without a parent, but with children: collapses
        assert view.folds == {0: 9} and _shown(view) == [0]
        await pilot.press("left")  # collapsed root: no parent
        assert view.cursor_row == 0


async def test_collapse_to_depth_and_expand_all(nested_pair: tuple[str, str]) -> None:
    """C collapses every subtree at the cursor row's depth; Z expands everything; detail pane follows."""
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        view = await _open(pilot)
        await pilot.press("home", "j")
        assert view.cursor_row == 1
        await pilot.press("C")
        await pilot.pause()
        assert view.folds == {1: 4, 4: 8} and _shown(view) == [0, 1, 4, 8]
        assert "2 subtrees collapsed" in view.message and "showing 4 of 9 rows" in view.filter_summary
        await pilot.press("j")
        assert view.cursor_row == 4 and app.query_one(SpanDetail).text.startswith("row 4")
        await pilot.press("Z")
        await pilot.pause()
        assert view.folds == {} and view.line_count == 9 and "2 collapsed subtrees expanded" in view.message
        assert view.filter_summary == "showing all 9 rows"


async def test_n_search_and_jump_expand_what_hides_the_target(nested_pair: tuple[str, str]) -> None:
    """n/p, a search match and a span-id jump into a collapsed subtree expand the folds holding the target
    (only those)."""
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        view = await _open(pilot)
        await pilot.press("home", "j", "C")
        assert view.folds == {1: 4, 4: 8} and view.cursor_row == 1
        await pilot.press("n")
        await pilot.pause()
        assert view.cursor_row == 3 and view.folds == {4: 8} and view.line_of_row(3) is not None
        assert "expanded 1 collapsed subtree to show row 3" in view.message
        await pilot.press("n")
        await pilot.pause()
        assert view.cursor_row == 6 and view.folds == {} and view.line_count == 9
        await pilot.press("home", "C")  # everything under the root
        assert _shown(view) == [0]
        await _submit(pilot, "/", "charge")
        assert view.cursor_row == 6 and view.folds == {} and view.line_of_row(6) is not None
        await pilot.press("home", "C")
        await _submit(pilot, ":", "t4")
        assert view.cursor_row == 7 and view.line_of_row(7) is not None
        await pilot.press("home", "C")
        await pilot.press("p")  # wraps nowhere: n/p never wrap; from row 0 there is no previous one
        assert view.cursor_row == 0 and view.folds == {0: 9}


async def test_folds_and_the_divergent_filter_combine(nested_pair: tuple[str, str]) -> None:
    """Under v, a collapsed row stands for its subtree: shown when it holds a divergent row."""
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        view = await _open(pilot)
        await pilot.press("home", "j", "C")
        await pilot.press("v")
        await pilot.pause()
        assert _shown(view) == [1, 4] and view.filtered
        assert view.filter_summary == "showing 2 of 9 rows: divergent only; 2 collapsed subtrees (5 rows)"
        await pilot.press("Z")
        await pilot.pause()
        assert _shown(view) == [3, 6] and view.filtered


async def test_fold_keys_have_ids_tooltips_and_help(nested_pair: tuple[str, str]) -> None:
    app = TraceTuiApp(*nested_pair)
    async with app.run_test(size=(120, 36)) as pilot:
        await _open(pilot)
        active = {b.binding.id: b.binding for b in app.screen.active_bindings.values() if b.binding.id}
        for key_id in FOLD_KEYS:
            assert key_id in active and active[key_id].tooltip
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert set(FOLD_KEYS) <= {e.binding_id for e in app.screen.entries}


# -- the pure helpers, against brute force --------------------------------------


def _random_depths(n: int, seed: int) -> list[int]:
    rnd = random.Random(seed)
    depths, d = [], 0
    for _ in range(n):
        depths.append(d)
        r = rnd.random()
        if r < 0.35:
            d += rnd.choice((1, 1, 1, 2))  # the odd gap: a row two levels under the previous one
        elif r < 0.65 and d:
            d -= rnd.randint(1, d)
    return depths


def _end(depths: list[int], row: int) -> int:
    return next((j for j in range(row + 1, len(depths)) if depths[j] <= depths[row]), len(depths))


@pytest.mark.parametrize("as_bytes", [True, False])
def test_tree_helpers_match_brute_force(as_bytes: bool) -> None:
    plain = _random_depths(3000, 7)
    depths = bytes(plain) if as_bytes else plain
    for row in range(0, 3000, 7):
        assert rowfilter.subtree_end(depths, row) == _end(plain, row)
        parent = next((j for j in range(row - 1, -1, -1) if plain[j] < plain[row]), None)
        assert rowfilter.parent_row(depths, row) == parent
        assert rowfilter.has_children(depths, row) == (row + 1 < len(plain) and plain[row + 1] > plain[row])
    for level in (0, 1, 3):
        heads = rowfilter.heads_at_depth(depths, level)
        assert heads == [r for r in range(len(plain) - 1) if plain[r] <= level < plain[r + 1]]
        ends = rowfilter.subtree_ends(depths, heads)
        assert ends == {h: _end(plain, h) for h in heads}
        shown = rowfilter.visible_rows(len(plain), None, rowfilter.fold_ranges(ends, ends))
        assert shown is not None and all(plain[r] <= level for r in shown)


def test_visible_rows_combines_filters_and_folds() -> None:
    plain = _random_depths(2000, 3)
    depths = bytes(plain)
    rnd = random.Random(5)
    selected = bytearray(rnd.random() < 0.3 for _ in plain)
    folds = {h: rowfilter.subtree_end(depths, h) for h in rnd.sample(range(2000), 40)}
    ranges = rowfilter.fold_ranges(folds, folds)
    hidden = set()
    for head, end in folds.items():
        hidden.update(range(head + 1, end))
    expected = []
    for r in range(2000):
        if r in hidden:
            continue
        if selected[r] or (r in folds and any(selected[head] for head in range(r, folds[r]))):
            expected.append(r)
    assert list(rowfilter.visible_rows(2000, rowfilter.selected_rows(selected), ranges) or []) == expected
    assert list(rowfilter.visible_rows(2000, rowfilter.selected_rows(selected), []) or []) == [r for r in range(2000) if selected[r]]
    assert rowfilter.visible_rows(2000, None, []) is None
    assert rowfilter.fold_ranges({5: 9, 6: 8, 9: 9, 12: 20}, {5: 9, 6: 8, 9: 9, 12: 20}) == [(5, 9), (12, 20)]
    assert rowfilter.row_depths([type("R", (), {"depth": 300})()]) == [300]  # too deep for bytes: a list
