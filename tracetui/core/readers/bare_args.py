"""A one-argument tool's bare-string arguments named, where the trace says the parameter's name.

Some producers record a tool call whose only argument is a string as that string alone
(OpenInference's ``input.value`` of a LangChain tool, ``"Paris"``), where the model asked for
``{"city": "Paris"}`` and another recording of the same run holds the object. Read as is, the
two never match (an ``args_mismatch``, a cassette miss). ``name_bare_arguments`` gives the string
its parameter's name when the trace says it:

- the tool's JSON schema on its span (OpenInference ``tool.parameters``) has one property;
- or the model's tool call for it (same ``call_id``, else a call of the same tool whose one
  argument is that very string) names one argument.

Nothing else is guessed: a string no schema or call names is kept as read. A named span keeps
the string in ``attributes["tracetui.bare_arguments"]`` (with where the name came from). Run on
every reader's spans but tracetui/1's, which records arguments exactly as the agent passed them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from tracetui.core.model import Span, SpanKind
from tracetui.core.readers.lazyspan import LazySpan

__all__ = ["BARE_ARGUMENTS", "name_bare_arguments"]

BARE_ARGUMENTS = "tracetui.bare_arguments"
"""Span attribute: ``{"value": the string as read, "named_by": "schema" or "the model's tool call"}``."""

_TOOL = SpanKind.TOOL


def name_bare_arguments(spans: list[Span]) -> int:
    """Name each bare-string tool argument the trace names (module docstring), in place on spans
    fresh from a reader (a new ``data`` dict each). Returns how many were named."""
    bare = [s for s in spans if s.kind is _TOOL and type(_arguments(s)) is str]
    if not bare:
        return 0
    by_id: dict[str, tuple[str, Any]] = {}
    by_name: dict[str, list[Any]] = {}
    for s in spans:
        if s.kind is SpanKind.LLM:
            for call in _calls(s):
                name, args = str(call.get("name") or ""), call.get("arguments")
                if call.get("id"):
                    by_id[str(call["id"])] = (name, args)
                by_name.setdefault(name, []).append(args)
    named = 0
    for s in bare:
        text = s.data["arguments"]
        if _json_object(text):
            continue
        tool = str(s.data.get("tool_name") or s.name)
        key, how = _from_schema(s), "schema"
        if key is None:
            key, how = _from_calls(tool, text, s.data.get("call_id"), by_id, by_name), "the model's tool call"
        if key is None:
            continue
        s.data = {**s.data, "arguments": {key: text}}
        s.attributes = {**s.attributes, BARE_ARGUMENTS: {"value": text, "named_by": how}}
        named += 1
    return named


def _arguments(s: Span) -> Any:
    """A tool span's ``arguments``, from what the OTLP reader's cheap pass read when it did (``LazySpan._part``,
    equal to the data's): the payload stays unread."""
    part = s._part if type(s) is LazySpan else None  # type: ignore[attr-defined]
    return (s.data if part is None else part).get("arguments")


def _calls(llm: Span) -> list[Mapping[str, Any]]:
    """The tool calls an LLM span's output (and its input's assistant turns) hold."""
    out: list[Mapping[str, Any]] = []
    msgs = [llm.data.get("output")]
    if isinstance(llm.data.get("messages"), list):
        msgs += [m for m in llm.data["messages"] if isinstance(m, Mapping) and m.get("role") == "assistant"]
    for m in msgs:
        if isinstance(m, Mapping):
            out += [c for c in m.get("tool_calls") or () if isinstance(c, Mapping)]
    return out


def _json_object(text: str) -> bool:
    if not text.lstrip().startswith("{"):
        return False
    try:
        return isinstance(orjson.loads(text), dict)
    except orjson.JSONDecodeError:
        return False


def _one_key(args: Any) -> str | None:
    if isinstance(args, str) and _json_object(args):
        args = orjson.loads(args)
    return next(iter(args)) if isinstance(args, Mapping) and len(args) == 1 else None


def _from_schema(span: Span) -> str | None:
    schema = span.attributes.get("tool.parameters")
    if isinstance(schema, str):
        try:
            schema = orjson.loads(schema)
        except orjson.JSONDecodeError:
            return None
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return next(iter(props)) if isinstance(props, Mapping) and len(props) == 1 else None


def _from_calls(tool: str, text: str, call_id: Any, by_id: Mapping[str, tuple[str, Any]],
                by_name: Mapping[str, list[Any]]) -> str | None:
    if call_id and str(call_id) in by_id:
        name, args = by_id[str(call_id)]
        key = _one_key(args)
        if name == tool and key is not None:
            return key
    for args in by_name.get(tool, ()):
        key = _one_key(args)
        if key is not None:
            value = (orjson.loads(args) if isinstance(args, str) else args)[key]
            if value == text:
                return key
    return None
