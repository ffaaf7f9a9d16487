"""Fields two trace formats record differently: not compared, and counted (docs/format.md, "Comparison
policy", column "not comparable when").

A recording made by another tool (an OTel export of a pydantic-ai run, a Langfuse trace...) diffed
against its tracetui replay holds what *its* format can hold: no request params, no ``effect``, a
tool-schema hash computed over its own record of the tools, raw values where tracetui writes
redaction tokens, the whole message list as the run's input where tracetui keeps the prompt. None of
that is a step the agent took differently. ``Comparability`` decides, per aligned pair, what cannot
be compared, takes it out of both spans before the comparison, and counts it (``unchecked``): the
report header and JSON say "N fields not comparable" with each path and why, so nothing is hidden
silently.

The rules (only between traces of two different formats, except the redaction rule, which holds
whenever one side's header says it was redacted and the other's does not):

- a semantic field (or an ``llm.params`` key) that **no span of that kind** on one side holds — that
  side's format cannot hold it or its producer did not record it — is not compared where only the
  other side has it ("not recorded by otel-sdk-json"). A field one side holds on some spans is
  compared as usual: its absence on one span is a change;
- ``llm.tool_schemas_hash`` is not compared across formats: each format hashes its own record of
  the tools (OTel tool definitions, the wire request's tools...), so equal tools hash differently;
- the input or output of an ``agent`` / ``other`` span (the run's, at the root) held as a message
  list on one side and as the value on the other (a prompt string, the agent's own mapping) is
  compared on the text they share (``fit_shapes``); the rest (the instructions, the mapping's other
  keys) is not comparable;
- a redaction token (``<EMAIL_88bf8413>``) on the redacted side against the raw value on the other:
  with the redacted side's key at hand (``redactor``, its ``key_id`` the one in that side's header)
  the raw side is redacted as the replay harness redacts a foreign recording, and compared — equal
  when the raw value redacts to that very token, a divergence otherwise. Without the key the pair
  cannot be checked: a string equal to the token's string once each token stands for any text is
  not comparable (counted), anything else still differs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from tracetui.core.diff.compare import semantic_names
from tracetui.core.diff.envelopes import framework_value
from tracetui.core.model import Span, SpanKind, Trace

__all__ = ["TOKEN_RE", "Comparability", "Unchecked"]

TOKEN_RE = re.compile(r"<[A-Z_]+_[0-9a-f]{8}>")
"""A redaction token as tracetui's redactor writes it (``core.harness.redact.TOKEN_RE``; the diff
may not import the harness, a test keeps the two equal)."""

_ROOT_KINDS = (SpanKind.AGENT, SpanKind.OTHER)


@dataclass(frozen=True)
class Unchecked:
    """A field the diff could not compare on some pairs.

    Attributes:
        path: The field (``llm.params.stream``, ``tool.effect``, ``agent.input``).
        reason: Why (``not recorded by otel-sdk-json``...).
        pairs: On how many aligned span pairs.
    """

    path: str
    reason: str
    pairs: int


class Comparability:
    """What two traces can compare (module docstring); ``adjust`` a pair before comparing it.

    Args:
        original, replay: The two runs.
        redactor: Optional: an object with ``key_id`` and ``value(value, tool=NAME)`` (a
            ``core.harness.redact.Redactor``). Used only when its ``key_id`` is the one the
            redacted side's header names (``redaction.key_id``).
    """

    def __init__(self, original: Trace, replay: Trace, redactor: Any = None) -> None:
        self.traces = (original, replay)
        self.formats = (original.format or "unknown", replay.format or "unknown")
        self.differ = self.formats[0] != self.formats[1]
        marks = [t.header.get("redaction") if isinstance(t.header, Mapping) else None for t in self.traces]
        redacted = [isinstance(m, Mapping) for m in marks]
        self.raw_side: int | None = None
        self.key_id: str | None = None
        if redacted[0] != redacted[1]:
            self.raw_side = 0 if redacted[1] else 1
            self.key_id = str(marks[1 - self.raw_side].get("key_id") or "")  # type: ignore[union-attr]
        self.redactor = redactor if self.raw_side is not None and redactor is not None and \
            self.key_id and getattr(redactor, "key_id", None) == self.key_id else None
        self._held: dict[tuple[int, SpanKind], frozenset[str]] = {}
        self._params: dict[int, frozenset[str]] = {}
        self._counts: dict[tuple[str, str], int] = {}

    @property
    def active(self) -> bool:
        """Whether any rule can apply to this pair of traces (else ``adjust`` is the identity)."""
        return self.differ or self.raw_side is not None

    @property
    def redacted_with(self) -> str | None:
        """The key id the raw side was redacted with before comparing, or None."""
        return self.key_id if self.redactor is not None else None

    def unchecked(self) -> tuple[Unchecked, ...]:
        """What could not be compared, by path, most pairs first."""
        items = [Unchecked(path, reason, n) for (path, reason), n in self._counts.items()]
        items.sort(key=lambda u: (-u.pairs, u.path))
        return tuple(items)

    # -- what each side holds ------------------------------------------------------------------

    def _holds(self, side: int, kind: SpanKind) -> frozenset[str]:
        got = self._held.get((side, kind))
        if got is None:
            names: set[str] = set()
            for s in self.traces[side].spans:
                if s.kind is kind:
                    names.update(k for k, v in s.data.items() if v is not None)
            got = self._held[(side, kind)] = frozenset(names)
        return got

    def _param_keys(self, side: int) -> frozenset[str]:
        got = self._params.get(side)
        if got is None:
            keys: set[str] = set()
            for s in self.traces[side].spans:
                if s.kind is SpanKind.LLM:
                    p = s.data.get("params")
                    if isinstance(p, Mapping):
                        keys.update(p)
            got = self._params[side] = frozenset(keys)
        return got

    # -- one pair --------------------------------------------------------------------------------

    def adjust(self, a: Span, b: Span) -> tuple[Span, Span]:
        """``a`` (original) and ``b`` (replay) without what they cannot compare (copies; the spans
        given are left as read). Counts each field taken out once per pair."""
        kind = a.kind
        if not self.active:
            return a, b
        root_kinds: tuple[str, str] | None = None
        if b.kind is not kind:
            if not (self.differ and a.parent_id is None and b.parent_id is None and kind in _ROOT_KINDS
                    and b.kind in _ROOT_KINDS):
                return a, b
            root_kinds = (kind.value, b.kind.value)  # the run itself, as each format names its kind
            b = replace(b, kind=kind)
        data = [dict(a.data), dict(b.data)]
        seen: set[tuple[str, str]] = set()
        if self.differ:
            self._formats_differ(kind, data, seen)
        if self.raw_side is not None:
            self._redaction(a if self.raw_side == 0 else b, kind, data, seen)
        if root_kinds is not None:
            seen.add(("kind", f"{self.formats[0]} records the run as {root_kinds[0]}, {self.formats[1]} as "
                              f"{root_kinds[1]}"))
        for key in seen:
            self._counts[key] = self._counts.get(key, 0) + 1
        if not seen and self.redactor is None:
            return a, b  # (root_kinds set: seen is not empty)
        return replace(a, data=data[0]), replace(b, data=data[1])

    def _formats_differ(self, kind: SpanKind, data: list[dict[str, Any]], seen: set[tuple[str, str]]) -> None:
        for name in semantic_names(kind):
            has = [data[0].get(name) is not None, data[1].get(name) is not None]
            path = f"{kind.value}.{name}"
            if name == "params":
                if has[0] or has[1]:
                    self._params_of(data, seen)
            elif has[0] and has[1]:
                if name == "tool_schemas_hash" and data[0][name] != data[1][name]:
                    for d in data:
                        del d[name]
                    seen.add((path, "each format hashes its own record of the tools"))
                elif name in ("input", "output") and kind in _ROOT_KINDS:
                    self._shapes(kind, name, data, seen)
            elif has[0] != has[1]:
                missing = 0 if not has[0] else 1
                if name not in self._holds(missing, kind):
                    data[1 - missing].pop(name, None)
                    data[missing].pop(name, None)
                    seen.add((path, f"not recorded by {self.formats[missing]}"))

    def _params_of(self, data: list[dict[str, Any]], seen: set[tuple[str, str]]) -> None:
        """Each ``params`` key one side's LLM spans never name is left out of both."""
        ps = [d.get("params") for d in data]
        if not all(p is None or isinstance(p, Mapping) for p in ps):
            return
        kept: list[dict[str, Any] | None] = [dict(p) if p is not None else None for p in ps]  # type: ignore[call-overload]
        for side in (0, 1):
            p = kept[side]
            if not p:
                continue
            other = 1 - side
            for k in list(p):
                if (kept[other] is None or k not in kept[other]) and k not in self._param_keys(other):  # type: ignore[operator]
                    del p[k]
                    seen.add((f"llm.params.{k}", f"not recorded by {self.formats[other]}"))
        if not kept[0] and not kept[1]:
            data[0].pop("params", None)
            data[1].pop("params", None)
            return
        for side in (0, 1):
            if kept[side] is not None:
                data[side]["params"] = kept[side]

    def _shapes(self, kind: SpanKind, name: str, data: list[dict[str, Any]], seen: set[tuple[str, str]]) -> None:
        """A run's input or output held as a message list on one side and as the value on the other
        (``fit_shapes``): compared on the text they share."""
        role = "user" if name == "input" else "assistant"
        values = [framework_value(d[name]) for d in data]  # LangChain envelopes as messages (compared so anyway)
        fitted = fit_shapes(values[0], values[1], role)
        if fitted is None:
            return
        shapes = ["messages" if _messages_of(v) is not None else "text" if type(v) is str else "value" for v in values]
        data[0][name], data[1][name] = fitted
        seen.add((f"{kind.value}.{name}", f"{self.formats[0]} holds the {shapes[0]}, {self.formats[1]} the "
                                          f"{shapes[1]}: compared on the {role}'s text"))

    def _redaction(self, raw: Span, kind: SpanKind, data: list[dict[str, Any]], seen: set[tuple[str, str]]) -> None:
        side = self.raw_side
        assert side is not None
        names = semantic_names(kind)
        if self.redactor is not None:
            tool = (raw.data.get("tool_name") or raw.name) if kind is SpanKind.TOOL else None
            for name in names:
                if name in data[side]:
                    data[side][name] = self.redactor.value(data[side][name], tool=tool)
            return
        reason = (f"redacted in the {'replay' if side == 0 else 'original'} only (key {self.key_id}); "
                  "that key is not here to check the raw value")
        for name in names:
            if name in data[side] and name in data[1 - side]:
                hits: list[str] = []
                data[side][name] = _masked(data[side][name], data[1 - side][name], hits)
                if hits:
                    seen.add((f"{kind.value}.{name}", reason))


