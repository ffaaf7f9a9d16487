"""(b) keyed rows [``cassette-keyed``]: JSON Lines ``{"key", "tool", "args", "result"}`` (docs/readers/cassettes.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tracetui.core.model import ReadIssue, Span, Status
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.cassettes.common import (
    HEX,
    ROOT_NAME,
    Rec,
    at_path,
    ids_unique,
    load_doc,
    mostly_dicts_with,
    need_spans,
    records_of,
    root_span,
    run_header,
    sniff_head,
    warn_rows,
)
from tracetui.core.readers.cassettes.tools import KEYED_KEYS, tool_span
from tracetui.core.readers.cassettes.values import decode_args

__all__ = ["CassetteKeyedReader", "key_rule"]

# --- (b) keyed rows -------------------------------------------------------------------------

_KEY_RULES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("python-default", "json.dumps(..., sort_keys=True): separators (', ', ': '), ASCII escapes",
     {"sort_keys": True}),
    ("compact", "json.dumps(..., sort_keys=True, separators=(',', ':')): compact, ASCII escapes",
     {"sort_keys": True, "separators": (",", ":")}),
    ("python-default-utf8", "json.dumps(..., sort_keys=True, ensure_ascii=False): separators (', ', ': '), raw UTF-8",
     {"sort_keys": True, "ensure_ascii": False}),
    ("compact-utf8", "compact, raw UTF-8 (orjson OPT_SORT_KEYS, JS stable stringify)",
     {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}),
)
_KEY_RULE_TEXT = {name: text for name, text, _ in _KEY_RULES}


def _key_encoder(opts: dict[str, Any]) -> Any:
    """``json.dumps(obj, **opts)`` as one reusable C encoder: ``json.dumps`` with options
    builds a new encoder object on every call (half the cost on small rows).
    Falls back to ``JSONEncoder.encode`` without the C accelerator."""
    enc = json.JSONEncoder(**opts)
    c_make = getattr(json.encoder, "c_make_encoder", None)
    if c_make is None:
        return enc.encode
    basestring = json.encoder.encode_basestring_ascii if enc.ensure_ascii else json.encoder.encode_basestring
    c_enc = c_make(None, enc.default, basestring, None, enc.key_separator, enc.item_separator, enc.sort_keys,
                   enc.skipkeys, enc.allow_nan)
    return lambda obj: "".join(c_enc(obj, 0))


_KEY_ENCODERS = tuple((name, _key_encoder(opts)) for name, _, opts in _KEY_RULES)
"""One encoder a rule, made once (same text as ``json.dumps(obj, **opts)``)."""


def key_rule(key: Any, tool: Any, args: Any) -> str | None:
    """Which serialisation made a shape (b) key, or None when none does.

    The rule: ``key`` is a prefix (16 hex digits by convention; 8 to 64 accepted)
    of ``sha256(json.dumps({"t": tool, "a": args}, sort_keys=True).encode())``.
    Python writers use ``json.dumps``'s default separators ``(", ", ": ")``
    (most hand-written recorders found, e.g. ``hashlib.sha256(json.dumps({"t":
    tool, "a": args}, sort_keys=True).encode()).hexdigest()[:16]``); others pass
    ``separators=(",", ":")``, and JS / orjson writers are compact with raw
    UTF-8. Returns ``python-default``, ``compact``, ``python-default-utf8`` or
    ``compact-utf8`` (tried in that order; the UTF-8 ones only differ when the
    text is not ASCII).
    """
    return _key_rule(key, tool, args)[0]


def _key_rule(key: Any, tool: Any, args: Any) -> tuple[str | None, bool]:
    """``key_rule`` and whether the match tells the escaping: only text with non-ASCII
    characters is serialised differently with and without ``ensure_ascii``."""
    if not isinstance(key, str) or not HEX.fullmatch(key):
        return None, False
    want = key.lower()
    obj = {"t": tool, "a": args}
    non_ascii: bool | None = None
    for name, encode in _KEY_ENCODERS:
        try:
            text = encode(obj)
        except (TypeError, ValueError):
            return None, False
        if name.endswith("utf8"):
            if text.isascii():
                non_ascii = False
                continue  # same bytes as the ASCII rule already tried
            non_ascii = True
        if hashlib.sha256(text.encode("utf-8")).hexdigest().startswith(want):
            if non_ascii is None:
                non_ascii = "\\u" in text and not json.dumps(obj, sort_keys=True, ensure_ascii=False).isascii()
            return name, non_ascii
    return None, False


def _family(rule: str) -> str:
    return rule.removesuffix("-utf8")


class CassetteKeyedReader:
    """Shape (b): JSON Lines ``{"key", "tool", "args", "result"}``, optionally after a header line.

    - Header: a first line without ``key`` and ``tool``; fields mapped by
      ``run_header`` (``prompt_hash``, ``model`` {id, version}, ``tool_schema_hash``,
      ``started_at``/``start_ns``; other scalars kept).
    - Keys: each is checked against ``key_rule``; the rule(s) that matched go to
      the header's ``normalization``; a key matching no rule is kept with a
      warning (recorded under another normalisation); rules mixed in one file
      are reported.
    - Retries: the same key (same tool and canonical arguments) on two
      *adjacent* rows is a retry the writer logged twice: the last row wins
      (its result, status and line) and takes the first row's place in call
      order; the earlier row is dropped with an issue naming both lines. The
      same key on non-adjacent rows is a repeated read: both kept, in call
      order, because a replay serving reads in call order needs every
      recording (a read after a write gets the second one).
    - Spans: one ``tool`` span a kept row (id: the key, ``<key>-2`` for its
      second occurrence...), under a synthesized root; ``key`` and the matched
      ``key_rule`` in ``attributes``.
    """

    name = "cassette-keyed"

    def sniff(self, head: bytes) -> bool:
        """JSON Lines (or an array) whose first row after an optional header has ``key`` (hex),
        ``tool``, ``args`` and ``result``, every further head row having ``key`` and ``tool``."""
        shape, recs = sniff_head(head)
        if shape not in ("jsonl", "array", "object") or not recs or not isinstance(recs[0], dict):
            return False
        if "key" not in recs[0] and "tool" not in recs[0]:
            recs = recs[1:]
        if not recs or not isinstance(recs[0], dict):
            return False
        first = recs[0]
        return (all(k in first for k in ("key", "tool", "args", "result")) and isinstance(first["key"], str)
                and HEX.fullmatch(first["key"]) is not None and mostly_dicts_with(recs, "key", "tool"))

    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Read the rows of one run.

        Raises:
            ReadError: not JSON, or no row is a cassette row.
        """
        issues: list[ReadIssue] = IssueList()
        doc, rows = load_doc(path, data, issues)
        recs, _ = records_of(doc, rows)
        header: dict[str, Any] = {}
        if recs and isinstance(recs[0].value, dict) and "key" not in recs[0].value and "tool" not in recs[0].value:
            header = run_header(recs[0].value)
            recs = recs[1:]
        trace_id = str(header["run_id"]) if "run_id" in header else None
        run = trace_id or "(unnamed)"
        spans: list[Span] = []
        matched: list[tuple[str, bool]] = []  # per kept-or-dropped row: rule, whether it tells the escaping
        mismatched: list[tuple[int | None, str, str]] = []
        seen: dict[str, int] = {}
        prev: tuple[tuple[Any, ...], Rec] | None = None  # (key, tool, args_hash, has args) of the last row, the row
        double = 0
        for rec in recs:
            v = rec.value
            if not isinstance(v, dict) or not isinstance(v.get("tool"), str) or not v["tool"]:
                issues.append(ReadIssue(path, rec.line, rec.where, "not a cassette row {\"key\", \"tool\", \"args\", "
                                        "\"result\"} (no tool name); skipped"))
                continue
            tool, key = v["tool"], v.get("key")
            args, layers = decode_args(v.get("args"))
            double += layers >= 2
            rule, decisive = _key_rule(key, tool, v.get("args"))
            if rule is None and layers and isinstance(key, str):
                rule, decisive = _key_rule(key, tool, args)
            if not isinstance(key, str) or not key:
                mismatched.append((rec.line, at_path(rec.where, "key"), "row has no key; kept"))
                key = None
            elif rule is None:
                mismatched.append((rec.line, at_path(rec.where, "key"), (f"key {key!r} is not sha256 of "
                                   "{\"t\": tool, \"a\": args} under Python's default json.dumps separators nor "
                                   "compact ones; kept (recorded under another normalisation)")))
            else:
                matched.append((rule, decisive))
            if key is not None:
                n = seen.get(key, 0) + 1
                span_id = key if n == 1 else f"{key}-{n}"
            else:
                span_id = f"row-{rec.line}"
            span = tool_span(span_id, len(spans) + 1, tool, args, "args" in v, v.get("result"), "result" in v, v,
                              KEYED_KEYS, rec.line, trace_id)
            if key is not None:
                span.attributes = {"key": key, "key_rule": rule or "unknown", **span.attributes}
            ident = (key, tool, span.data.get("args_hash"), "args" in v)
            if key is not None and prev is not None and prev[0] == ident:
                # a retry logged twice: the last row wins, in the first row's place (the same place: adjacent)
                earlier, old = prev[1], spans[-1]
                issues.append(ReadIssue(
                    path, earlier.line, at_path(earlier.where, "key"),
                    f"key {key} written again on the next row (line {rec.line}): a retry; the last row wins and this "
                    "row is dropped" + ("" if old.status is Status.ERROR else " (it had not failed: if the call was "
                                        "deliberately repeated, the recording cannot tell)")))
                span.span_id, span.seq = old.span_id, old.seq
                spans[-1] = span
            else:
                if key is not None:
                    seen[key] = seen.get(key, 0) + 1
                spans.append(span)
            prev = (ident, rec) if key is not None else None
        # span ids: a repeated-read id may clash with a literal "<key>-2" key; finish_spans reports that
        need_spans(spans, issues, path, "cassette row")
        warn_rows(issues, path, mismatched, "rows whose key matches no known normalisation")
        self._report_rules(path, matched, spans, header, issues)
        if double:
            issues.append(ReadIssue(path, None, "args", f"run {run}: {double} row(s) record args as a double-encoded "
                                    "JSON string; decoded", "warning"))
        missing = sum(1 for s in spans if "output" not in s.data)
        if missing:
            issues.append(ReadIssue(path, None, "", f"run {run}: {missing} of {len(spans)} row(s) have no result "
                                    "recorded; their output stays absent", "warning"))
        root = root_span(spans, str(header.get("agent") or ROOT_NAME), trace_id)
        if root.start_ns is None and "start_ns" in header:
            root.start_ns = header["start_ns"]
        return ReaderOutput([RunSpans(trace_id, [root, *spans], header, in_order=ids_unique(spans))], issues)


    @staticmethod
    def _report_rules(path: str, matched: list[tuple[str, bool]], spans: list[Span], header: dict[str, Any],
                      issues: list[ReadIssue]) -> None:
        """Header ``normalization`` lines for the key rules found; a warning when they disagree.

        Rows whose text is ASCII only match the ASCII-escaping rule whatever the
        writer; when the rows that do tell (non-ASCII text) all say UTF-8, the
        ASCII-only rows of that separator family are counted as UTF-8 too.
        """
        if not matched:
            return
        decided: dict[str, set[str]] = {}
        for rule, decisive in matched:
            if decisive:
                decided.setdefault(_family(rule), set()).add(rule)
        relabel = {fam: next(iter(rules)) for fam, rules in decided.items() if len(rules) == 1 and
                   next(iter(rules)) != fam}  # only UTF-8 rules relabel the ASCII-only rows
        counts: dict[str, int] = {}
        for rule, _ in matched:
            final = relabel.get(_family(rule), rule)
            counts[final] = counts.get(final, 0) + 1
        for s in spans if relabel else ():
            rule = s.attributes.get("key_rule")
            if isinstance(rule, str) and rule != "unknown" and relabel.get(_family(rule), rule) != rule:
                s.attributes = {**s.attributes, "key_rule": relabel[_family(rule)]}  # type: ignore[dict-item]
        header["normalization"] = list(header.get("normalization") or []) + [
            f"cassette keys: 16-hex sha256 prefix of {{\"t\": tool, \"a\": args}} serialised by {_KEY_RULE_TEXT[r]} "
            f"({n} row(s))" for r, n in counts.items()]
        families = {_family(r) for r in counts}
        if len(families) > 1 or any(len(r) > 1 for r in decided.values()):
            issues.append(ReadIssue(path, None, "key", "keys written under several normalisations (" + ", ".join(
                f"{n} {r}" for r, n in counts.items()) + "): more than one writer?", "warning"))
