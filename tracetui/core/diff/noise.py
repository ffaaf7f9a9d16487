"""Noise rules the user declares: fields or whole spans that never count as divergences.

Some differences are real but not what an engineer diffs two runs for: a simulated user's
rewording, a clock tool's value. A project declares them once, and ``tracetui diff`` / the TUI
take them out of the divergences, saying how many fields they hid ("3 fields ignored by config")
so nothing is hidden silently.

Where rules come from (``load_rules``), merged in this order:

- ``[tool.tracetui]`` of the nearest ``pyproject.toml`` from the current folder upwards, and the
  nearest ``.tracetui.toml`` (its top level, or its ``[tool.tracetui]`` table);
- ``--ignore PATH`` on the command line (a field path, any span).

The table's shape::

    [tool.tracetui]
    ignore = ["tool.output.fetched_at"]      # field paths, in any span
    [[tool.tracetui.noise]]
    tool = "get_time"                        # which spans: tool (name), kind, name (span name);
    fields = ["tool.output"]                 # all given must match; fields omitted: the whole span
    [[tool.tracetui.noise]]
    kind = "llm"
    fields = ["llm.messages[*].content"]

A field path is one of the report's (``tool.output``, ``llm.messages[2].content``); a pattern
matches it and everything below it, and ``*`` matches any run of characters (brackets are literal).
A selector ``[KEY=VALUE]`` in place of an index matches the items of that list whose ``KEY`` is
``VALUE`` in either run's span: ``llm.messages[role=user]`` is every user message of an LLM call's
input (a simulated user's rewording), ``llm.messages[role=assistant].content`` the text of the
assistant's earlier turns (their tool calls still compared), ``llm.output.tool_calls[name=now]``
the calls of a clock tool.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import re
from functools import lru_cache
from typing import Any, Iterable

from tracetui.core.changes import DivergenceType, FieldChange
from tracetui.core.model import Span, SpanKind
from tracetui.core.projectfiles import ConfigFileError, config_documents

__all__ = ["NoiseConfigError", "NoiseRule", "Noisy", "apply_rules", "load_rules", "rules_from_table"]


class NoiseConfigError(ValueError):
    """A noise table that is not of the documented shape; the message names the file and the key."""


@dataclass(frozen=True)
class NoiseRule:
    """One declared noise: which spans (None: any), which fields (empty: the whole span).

    Attributes:
        kind: A span kind value (``"tool"``, ``"llm"``...), or None.
        tool: A tool name (tool spans only), or None.
        name: A span name, or None.
        fields: Field path patterns; empty: every field of the span (the whole span is volatile).
        source: Where the rule was declared (a file path, or ``--ignore``), for messages.
    """

    kind: str | None = None
    tool: str | None = None
    name: str | None = None
    fields: tuple[str, ...] = ()
    source: str = ""

    def spans(self, span: Span) -> bool:
        """Whether the rule applies to ``span``."""
        if self.kind is not None and span.kind.value != self.kind:
            return False
        if self.tool is not None and (span.kind is not SpanKind.TOOL or span.data.get("tool_name", span.name) != self.tool):
            return False
        return self.name is None or span.name == self.name

    def field(self, path: str, spans: Iterable[Span | None] = ()) -> bool:
        """Whether the rule hides the field at ``path`` (of a span it applies to). A pattern with a
        ``[KEY=VALUE]`` selector needs the pair's ``spans`` to look the item up (none given: no match)."""
        if not self.fields:
            return True
        for rx, selectors in _patterns(self.fields):
            m = rx.match(path)
            if m is None:
                continue
            if not selectors or all(_selected(path[:m.end(i + 1) + 1], key, value, spans)
                                    for i, (key, value) in enumerate(selectors)):
                return True
        return False


_SELECTOR = re.compile(r"\[([A-Za-z_]\w*)=([^\]]*)\]")
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