def _role_text(messages: list[Any], role: str) -> str | None:
    """The text of ``messages``' messages of ``role``, joined by newlines; None when ``messages`` is
    not a list of role/content messages or holds no text of that role."""
    texts: list[str] = []
    for m in messages:
        if not isinstance(m, Mapping) or "role" not in m:
            return None
        if m.get("role") != role:
            continue
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            parts = [p.get("text", p.get("content")) if isinstance(p, Mapping) else p for p in content]
            if not all(isinstance(p, str) for p in parts):
                return None
            texts.append("".join(parts))
        elif content is not None:
            return None
    if role == "assistant":  # an output: the last answer (earlier turns called tools)
        texts = [t for t in texts if t][-1:]
    return "\n".join(texts) if texts else None


def _messages_of(v: Any) -> list[Any] | None:
    """``v`` as a message list: a list of role messages, or a mapping holding only such a list under
    ``messages`` (a LangGraph state); else None."""
    if isinstance(v, Mapping) and len(v) == 1 and isinstance(v.get("messages"), list):
        v = v["messages"]
    if isinstance(v, list) and v and all(isinstance(m, Mapping) and "role" in m for m in v):
        return v
    return None


def _shape(v: Any) -> int:
    return 0 if _messages_of(v) is not None else 1 if type(v) is str else 2 if isinstance(v, Mapping) else 3


