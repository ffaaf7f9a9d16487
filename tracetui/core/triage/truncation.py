"""Does a value look cut? The evidence ``truncated_output`` rests on (docs/triage.md).

``truncation(value)`` says why a JSON-like value looks truncated, or None: a recorder's flag, JSON
cut mid-value, a string of an exporter's cap (``TRUNCATION_CAPS``) that does not end as complete
text, an appended ellipsis, a truncation marker. ``scan`` and ``describe`` are the same in two
steps, for ``triage.replayability``, which picks the rules per field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["TRUNCATION_CAPS", "describe", "scan", "truncation", "uncut_prefix"]

TRUNCATION_CAPS: dict[int, str] = {
    256: "Google Cloud Trace v2 span attribute values (a string up to 256 bytes, TruncatableString)",
    1000: "MLflow trace request/response previews (TRACE_REQUEST_RESPONSE_PREVIEW_MAX_LENGTH_OSS = 1000, "
          "cut with '...')",
    1024: "Sentry Python SDK max_value_length default before 2.34 (value[:1021] + '...'); Elastic APM agents' "
          "keyword fields",
    2048: "Application Insights request URL max length; practice.md's stored 2 KB preview",
    4095: "New Relic attribute value max length (4,095 characters, OTLP data included)",
    4096: "New Relic's limit as opentelemetry-dotnet#3297 states it; Application Insights JS "
          "attributeValueLengthLimit example",
    8192: "Application Insights custom property max value length (where OTel attributes land)",
    10000: "Elastic APM long_field_max_length default; MLflow Databricks previews "
           "(TRACE_REQUEST_RESPONSE_PREVIEW_MAX_LENGTH_DBX)",
}
"""Known exporter caps, in characters, and where each comes from.

