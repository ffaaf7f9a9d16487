"""Pretty JSON with a map from field paths to line ranges, for showing where two values differ.

The full-pair screen pretty-prints each field and highlights the lines holding
the paths a divergence names (``FieldChange.path``). This module is the pure
part: printing, finding the lines of a path, picking which lines of a long
value to keep, and the nested volatile fields of ``compare.VOLATILE_FIELDS``.

Paths are spelt as ``tracetui.core.values`` writes them: ``.key`` for a key
that is an identifier, ``["odd key"]`` (JSON-quoted) otherwise, ``[3]`` for a
list item: ``llm.messages[0].content``, ``tool.output["odd key"][2]``.
Values are shown canonicalised (``tracetui.core.canonical.canonicalize``: JSON
strings inside are parsed, key order kept) so those paths exist in them.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from itertools import islice
from typing import Any, Iterable, Mapping, Sequence, Union

import orjson

from tracetui.core.canonical import PARSE_MARKS, canonicalize, parse_json_string
from tracetui.core.diff.compare import VOLATILE_FIELDS

__all__ = [
    "Pretty",
    "Segment",
    "differing_lines",
    "keep_lines",
    "nested_volatile",
    "parse_path",
    "pretty_value",
    "relative_path",
]

Segment = Union[str, int]
"""One step of a path: a dict key (``str``) or a list index (``int``)."""

LINE_DIFF_MAX = 2_000
"""Differing middle (in lines, either side) above which ``differing_lines`` marks it whole instead of matching."""


def parse_path(suffix: str) -> list[Segment] | None:
    """The steps of a path suffix (``.a[0]["b c"]``), or None when it is not spelt as a path.

    Args:
        suffix: What follows a field's own path: empty, or starting with ``.`` or ``[``.

    Returns:
        ``["a", 0, "b c"]``; ``[]`` for an empty suffix.
    """
    out: list[Segment] = []
    i, n = 0, len(suffix)
    while i < n:
        ch = suffix[i]
        if ch == ".":
            j = i + 1
            while j < n and suffix[j] not in ".[":
                j += 1
            if j == i + 1:
                return None
            out.append(suffix[i + 1 : j])
            i = j
        elif ch == "[":
            if suffix.startswith('["', i):
                try:
                    key, end = json.JSONDecoder().raw_decode(suffix, i + 1)
                except ValueError:
                    return None
                if not isinstance(key, str) or not suffix.startswith("]", end):
                    return None
                out.append(key)
                i = end + 1
            else:
                j = suffix.find("]", i)
                if j < 0 or not suffix[i + 1 : j].isdigit():
                    return None
                out.append(int(suffix[i + 1 : j]))
                i = j + 1
        else:
            return None
    return out


def relative_path(path: str, field_path: str) -> list[Segment] | None:
    """The steps of ``path`` inside the field ``field_path``, or None when it is not inside it.

    ``relative_path("llm.messages[0].content", "llm.messages") == [0, "content"]``;
    ``relative_path("llm.params", "llm.params") == []``.
    """
    if path == field_path:
        return []
    if not path.startswith(field_path) or path[len(field_path)] not in ".[":
        return None
    return parse_path(path[len(field_path) :])


def _dumps_pretty(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        # Integers beyond 64 bits, lone surrogates, nesting deeper than 255: same layout, stdlib.
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@dataclass(slots=True)
class Pretty:
    """One value ready to show: its lines, and what they print.

    Attributes:
        lines: Display lines (not yet made terminal-safe; see ``tui.formatting.visible``).
        is_json: ``lines`` are indented JSON of ``value`` (one JSON node per line start),
            so ``line_range`` can find paths in them; False for prose (a string
            with line breaks, shown raw) and values that could not be printed.
        value: The canonical value printed.
    """

    lines: list[str]
    is_json: bool
    value: Any

    def line_range(self, steps: Sequence[Segment]) -> tuple[int, int] | None:
        """Lines ``[start, end)`` holding the node at ``steps`` (from the key's line to its closing bracket).

        Returns:
            The whole value for ``[]``; None when the path is not in the value
            (a key or item that side does not have, or a value that is not JSON).
        """
        if not steps:
            return 0, len(self.lines)
        if not self.is_json:
            return None
        node, start = self.value, 0
        for step in steps:
            if isinstance(node, dict) and isinstance(step, str) and step in node:
                child = node[step]
                i = 0
                for key in node:
                    if key == step:
                        break
                    i += 1
                before: Any = dict(islice(node.items(), i)) if i else None
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                child = node[step]
                before = node[:step] if step else None
            else:
                return None
            # The container's opening line, then the lines of the children before this one: a container
            # of just those takes 2 lines more (its brackets).
            start += 1 + (_lines_of(before) - 2 if before is not None else 0)
            node = child
        return start, start + _lines_of(node)


def _lines_of(value: Any) -> int:
    """Lines ``value`` takes in indented JSON (one C-level dump when orjson can write it)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).count(b"\n") + 1
    except (TypeError, orjson.JSONEncodeError):
        return _count_lines(value)