def fit_shapes(x: Any, y: Any, role: str) -> tuple[Any, Any] | None:
    """``x`` and ``y`` in one shape when they are of two shapes among a message list, a string and
    a mapping (a run's input or output as each format records it: the messages, the prompt string,
    the agent's own value), else None.

    A message list (or a mapping holding only one, under ``messages``: a LangGraph state) stands for
    the text of its ``role`` messages joined by newlines (``user`` for an input), or of its last
    ``assistant`` message with text (for an output: the earlier turns called tools); a string is that text as is; a mapping holding that very
    text as one of its top-level string values (``{"message": TEXT, "customer_id": ...}``) is that
    text (its other keys cannot be compared). Returns the two texts, or None when they cannot be
    had (a mapping not holding the other side's text, messages without text of that role...): the
    values are then compared as recorded (a divergence).
    """
    shapes = (_shape(x), _shape(y))
    if shapes[0] == shapes[1] or 3 in shapes:
        return None
    texts: list[str | None] = []
    for v, shape in zip((x, y), shapes):
        texts.append(_role_text(_messages_of(v) or [], role) if shape == 0 else v if shape == 1 else None)
    if texts[0] is None and texts[1] is None:
        return None
    for side in (0, 1):
        if texts[side] is None:  # a mapping: the other side's text, if it holds it (messages: none of the role's)
            text = texts[1 - side]
            if shapes[side] != 2 or not any(type(v) is str and v == text for v in (x, y)[side].values()):
                return None
            texts[side] = text
    return texts[0], texts[1]