A string of exactly one of these lengths that does not end as complete text (mid-word, with an
ellipsis, or JSON that does not parse) was most likely cut by that exporter; so was a string of
the cap plus ``"..."`` or ``"…"`` appended. OpenTelemetry itself sets no default
(``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` is unlimited unless configured); an SDK configured with
a limit cuts silently (OTel spec, common/#attribute-limits), which is why lengths are the evidence.
"""

_ENDERS = frozenset('.!?)]}"\'>`*\n|»”’。')
"""Last characters of text that looks complete; a cut at a cap lands elsewhere almost always."""

_MARKER = re.compile(
    r"""(?:\.\.\.|…)\s*[\[(<]?\s*truncated\b(?:[^\])>\n]{0,40}[\])>])?  # ...[truncated]  … (truncated string)
      | [\[(<]\s*(?:\.\.\.|…)?\s*(?:[\w,]+\s+){0,3}(?<!not\ )truncated\b[^\])>\n]{0,80}[\])>]
                                                             # [TRUNCATED]  <truncated 512 chars>  [... 300 chars truncated ...]
    """, re.I | re.X)
"""Truncation markers recorders and exporters write: OpenAI Agents SDK ``... [truncated]``, Langfuse
plugins ``…[truncated N chars]``, LangWatch ``... (truncated string)``, ``[TRUNCATED - ...]``,
``<truncated N chars>``, ``[... N chars truncated ...]`` (a middle cut, marked in the middle)."""



def truncation(value: Any) -> str | None:
    """Why ``value`` looks truncated, or None.

    Rules, on ``value`` and every string, list and object nested in it:

    - an object flagged by its recorder: ``output_truncated: true``; ``truncated: true`` with
      ``preview`` or ``original_type`` (the OpenAI Agents SDK's replacement of an oversized
      payload); ``truncatedByteCount`` / ``truncated_byte_count`` > 0 (Cloud Trace
      TruncatableString); ``is_truncated: true`` (OCSF long_string);
    - a string starting with ``{`` or ``[`` that fails to parse because the input ends (orjson:
      "unexpected end of data"), whatever its length: JSON cut mid-value. A string that
      parses, or fails elsewhere (a Python repr, a template), is not cut;
    - ``value`` itself a string whose length is exactly a cap of ``TRUNCATION_CAPS`` and that
      does not end as complete text (mid-word, mid-sentence, or with an ellipsis): exporters
      cut whole attribute values. Complete JSON of that length is not cut;
    - any string of a cap's length ending with ``...`` / ``…``, or of a cap plus an appended
      ``...`` / ``…`` (per-value truncators: Sentry's ``strip_string``, MLflow previews). A
      nested string of a cap's length without an ellipsis is not evidence: it is as likely whole;
    - a truncation marker (``_MARKER``: ``...[truncated]``, ``…(truncated)``, ``[TRUNCATED]``,
      ``<truncated N chars>``).

    Lengths are checked before content, so large values cost little.

    Args:
        value: Any JSON-like value (str, int, float, bool, None, list, dict).

    Returns:
        A short reason naming where in the value (``at .body``) and the evidence, or None.
    """
    hit = scan(value, markers=True, caps=True, json_any=True)
    return None if hit is None else describe(value, hit)


def scan(value: Any, *, markers: bool, caps: bool, json_any: bool,
         skip: set[str] | frozenset[str] = frozenset()) -> tuple[Any, str] | None:
    """The first (leaf, why) that looks cut in ``value``, walking lists and dicts without recursion.

    Strings in ``skip`` are passed over (a tool's own cut output the model read as it was).

    The exact-cap rule applies to ``value`` itself when it is a string (an attribute an exporter
    cut); a nested string must also carry the ellipsis a per-value truncator appends. Every
    string is first checked by length, first character and a substring search in C; only the
    few that pass are examined.
    """
    if type(value) is str:
        why = _string_why(value, markers=markers, caps=caps, json_any=json_any, top=True)
        return None if why is None else (value, why)
    # Strings are tested where they are met (no push), only containers go on the stack: the
    # walk costs a few type checks per item.
    stack = [value]
    pop, push = stack.pop, stack.append
    flags, lengths, whole = _FLAG_KEYS, _ELLIPSIS_LENGTHS if caps else (), _MARKER_WHOLE
    while stack:
        v = pop()
        t = type(v)
        if t is dict:
            if not flags.isdisjoint(v):
                why = _flag_why(v)
                if why is not None:
                    return v, why
            items = v.values()
        elif t is list or t is tuple:
            items = v
        elif isinstance(v, Mapping):
            items = dict(v).values()
        else:
            continue
        for x in items:
            tx = type(x)
            if tx is str:
                if skip and x in skip:
                    continue
                if ((json_any and x[:1] in _OPENERS) or len(x) in lengths or (markers and (
                        ("runcat" in x or "RUNCAT" in x) if len(x) <= whole else _marker_word(x)))):
                    why = _string_why(x, markers=markers, caps=caps, json_any=json_any, top=False)
                    if why is not None:
                        return x, why
            elif tx is dict or tx is list:
                push(x)
            elif tx is int or tx is float or tx is bool or x is None:
                pass
            elif isinstance(x, str):
                why = _string_why(str(x), markers=markers, caps=caps, json_any=json_any, top=False)
                if why is not None:
                    return x, why
            elif isinstance(x, (Mapping, tuple)):
                push(x)
    return None


_FLAG_KEYS = frozenset({"output_truncated", "truncated", "truncatedByteCount", "truncated_byte_count", "is_truncated"})
_ELLIPSIS_LENGTHS = frozenset(c + k for c in TRUNCATION_CAPS for k in (0, 1, 3))
"""Lengths a nested string cut by a per-value truncator has: a cap, or a cap plus ``…`` or ``...``."""


def _flag_why(d: dict[Any, Any]) -> str | None:
    """Why an object says it was cut, or None."""
    if d.get("output_truncated") is True:
        return "output_truncated is true: the recorder could not store it whole"
    if d.get("truncated") is True and ("preview" in d or "original_type" in d):
        return "replaced by a truncation stub (truncated: true, with a preview), as the OpenAI Agents SDK does"
    for k in ("truncatedByteCount", "truncated_byte_count"):
        c = d.get(k)
        if type(c) is int and c > 0:
            return f"{k} is {c:,}: {c:,} bytes were cut"
    if d.get("is_truncated") is True:
        return "is_truncated is true"
    return None


_OK, _CUT, _NOT_JSON = 0, 1, 2
_OPENERS = ("{", "[", " ", "\n", "\t", "\r")


def _json_state(s: str) -> int:
    """``_OK`` when ``s`` parses; ``_CUT`` when the parser reached the end of input (JSON cut
    mid-value); ``_NOT_JSON`` when it fails elsewhere (a Python repr, a template, prose)."""
    try:
        orjson.loads(s)
    except orjson.JSONDecodeError as e:
        return _CUT if ("end of data" in e.msg or e.pos >= len(s.rstrip())) and len(s) > 1 else _NOT_JSON
    return _OK


def _string_why(s: str, *, markers: bool, caps: bool, json_any: bool, top: bool) -> str | None:
    """Why the string ``s`` looks cut, or None (rules: ``truncation``; ``top``: ``s`` is the whole value)."""
    n = len(s)
    body = s.lstrip() if s[:1].isspace() else s
    cap = 0
    if caps:
        if n in TRUNCATION_CAPS:
            cap = n
        elif n - 3 in TRUNCATION_CAPS and s.endswith("..."):
            cap = n - 3
        elif n - 1 in TRUNCATION_CAPS and s.endswith("…"):
            cap = n - 1
    state = _NOT_JSON
    if body[:1] in ("{", "[") and (json_any or (cap and top)):
        state = _json_state(body)
        if state == _CUT:
            if cap:
                return f"{n:,} characters, a known exporter cap ({_cap_name(cap)}), and JSON cut mid-value"
            return f"JSON cut mid-value ({n:,} characters; the parser reached the end of input)"
    if cap and state != _OK:  # complete JSON of a cap's length is not cut
        name = _cap_name(cap)
        if cap != n:
            return f"{n:,} characters: a known exporter cap ({name}) plus an appended {s[cap:]!r}"
        if s.endswith(("...", "…")):
            return f"{n:,} characters, a known exporter cap ({name}), ending with an ellipsis"
        # Without an ellipsis only the whole value counts: exporters cut whole attribute values,
        # and a nested string of a cap's length is as likely to be whole.
        last = s[-1]
        if top and last.isalnum():
            return f"{n:,} characters, a known exporter cap ({name}), ending mid-word ({s[-12:]!r})"
        if top and last not in _ENDERS:
            return f"{n:,} characters, a known exporter cap ({name}), ending mid-sentence ({s[-12:]!r})"
    if markers and _marker_word(s):
        m = _MARKER.search(s if n <= _MARKER_WHOLE else s[:_MARKER_HEAD] + "\n" + s[-_MARKER_TAIL:])
        if m is not None:
            return f"carries the truncation marker {m.group(0)!r}"
    return None


_MARKER_WHOLE, _MARKER_HEAD, _MARKER_TAIL = 4096, 512, 1024
"""Markers are looked for in a whole string up to 4 KiB, else in its first 512 and last 1,024
characters: suffix markers are the rule, and searching every long output costs more than the
rest of the assessment (0.7 s of 340 MB of tool outputs in the 100k-span benchmark)."""


def _marker_word(s: str) -> bool:
    """Whether ``s`` (its head and tail when long) contains ``truncat`` in lower or upper case."""
    if len(s) > _MARKER_WHOLE:
        h, t = s[:_MARKER_HEAD], s[-_MARKER_TAIL:]
        return "runcat" in h or "RUNCAT" in h or "runcat" in t or "RUNCAT" in t
    return "runcat" in s or "RUNCAT" in s


def _cap_name(cap: int) -> str:
    """The first source named for ``cap``, short."""
    return TRUNCATION_CAPS[cap].split(" (", 1)[0].split(";", 1)[0]


def describe(value: Any, hit: tuple[Any, str]) -> str:
    leaf, why = hit
    path = _path_to(value, leaf)
    return f"at {path}: {why}" if path else why


def _path_to(value: Any, leaf: Any, prefix: str = "", depth: int = 0) -> str:
    """The JSON path (``.items[2].text``) of ``leaf`` (by identity) in ``value``; '' at the top or when not found
    (the walk looks 65 levels deep at most: a deeper branch is not the leaf's, whatever it holds)."""
    if value is leaf:
        return prefix
    if depth > 64:
        return ""
    if isinstance(value, Mapping):
        for k, v in value.items():
            p = _path_to(v, leaf, f"{prefix}.{k}", depth + 1)
            if p or v is leaf:
                return p
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            p = _path_to(v, leaf, f"{prefix}[{i}]", depth + 1)
            if p or v is leaf:
                return p
    return ""


def uncut_prefix(s: str) -> str:
    """``s`` without what a truncator appended (an ellipsis, a marker and what follows it)."""
    m = _MARKER.search(s)
    if m is not None:
        return s[:m.start()]
    return s.removesuffix("...").removesuffix("…")
