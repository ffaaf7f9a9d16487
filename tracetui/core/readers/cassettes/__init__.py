"""Readers for the cassette shapes teams write by hand (issue 3, shapes a-e): one module per shape.

Five generic shapes, one reader each (``--format`` name in brackets). They sniff
last and strictly: each requires its own key set on the first records, so a
tau-bench list, an OpenHands event list or an OTLP document is never claimed.
Full mapping tables and decisions: ``docs/readers/cassettes.md``.

(a) tool spans [``cassette-tools``]: ``{"tool", "args", "output"}`` items as a
    JSON array, JSON Lines, or a ``{"spans": [...]}`` / ``{"calls": [...]}`` wrapper.
(b) keyed rows [``cassette-keyed``]: JSON Lines ``{"key", "tool", "args", "result"}``,
    ``key`` = first 16 hex digits of ``sha256(json.dumps({"t": tool, "a": args},
    sort_keys=True))``, optionally after one header line (prompt hash, model id
    and version, tool-schema hash, timestamp).
(c) event stream [``cassette-events``]: ``{runId, sequence, kind, at, version, tool,
    payloadRef, digest}`` with ``kind`` in input, model, tool_call, tool_result,
    policy, outcome; payloads live outside the file.
(d) hashed cassette [``cassette-hashed``]: ``{"runId", "events": [{"seq", "kind":
    "model"|"tool", "name", "requestHash"|"argsHash", "response"}]}``.
(e) recorded run with blobs [``cassette-blobs``]: ``{runId, codeVersion,
    promptVersions, spans: [{spanId, parentSpanId, kind, name, inputRef, outputRef,
    attrs}]}``, payloads in a blob folder next to the file.

Shapes (a)-(d) have no root span: each run gets a synthesized ``agent`` root
named ``cassette`` (common conventions). Span ``seq`` is set here (file or
sequence order); times are integer ns since the epoch (ISO 8601 parsed exactly,
epoch numbers in s / ms / µs / ns by magnitude).

I/O exception (documented): readers are pure, except that (c) and (e) open
payload blobs next to the trace file, using ``path``. Refs are read only inside
the file's folder: an absolute ref or one with a ``..`` component (or a symlink
leading out) is refused with a warning.

Modules: ``tools`` (a), ``keyed`` (b), ``events`` (c), ``hashed`` (d), ``recorded`` (e); what they share
in ``common`` (root, times, loading, sniffing, header), ``values`` (arguments, errors, model calls) and
``blobs`` (payloads next to the file). A new shape: a module of its own, added to ``CASSETTE_READERS``.
"""

from __future__ import annotations

from tracetui.core.readers.cassettes.events import CassetteEventsReader
from tracetui.core.readers.cassettes.hashed import CassetteHashedReader
from tracetui.core.readers.cassettes.keyed import CassetteKeyedReader, key_rule
from tracetui.core.readers.cassettes.recorded import CassetteBlobsReader
from tracetui.core.readers.cassettes.tools import CassetteToolsReader
from tracetui.core.readers.cassettes.values import decode_args

__all__ = [
    "CASSETTE_READERS",
    "CassetteBlobsReader",
    "CassetteEventsReader",
    "CassetteHashedReader",
    "CassetteKeyedReader",
    "CassetteToolsReader",
    "decode_args",
    "key_rule",
]

CASSETTE_READERS = (CassetteToolsReader, CassetteKeyedReader, CassetteEventsReader, CassetteHashedReader,
                    CassetteBlobsReader)
"""The five readers, in the order the registry appends them (all sniff strictly, so order is not load-bearing)."""