def _count_lines(value: Any) -> int:
    """Lines ``value`` takes in indented JSON: a scalar or empty container 1, a container 2 + its children."""
    n = 0
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x:
                n += 2
                stack.extend(x.values())
            else:
                n += 1
        elif isinstance(x, list):
            if x:
                n += 2
                stack.extend(x)
            else:
                n += 1
        else:
            n += 1
    return n


def pretty_value(value: Any) -> Pretty:
    """Print one field value the way the full-pair screen shows it.

    A string with line breaks (a prompt, an answer) is shown raw, one line per
    line; anything else is canonicalised and printed as JSON indented by 2 (so
    ``"404"`` and ``404`` stay apart). Never raises: a value nested too deep to
    canonicalise is printed as recorded (``repr``), and one too deep for ``repr``
    is one line saying so.
    """
    if isinstance(value, str) and "\n" in value:
        parsed = parse_json_string(value)
        if isinstance(parsed, str):
            return Pretty(value.split("\n"), False, value)
    text = None
    try:
        raw = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (TypeError, orjson.JSONEncodeError):
        raw = None
    if raw is not None and not any(m in raw for m in PARSE_MARKS):
        text = raw.decode()  # no JSON string inside: already canonical (the canonical_json fast path)
    else:
        try:
            value = canonicalize(value)
        except RecursionError:
            pass
        if isinstance(value, str) and "\n" in value:
            return Pretty(value.split("\n"), False, value)
        try:
            text = _dumps_pretty(value)
        except (RecursionError, ValueError):
            return Pretty(_repr_lines(value), False, value)
    return Pretty(text.split("\n"), True, value)


def _repr_lines(value: Any) -> list[str]:
    """``repr(value)``'s lines; one line saying so for a value nested deeper than even ``repr`` goes (a JSONL
    reader keeps values of up to 1024 levels, orjson's limit, past the interpreter's 1000)."""
    try:
        return repr(value).split("\n")
    except RecursionError:
        return ["(a value nested too deep to print)"]


def differing_lines(a: Sequence[str], b: Sequence[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The line ranges ``[start, end)`` that differ between two texts, on each side.

    The common leading and trailing lines are trimmed first (the usual case: a
    long payload that differs in a few lines), so ``difflib`` only sees the
    middle; a middle longer than ``LINE_DIFF_MAX`` lines is marked whole.
    """
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < len(a) - head and tail < len(b) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if len(mid_a) > LINE_DIFF_MAX or len(mid_b) > LINE_DIFF_MAX:
        opcodes = [("replace", 0, len(mid_a), 0, len(mid_b))]
    else:
        opcodes = difflib.SequenceMatcher(None, list(mid_a), list(mid_b), autojunk=False).get_opcodes()
    ra: list[tuple[int, int]] = []
    rb: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if i2 > i1:
            ra.append((head + i1, head + i2))
        if j2 > j1:
            rb.append((head + j1, head + j2))
    return ra, rb


def keep_lines(
    total: int, ranges: Iterable[tuple[int, int]], *, head: int = 400, context: int = 3, per_range: int = 200
) -> list[tuple[int, int]]:
    """Which lines of a long value to draw: the first ``head``, and each highlighted range with some context.

    Args:
        total: Lines in the value.
        ranges: Highlighted ``[start, end)`` ranges.
        head: Lines always kept from the top; a value of at most ``head + per_range`` lines is kept whole.
        context: Lines kept before and after each range.
        per_range: Most lines kept of one range (from its start).

    Returns:
        Sorted, disjoint ``[start, end)`` segments; the lines between them are
        left out (the caller says how many).
    """
    if total <= head + per_range:
        return [(0, total)]
    spans = [(0, min(head, total))]
    for start, end in ranges:
        s = max(0, start - context)
        e = min(total, min(end, start + per_range) + context)
        if e > s:
            spans.append((s, e))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def _expand(value: Any, prefix: str, steps: Sequence[str], out: dict[str, Any]) -> None:
    if not steps:
        out[prefix] = value
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if isinstance(value, list):
            for i, item in enumerate(value):
                _expand(item, f"{prefix}[{i}]", rest, out)
    elif isinstance(value, dict) and step in value:
        _expand(value[step], f"{prefix}.{step}", rest, out)


def _pattern_steps(suffix: str) -> list[str]:
    steps: list[str] = []
    for part in suffix.replace("[]", ".[]").split("."):
        if part:
            steps.append(part)
    return steps


def nested_volatile(semantic: Mapping[str, Any]) -> dict[str, Any]:
    """The volatile values inside compared fields (``compare.VOLATILE_FIELDS`` entries below a field), by path.

    ``llm.messages[].tool_call_id`` and the like are ignored by the comparison
    although their field (``llm.messages``) is compared; this lists the ones a
    span has, so they can be shown apart as "not compared".

    Args:
        semantic: ``compare.semantic_fields(span)``.

    Returns:
        ``{"llm.messages[2].tool_call_id": "call_1", ...}``, in field order.
    """
    out: dict[str, Any] = {}
    patterns = sorted(VOLATILE_FIELDS)
    for path, value in semantic.items():
        for pattern in patterns:
            if len(pattern) > len(path) and pattern.startswith(path) and pattern[len(path)] in ".[":
                try:
                    canon = canonicalize(value)
                except RecursionError:
                    continue
                _expand(canon, path, _pattern_steps(pattern[len(path) :]), out)
    return out