@lru_cache(maxsize=256)
def _patterns(fields: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], tuple[tuple[str, str], ...]], ...]:
    """Each field pattern as a regex: ``*`` any run of characters, a ``[KEY=VALUE]`` selector any
    index (captured, checked by ``_selected``), everything else literal (``[2]`` too), matching the
    path itself or anything below it; with the selectors' (key, value) in order."""
    out = []
    for p in fields:
        parts, selectors, pos = [], [], 0
        for m in _SELECTOR.finditer(p):
            parts.append(re.escape(p[pos:m.start()]).replace(r"\*", ".*?"))
            parts.append(r"\[(\d+)\]")
            selectors.append((m.group(1), m.group(2)))
            pos = m.end()
        parts.append(re.escape(p[pos:]).replace(r"\*", ".*"))
        out.append((re.compile("".join(parts) + r"(?:$|[.\[])"), tuple(selectors)))
    return tuple(out)


def _selected(prefix: str, key: str, value: str, spans: Iterable[Span | None]) -> bool:
    """Whether the item at ``prefix`` (a report path ending in an index: ``llm.messages[3]``) has
    ``key`` equal to ``value`` (compared as text) in any of ``spans``."""
    steps: list[str | int] = [int(i) if i else name for name, i in _STEP.findall(prefix)][1:]  # less the kind
    for span in spans:
        if span is None:
            continue
        item: Any = span.data
        for step in steps:
            if isinstance(step, int):
                item = item[step] if isinstance(item, list) and step < len(item) else None
            else:
                item = item.get(step) if isinstance(item, dict) else None
            if item is None:
                break
        if isinstance(item, dict) and key in item and str(item[key]) == value:
            return True
    return False


def rules_from_table(table: Any, source: str) -> list[NoiseRule]:
    """The rules of one ``[tool.tracetui]`` table (``ignore`` and ``noise``; other keys are not ours).

    Raises:
        NoiseConfigError: ``ignore`` is not a list of strings, or a ``noise`` entry is not a table of
            ``kind`` / ``tool`` / ``name`` strings and a ``fields`` list of strings.
    """
    if not isinstance(table, dict):
        return []
    rules: list[NoiseRule] = []
    ignore = table.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
        raise NoiseConfigError(f"{source}: [tool.tracetui] ignore must be a list of field paths")
    rules.extend(NoiseRule(fields=(p,), source=source) for p in ignore)
    noise = table.get("noise", [])
    if not isinstance(noise, list):
        raise NoiseConfigError(f"{source}: [tool.tracetui] noise must be an array of tables ([[tool.tracetui.noise]])")
    kinds = {k.value for k in SpanKind}
    for n, entry in enumerate(noise):
        where = f"{source}: [[tool.tracetui.noise]] entry {n + 1}"
        if not isinstance(entry, dict):
            raise NoiseConfigError(f"{where} is not a table")
        unknown = set(entry) - {"kind", "tool", "name", "fields"}
        if unknown:
            raise NoiseConfigError(f"{where}: unknown key {sorted(unknown)[0]!r} (kind, tool, name, fields)")
        for key in ("kind", "tool", "name"):
            if key in entry and not isinstance(entry[key], str):
                raise NoiseConfigError(f"{where}: {key} must be a string")
        if "kind" in entry and entry["kind"] not in kinds:
            raise NoiseConfigError(f"{where}: kind {entry['kind']!r} is not one of {', '.join(sorted(kinds))}")
        fields = entry.get("fields", [])
        if not isinstance(fields, list) or not all(isinstance(p, str) for p in fields):
            raise NoiseConfigError(f"{where}: fields must be a list of field paths")
        if not fields and not any(k in entry for k in ("kind", "tool", "name")):
            raise NoiseConfigError(f"{where}: says no span (kind, tool or name) and no field: it would hide everything")
        rules.append(NoiseRule(entry.get("kind"), entry.get("tool"), entry.get("name"), tuple(fields), source))
    return rules


