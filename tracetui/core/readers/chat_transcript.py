"""OpenAI chat-completions transcripts as spans: one ``llm`` span per assistant turn, one ``tool`` span per tool call.

Shared by the readers of formats that store a run as a chat message list
(tau-bench ``traj``; later vcrpy request bodies, ATIF steps). The input is the
OpenAI chat-completions message list (OpenAI API reference, "Chat Completions",
``messages``): ``{"role": "system" | "user" | "assistant" | "tool", "content",
"tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}],
"tool_call_id"}``. Any other message shape ``otel_messages.normalize_message``
accepts is accepted too, through it (slower).

Mapping (``docs/format.md``, "llm" and "tool"; ``docs/readers/tau-bench.md``):

- assistant message at index ``i`` -> ``llm`` span ``{id_prefix}msg-{i}``, data
  ``model`` / ``provider`` (when given), ``messages`` (every message before it,
  normalised), ``output`` (the message itself, normalised);
- its tool call ``j`` -> ``tool`` span ``{id_prefix}msg-{i}-call-{j}``, data
  ``tool_name``, ``call_id``, ``arguments`` (parsed JSON), ``args_hash``,
  ``output`` (the ``content`` of the first later ``tool`` message whose
  ``tool_call_id`` names the call). Parallel calls keep their order.

Tool-call ids are not unique in real transcripts (tau-bench reuses
``call_HGn16...`` in one run), so a ``tool`` message answers the oldest open
call with its id, and a new call with the same id closes the older ones
unanswered. Positional span ids never collide.

Pure, no I/O. Fast (the hot path of the 4 MB tau-bench file): messages of the
common shapes skip the general normaliser (same result, several times faster),
exact ``{"role", "content"}`` messages are shared rather than copied, and an
``args_hash`` skips the recursive canonicaliser when the raw arguments hold no
nested JSON string.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from tracetui.core.canonical import args_hash, parse_json_string
from tracetui.core.model import ReadIssue, Span, SpanKind, Status
from tracetui.core.readers.base import IssueList
from tracetui.core.readers.otel_messages import Message, normalize_message, tool_call

__all__ = ["ArgsCache", "Transcript", "first_text", "last_text", "normalize_chat_message", "tool_args_hash", "transcript_spans"]

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
"""Roles taken as they are; any other role goes through ``normalize_message`` (synonyms, case)."""
_SPECIAL_KEYS = frozenset({"parts", "contents", "function_call", "message"})
"""Keys of message shapes only ``normalize_message`` understands."""
_SORT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
_NESTED_JSON = re.compile(r'"\s*[\[{\\]')
"""In raw JSON text, a string whose value may start (after blanks) with ``{`` or ``[``
(or an escape that could encode either): the only case where ``canonicalize`` is not
the identity on parsed JSON. A closing quote is never followed by ``{``/``[`` in valid JSON."""


@dataclass(slots=True)
class Transcript:
    """What ``transcript_spans`` made of one message list.

    Attributes:
        spans: ``llm`` and ``tool`` spans in emission order (``seq`` set).
        issues: Messages skipped, tool calls never answered, answers to no call.
        messages: The whole transcript in tracetui's message shape (shared with the spans).
        next_seq: The ``seq`` after the last span.
    """

    spans: list[Span] = field(default_factory=list)
    issues: list[ReadIssue] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    next_seq: int = 0


def tool_args_hash(arguments: Any, raw: Any = None) -> str:
    """``canonical.args_hash(arguments)``, without the recursive walk when it cannot matter.

    Args:
        arguments: The parsed arguments.
        raw: The JSON text they were parsed from, when known.

    Returns:
        The same 16 hex digits as ``args_hash``: when ``raw`` holds no string
        value starting with ``{``/``[`` (``_NESTED_JSON``), canonicalising a
        parsed object or array changes nothing, so its sorted orjson bytes are
        hashed directly (about 4x cheaper a call).
    """
    if type(raw) is str and type(arguments) in (dict, list) and _NESTED_JSON.search(raw) is None:
        try:
            return hashlib.sha256(orjson.dumps(arguments, option=_SORT)).hexdigest()[:16]
        except TypeError:  # beyond orjson (an integer over 64 bits): canonical_json's own fallback
            pass
    return args_hash(arguments)


ArgsCache = dict[str, tuple[Any, str]]
"""Raw tool-call arguments text -> (parsed arguments, args_hash). The parsed value is
shared by every span with the same text (spans are immutable)."""


def _args(raw: Any, cache: ArgsCache | None) -> tuple[Any, str]:
    """Parsed arguments and their ``args_hash``, from the cache when the same text was seen."""
    if type(raw) is not str:
        return raw, args_hash(raw)
    if cache is not None:
        hit = cache.get(raw)
        if hit is not None:
            return hit
    args = parse_json_string(raw)
    hit = (args, tool_args_hash(args, raw))
    if cache is not None:
        cache[raw] = hit
    return hit


def _calls(tcs: list[Any], cache: ArgsCache | None, hashes: list[str | None] | None) -> list[dict[str, Any]]:
    """OpenAI tool calls ``{id, type, function: {name, arguments}}`` as ``{"id", "name", "arguments"}``.

    Same result as ``otel_messages.tool_call`` on each; other shapes go through it.
    When ``hashes`` is given, each kept call's ``args_hash`` is appended (None
    when not computed here).
    """
    calls: list[dict[str, Any]] = []
    for tc in tcs:
        fn = tc.get("function") if type(tc) is dict and "tool_call" not in tc else None
        if type(fn) is dict:
            name, raw = fn.get("name"), fn.get("arguments")
            if name is None and raw is None:
                continue
            cid = tc.get("id")
            if cid is None:
                cid = tc.get("call_id")
            if hashes is None:
                args = parse_json_string(raw)
            else:
                args, h = _args(raw, cache)
                hashes.append(h)
            calls.append({"id": None if cid is None else cid if type(cid) is str else str(cid),
                          "name": None if name is None else name if type(name) is str else str(name),
                          "arguments": args})
        else:
            c = tool_call(tc)
            if c is not None:
                calls.append(c)
                if hashes is not None:
                    hashes.append(None)
    return calls


_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
"""Every character ``str.isspace`` accepts (tests check the list against all code points)."""
_SUSPECT_FIRST = frozenset("[" + _WHITESPACE)
"""First characters of a content string that may hold a JSON list of tool calls (``_plain_text``)."""


def _plain_text(content: str) -> bool:
    """False when a non-empty content string may hold a JSON list of tool calls (Koog writes
    them so), which ``normalize_message`` turns into ``tool_calls``: it starts with ``[``
    after blanks and names a ``"function"`` key (or holds escapes that could spell one).
    A tool result that is a JSON list (tau-bench search results) is not parsed here."""
    return content[0] not in _SUSPECT_FIRST or ('"function"' not in content and "\\u" not in content)


def _convert(m: Any, cache: ArgsCache | None, hashes: list[str | None] | None) -> list[Message]:
    """``normalize_message(m)``, with a fast path for plain OpenAI chat messages.

    The fast path gives exactly what ``normalize_message`` gives for them (role,
    content string or None, ``tool_calls`` with ``function``, ``tool_call_id``).
    """
    if type(m) is dict:
        role = m.get("role")
        content = m.get("content")
        if (type(role) is str and role in _ROLES
                and (content is None or (type(content) is str and (content == "" or _plain_text(content))))
                and _SPECIAL_KEYS.isdisjoint(m)):
            role = _ROLES[role]
            msg: Message = {"role": role, "content": content}
            tcs = m.get("tool_calls")
            if tcs:
                if type(tcs) is not list:
                    return normalize_message(m)
                calls = _calls(tcs, cache, hashes)
                if calls:
                    msg["tool_calls"] = calls
            tcid = m.get("tool_call_id")
            if tcid is None and role == "tool":
                tcid = m.get("id")
            if tcid is not None:
                msg["tool_call_id"] = str(tcid)
            return [msg]
    return normalize_message(m)


def normalize_chat_message(m: Any) -> list[Message]:
    """One chat message in tracetui's shape (``{"role", "content", "tool_calls", "tool_call_id"}``).

    Equal to ``otel_messages.normalize_message(m)`` for every input, faster for
    plain OpenAI chat messages. Returns ``[]`` for a value that is not a message.
    """
    return _convert(m, None, None)


def first_text(messages: Sequence[Message], role: str) -> str | None:
    """Content of the first message of ``role`` with non-empty text, or None."""
    for m in messages:
        if m.get("role") == role and m.get("content"):
            return m["content"]  # type: ignore[no-any-return]
    return None


def last_text(messages: Sequence[Message], role: str) -> str | None:
    """Content of the last message of ``role`` with non-empty text, or None (a run's final answer)."""
    for m in reversed(messages):
        if m.get("role") == role and m.get("content"):
            return m["content"]  # type: ignore[no-any-return]
    return None


def _unanswering(path: str, line: int | None, where: str, cid: Any) -> ReadIssue:
    return ReadIssue(path, line, where, f"tool message answers no open tool call (tool_call_id {cid!r}); kept in the messages only", "warning")


def transcript_spans(
    messages: Sequence[Any],
    *,
    parent_id: str | None,
    path: str = "",
    where: str = "$",
    id_prefix: str = "",
    seq_start: int = 0,
    model: str | None = None,
    provider: str | None = None,
    line: int | None = None,
    trace_id: str | None = None,
    llm_extra: Mapping[int, Mapping[str, Any]] | None = None,
    args_cache: ArgsCache | None = None,
) -> Transcript:
    """Spans of one chat transcript, all children of ``parent_id``, in message order.

    Args:
        messages: The message list (OpenAI chat-completions shape, or any shape
            ``normalize_message`` accepts).
        parent_id: Parent of every span (the run's root), or None.
        path: The file, for issues.
        where: JSON path of the list in the file, for issues (``$[3].traj``).
        id_prefix: Prepended to every span id (``msg-{i}``, ``msg-{i}-call-{j}``,
            ``i`` the index in ``messages``).
        seq_start: ``seq`` of the first span.
        model, provider: Set on every ``llm`` span when known; the span is
            named ``chat {model}`` (else ``chat``), as GenAI semconv names it.
        line: ``Span.line`` of every span (the source line or record index).
        trace_id: ``Span.trace_id`` of every span.
        llm_extra: Extra ``llm`` data by message index (``usage``, ``finish_reason``,
            ``response_id``, a per-turn ``model``...), merged into that turn's span.
        args_cache: Shared by the calls for one file, so that arguments seen
            before (the same call in another trial) are parsed and hashed once.

    Returns:
        The spans, issues (``skipped``: an item that is not a message;
        ``warning``: a tool call no later ``tool`` message answers (the span
        has no ``output``), a ``tool`` message answering no open call), the
        normalised transcript and the next ``seq``. The spans' ``messages`` are
        copies of prefixes of ``Transcript.messages`` sharing its message dicts.
    """
    norm: list[Message] = []
    spans: list[Span] = []
    issues: list[ReadIssue] = IssueList()
    tools: list[tuple[int, int, dict[str, Any]]] = []
    pending: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    cache: ArgsCache = {} if args_cache is None else args_cache
    seq = seq_start
    base: dict[str, Any] = {}
    if model:
        base["model"] = model
    if provider:
        base["provider"] = provider
    llm_name = f"chat {model}" if model else "chat"
    LLM, TOOL, UNSET = SpanKind.LLM, SpanKind.TOOL, Status.UNSET
    suspect = _SUSPECT_FIRST
    for i, m in enumerate(messages):
        # The three shapes of the tau-bench corpus file take short paths. An exact
        # {"role", "content"} system/user/assistant message is already in
        # tracetui's shape and is shared, not copied. Anything else: _convert.
        hashes: list[str | None] | None = None
        out: Sequence[Message] | None = None
        if type(m) is dict:
            role = m.get("role")
            content = m.get("content")
            if (content is None or (type(content) is str and (content == "" or content[0] not in suspect or _plain_text(content)))) \
                    and (content is not None or "content" in m):
                n = len(m)
                if n == 2:
                    if role == "user" or role == "system":
                        norm.append(m)
                        continue
                    if role == "assistant" and not llm_extra:
                        sid = f"{id_prefix}msg-{i}"
                        spans.append(Span(sid, parent_id, seq, LLM, llm_name, None, None, UNSET, None,
                                          {**base, "messages": norm[:], "output": m}, {}, trace_id, line))
                        seq += 1
                        norm.append(m)
                        continue
                elif role == "tool":
                    tcid = m.get("tool_call_id")
                    if tcid is not None and (n == 3 or (n == 4 and "name" in m)):
                        if type(tcid) is not str:
                            tcid = str(tcid)
                        open_calls = pending.get(tcid)
                        if open_calls:
                            open_calls.pop(0)[1]["output"] = content
                            if not open_calls:
                                del pending[tcid]
                        else:
                            issues.append(_unanswering(path, line, f"{where}[{i}]", tcid))
                        norm.append({"role": "tool", "content": content, "tool_call_id": tcid})
                        continue
                elif role == "assistant" and n == 3:
                    tcs = m.get("tool_calls")
                    if type(tcs) is list:
                        hashes = []
                        msg: Message = {"role": "assistant", "content": content}
                        calls = _calls(tcs, cache, hashes)
                        if calls:
                            msg["tool_calls"] = calls
                        out = (msg,)
        if out is None:
            hashes = []
            out = _convert(m, cache, hashes)
            if not out:
                issues.append(ReadIssue(path, line, f"{where}[{i}]", f"not a chat message ({type(m).__name__}); skipped"))
                continue
        for msg in out:
            role = msg["role"]
            if role == "assistant":
                data: dict[str, Any] = {**base, "messages": norm[:], "output": msg}
                name = llm_name
                if llm_extra is not None:
                    extra = llm_extra.get(i)
                    if extra:
                        data.update(extra)
                        if extra.get("model"):
                            name = f"chat {extra['model']}"
                sid = f"{id_prefix}msg-{i}"
                spans.append(Span(sid, parent_id, seq, LLM, name, None, None, UNSET, None, data, {}, trace_id, line))
                seq += 1
                calls = msg.get("tool_calls")
                if calls:
                    for j, c in enumerate(calls):
                        args = c["arguments"]
                        cid = c["id"]
                        tname = c["name"]
                        h = hashes[j] if hashes is not None and j < len(hashes) else None
                        td = {"tool_name": tname, "call_id": cid, "arguments": args,
                              "args_hash": h if h is not None else args_hash(args)}
                        spans.append(Span(f"{sid}-call-{j}", parent_id, seq, TOOL,
                                          f"execute_tool {tname}" if tname else "execute_tool",
                                          None, None, UNSET, None, td, {}, trace_id, line))
                        seq += 1
                        tools.append((i, j, td))
                        open_calls = pending.get(cid)
                        if open_calls is None:
                            pending[cid] = [(i, td)]
                        else:
                            if open_calls[0][0] != i:  # an id reused by a later turn: older calls stay unanswered
                                open_calls[:] = [t for t in open_calls if t[0] == i]
                            open_calls.append((i, td))
            elif role == "tool":
                cid = msg.get("tool_call_id")
                open_calls = pending.get(cid)
                if open_calls:
                    open_calls.pop(0)[1]["output"] = msg["content"]
                    if not open_calls:
                        del pending[cid]
                else:
                    issues.append(_unanswering(path, line, f"{where}[{i}]", cid))
            norm.append(msg)
    for i, j, td in tools:
        if "output" not in td:
            issues.append(ReadIssue(path, line, f"{where}[{i}].tool_calls[{j}]",
                                    f"tool call {td['call_id']!r} ({td['tool_name']}) is never answered by a tool message; "
                                    "its tool span has no output", "warning"))
    return Transcript(spans, issues, norm, seq)