def _masked(raw: Any, tokened: Any, hits: list[str]) -> Any:
    """``raw`` with each string that equals ``tokened``'s string at the same place, once each token
    there stands for any text, replaced by ``tokened``'s (a new structure; ``hits`` gets one entry
    per string replaced)."""
    if type(raw) is str:
        if type(tokened) is str and raw != tokened and _fits(raw, tokened):
            hits.append(raw)
            return tokened
        return raw
    if isinstance(raw, Mapping) and isinstance(tokened, Mapping):
        return {k: _masked(v, tokened[k], hits) if k in tokened else v for k, v in raw.items()}
    if isinstance(raw, list) and isinstance(tokened, list) and len(raw) == len(tokened):
        return [_masked(x, y, hits) for x, y in zip(raw, tokened)]
    return raw


def _fits(raw: str, tokened: str) -> bool:
    if "<" not in tokened or TOKEN_RE.search(raw):
        return False
    parts = TOKEN_RE.split(tokened)
    if len(parts) < 2:
        return False
    return re.fullmatch(".+?".join(map(re.escape, parts)), raw, re.DOTALL) is not None


def header_fit(changes: list[dict[str, Any]], original: Trace, replay: Trace) -> tuple[list[dict[str, Any]],
                                                                                      list[Unchecked]]:
    """``report.run_changes`` of two runs of different formats, less what the formats record
    differently: a header field one side's format does not write (``None`` there: ``model`` in a
    tracetui replay, ``clock`` in an OTel export) and ``tool_schema_hash`` (each format hashes its own
    record of the tools). Returns the changes left and what was not compared (``header.model``...).
    Two runs of one format: ``changes`` as given."""
    fmts = (original.format or "unknown", replay.format or "unknown")
    if fmts[0] == fmts[1]:
        return changes, []
    kept: list[dict[str, Any]] = []
    out: list[Unchecked] = []
    for c in changes:
        top = c["path"].split(".", 1)[0]
        if c["path"] == "input" and c["original"] is not None and c["replay"] is not None:
            fitted = fit_shapes(c["original"], c["replay"], "user")
            if fitted is not None and fitted[0] == fitted[1]:
                out.append(Unchecked("header.input", f"{fmts[0]} and {fmts[1]} hold it in two shapes: "
                                                     "compared on the user's text", 1))
                continue
            kept.append(c)
        elif c["original"] is None or c["replay"] is None:
            missing = 0 if c["original"] is None else 1
            out.append(Unchecked(f"header.{c['path']}", f"not recorded by {fmts[missing]}", 1))
        elif top == "tool_schema_hash":
            out.append(Unchecked("header.tool_schema_hash", "each format hashes its own record of the tools", 1))
        else:
            kept.append(c)
    return kept, out


_CALL_KINDS = frozenset({SpanKind.LLM, SpanKind.TOOL, SpanKind.RETRIEVAL, SpanKind.MEMORY, SpanKind.DECISION})


def flat_views(original: Trace, replay: Trace) -> tuple[Trace, Trace, Unchecked] | None:
    """Both runs as their root and their calls, when their two formats record the run's structure
    differently: one side holds framework steps (``agent`` / ``other`` spans below the root: an
    OpenInference trace's LangGraph nodes, chains, prompts) and the other none (a tracetui replay
    records the run, its model calls and its tool calls). Each view holds the side's one root, then
    its calls (LLM, tool, retrieval, memory, decision) in ``seq`` order as the root's children; the
    framework steps are left out, counted in the returned ``Unchecked``. None when the formats are
    the same, a side has no single root, or both (or neither) record framework steps."""
    if (original.format or "") == (replay.format or ""):
        return None
    steps = []
    for t in (original, replay):
        roots = [s for s in t.spans if s.parent_id is None]
        if len(roots) != 1:
            return None
        steps.append(sum(1 for s in t.spans if s.parent_id is not None and s.kind not in _CALL_KINDS))
    if (steps[0] > 0) == (steps[1] > 0):
        return None
    views = []
    for t in (original, replay):
        root = next(s for s in t.spans if s.parent_id is None)
        calls = sorted((s for s in t.spans if s.kind in _CALL_KINDS and s.parent_id is not None), key=lambda s: s.seq)
        spans = [root] + [replace(s, parent_id=root.span_id) for s in calls]
        views.append(replace(t, spans=spans))
    side = 0 if steps[0] else 1
    fmt = (original.format, replay.format)
    return views[0], views[1], Unchecked("spans", f"framework steps {fmt[side]} records and {fmt[1 - side]} does "
                                                  "not (agent/other spans below the root)", steps[side])