def load_rules(start: str | None = None, ignore: Iterable[str] = ()) -> list[NoiseRule]:
    """The project's noise rules plus ``ignore`` (CLI ``--ignore`` field paths).

    Args:
        start: Folder to look from (default: the current one), upwards, for the nearest
            ``pyproject.toml`` and the nearest ``.tracetui.toml``.
        ignore: Field paths hidden in any span.

    Raises:
        NoiseConfigError: a file that is not TOML, or a table of the wrong shape (file and key named).
    """
    rules: list[NoiseRule] = []
    try:
        for path, filename, doc in config_documents(start):
            table = doc.get("tool", {}).get("tracetui") if filename == "pyproject.toml" else \
                doc.get("tool", {}).get("tracetui", doc)
            rules.extend(rules_from_table(table, path))
    except ConfigFileError as exc:
        raise NoiseConfigError(f"{exc.path}: cannot read the noise rules: {exc.why}") from None
    rules.extend(NoiseRule(fields=(p,), source="--ignore") for p in ignore)
    return rules


@dataclass(frozen=True)
class Noisy:
    """What the rules hid from one diff: ``fields`` field changes, ``spans`` whole divergences."""

    fields: int = 0
    divergences: int = 0

    def said(self) -> str:
        """``"3 fields ignored by config"`` (empty when nothing was hidden)."""
        if not self.fields:
            return ""
        return f"{self.fields} field{'s' if self.fields != 1 else ''} ignored by config"


def _primary(kind: SpanKind, fields: tuple[FieldChange, ...], old: DivergenceType) -> DivergenceType:
    """The divergence type of the fields left (the policy's highest-priority one); ``old`` when no field left
    is one of ``kind``'s (a pair of two kinds' ``kind`` change), and ``unrecorded_call`` kept where the fields
    left give ``args_mismatch`` (the harness's mark: ``compare.compare_pair``)."""
    from tracetui.core.diff.compare import field_types

    table = field_types(kind)
    best: tuple[int, DivergenceType] | None = None
    for f in fields:
        top = f.path.split("[", 1)[0].split(".", 2)
        key = ".".join(top[:2]) if len(top) > 1 else top[0]
        got = table.get(key)
        if got is not None and (best is None or got[0] < best[0]):
            best = got
    dtype = best[1] if best is not None else old
    if dtype is DivergenceType.ARGS_MISMATCH and old is DivergenceType.UNRECORDED_CALL:
        return old  # a call the harness served nothing for: its argument change is still that unrecorded call
    return dtype


def apply_rules(diff: Any, rules: list[NoiseRule]) -> Noisy:
    """Take what ``rules`` declare as noise out of ``diff`` (a ``TraceDiff``), in place.

    A paired divergence loses the fields the rules of its span hide; with none left it is no
    divergence, else its type is that of the fields left. A one-sided span (missing, extra) that a
    whole-span rule covers is no divergence either. Returns how many field changes were hidden.
    """
    if not rules:
        return Noisy()
    hidden = dropped = 0
    kept = []
    for d in diff.divergences:
        spans = [s for s in (d.original, d.replay) if s is not None]
        mine = [r for r in rules if any(r.spans(s) for s in spans)]
        if not mine:
            kept.append(d)
            continue
        if d.original is None or d.replay is None:
            if any(not r.fields for r in mine):
                hidden += len(d.fields) or 1
                dropped += 1
                diff.row_divergence[d.row] = None
                continue
            kept.append(d)
            continue
        pair = (d.original, d.replay)
        left = tuple(f for f in d.fields if not any(r.field(f.path, pair) for r in mine))
        if len(left) == len(d.fields):
            kept.append(d)
            continue
        hidden += len(d.fields) - len(left)
        if not left:
            dropped += 1
            diff.row_divergence[d.row] = None
            continue
        nd = replace(d, fields=left, type=_primary(d.original.kind, left, d.type))
        diff.row_divergence[d.row] = nd
        kept.append(nd)
    diff.divergences = kept
    diff.divergent_rows = [n for n in diff.divergent_rows if diff.row_divergence[n] is not None]
    diff.ignored_by_config = getattr(diff, "ignored_by_config", 0) + hidden
    return Noisy(hidden, dropped)
