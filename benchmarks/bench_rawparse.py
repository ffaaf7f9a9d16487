"""Benchmark: would msgspec ``Raw`` (payloads left undecoded) make the index loader faster?

Not used by tracetui. Times, per span line of a tracetui/1 file (CPU microseconds,
GC off, the best of ``--repeat`` passes over the lines held in memory):

- the index loader as it is (``native_index._parse_records``: orjson parse, the
  exactness check, span key, payload signature, content flag, record), reading the file;
- its two orjson steps alone: ``loads``, and the ``dumps`` of the exactness check;
- the msgspec route, step by step: a typed ``_Line`` with every kind section ``Raw``
  (one skip of the payload bytes); the kind's section decoded into a ``Struct`` whose
  signature fields stay ``Raw`` (a second skip; the span key's fields are small);
  a strong hash of those raw bytes (SHA-256; BLAKE2b-128; xxh3-128 when ``xxhash``
  is installed, for reference: not a cryptographic hash);
- ``route``: that route complete for one line (``raw_record``): the proof that the bytes
  outside the section are orjson's own (decoded common fields serialised again and
  compared), UTF-8, span key, signature (SHA-256), content flag: what a loader built on
  it would pay per line, before its loop and records.

Usage::

    python benchmarks/bench_rawparse.py                       # the 100k original of bench_tui
    python benchmarks/bench_rawparse.py FILE --repeat 3

Result on the 2-core development machine (docs/performance.md): the route costs about as
much as the loader it would replace; msgspec skips payload bytes at about the speed orjson
parses them, and the signature then needs the same bytes hashed.
"""

from __future__ import annotations

import os

import argparse
import gc
import hashlib
import struct
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

try:
    import msgspec
except ImportError:  # pragma: no cover - the benchmark only
    sys.exit("msgspec is not installed (not a tracetui dependency): pip install msgspec")

from tracetui.core.diff.align import span_key  # noqa: E402
from tracetui.core.diff.compare import KEY_FIELDS  # noqa: E402
from tracetui.core.diff.compare import SIG_NAMES  # noqa: E402
from tracetui.core.readers.lazyspan import PayloadFile  # noqa: E402
from tracetui.core.model import SpanKind, Status  # noqa: E402
from tracetui.core.load import native_index  # noqa: E402

Raw = msgspec.Raw
_ABSENT = Raw(b"")


class _Line(msgspec.Struct, forbid_unknown_fields=True):
    span_id: str
    parent_id: Optional[str]
    seq: int
    kind: str
    name: str
    start_ns: Optional[int]
    end_ns: Optional[int]
    status: str
    error_type: Optional[str]
    trace_id: Optional[str] = None
    attributes: Optional[dict[str, Any]] = None
    llm: Raw = _ABSENT
    tool: Raw = _ABSENT
    retrieval: Raw = _ABSENT
    decision: Raw = _ABSENT
    memory: Raw = _ABSENT
    agent: Raw = _ABSENT
    other: Raw = _ABSENT


def _section(kind: SpanKind) -> type:
    names = sorted(KEY_FIELDS.get(kind, ())) + [n for n in SIG_NAMES[kind] if n not in KEY_FIELDS.get(kind, ())]
    return msgspec.defstruct(f"_Sec_{kind.value}", [(n, Raw, _ABSENT) for n in names])


class _Msg(msgspec.Struct):
    content: Raw = _ABSENT


_KINDS = {k.value: k for k in SpanKind}
_STATUSES = {s.value: s for s in Status}
DEC_LINE = msgspec.json.Decoder(_Line).decode
DEC_SEC = {k: msgspec.json.Decoder(_section(k)).decode for k in SpanKind}
_DEC_MSGS = msgspec.json.Decoder(list[_Msg]).decode
_KEYS = {k: tuple(sorted(KEY_FIELDS.get(k, ()))) for k in SpanKind}
_OPEN = {k: b',"' + k.value.encode() + b'":' for k in SpanKind}
_LENS = {k: struct.Struct(f"<{len(SIG_NAMES[k])}I").pack for k in SpanKind}
_NULL = b"null"


class _KeyView:
    __slots__ = ("kind", "name", "data")

    def __init__(self, kind: SpanKind, name: str, data: dict[str, Any]) -> None:
        self.kind, self.name, self.data = kind, name, data


def sig_of(kind: SpanKind, sec: Any, hasher: Callable[[], Any] = hashlib.sha256) -> bytes:
    """A strong hash of the signature fields' raw bytes, then their lengths (0: absent)."""
    raws = [getattr(sec, n) for n in SIG_NAMES[kind]]
    h = hasher()
    for r in raws:
        h.update(r)
    h.update(_LENS[kind](*map(len, raws)))
    return h.digest()[:16]  # type: ignore[no-any-return]


def _none(r: Any) -> bool:
    return not len(r) or (len(r) == 4 and bytes(r) == _NULL)


def _lacks(kind: SpanKind, sec: Any) -> bool:
    if kind is SpanKind.TOOL:
        return _none(sec.arguments) and _none(sec.output)
    if kind is not SpanKind.LLM:
        return False
    m = sec.messages
    if len(m) > 2 and memoryview(m)[:2] == b"[{":
        first = _DEC_MSGS(m)[0].content
        if len(first) > 2 and memoryview(first)[0] == 34:
            return False
    d = {}
    if len(m):
        d["messages"] = orjson.loads(memoryview(m))
    if len(sec.output):
        d["output"] = orjson.loads(memoryview(sec.output))
    return native_index._lacks_content(kind, d)


def raw_record(line: bytes) -> tuple[Any, ...] | None:
    """The route for one line: its record fields, or None (the line would take the careful path).

    Sound for the comparison (equal raw bytes are equal values); NOT equivalent to the loader for
    issues: damage inside the kind section (duplicate keys, integers beyond 64 bits) goes unseen.
    """
    ln = DEC_LINE(line)
    kind = _KINDS.get(ln.kind)
    status = _STATUSES.get(ln.status)
    if kind is None or status is None or not ln.span_id:
        return None
    sec = getattr(ln, ln.kind)
    common = {"span_id": ln.span_id, "parent_id": ln.parent_id, "seq": ln.seq, "kind": ln.kind, "name": ln.name,
              "start_ns": ln.start_ns, "end_ns": ln.end_ns, "status": ln.status, "error_type": ln.error_type}
    if ln.trace_id is not None:
        common["trace_id"] = ln.trace_id
    prefix = orjson.dumps(common)[:-1] + _OPEN[kind]
    attrs = ln.attributes
    suffix = b"}" if attrs is None else b',"attributes":' + orjson.dumps(attrs) + b"}"
    p0 = len(prefix)
    # Prefix, suffix and the section's length fill the line exactly: the section is one value, no other key.
    if (p0 + len(sec) + len(suffix) != len(line) or not line.startswith(prefix) or not line.endswith(suffix)
            or line[p0] != 123):
        return None
    if not line.isascii():
        line.decode()
    s = DEC_SEC[kind](sec)
    data = {}
    for n in _KEYS[kind]:
        r = getattr(s, n)
        if len(r):
            rb = bytes(r)
            v = orjson.loads(rb)
            if orjson.dumps(v) != rb:
                return None
            data[n] = v
    key = span_key(_KeyView(kind, ln.name, data))  # type: ignore[arg-type]
    return (ln.span_id, ln.parent_id or None, ln.seq, kind, ln.name, ln.start_ns, ln.end_ns, status,
            ln.error_type, attrs or {}, ln.trace_id, key, sig_of(kind, s), _lacks(kind, s))


def _lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [ln for ln in data.split(b"\n")[1:] if ln]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "benchmarks" / "_data" / "original_n100000_s1.jsonl")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    lines = _lines(args.file)
    n = len(lines)
    gc.disable()

    def best(fn: Callable[[], Any]) -> float:
        out = []
        for _ in range(args.repeat):
            t = time.process_time()
            fn()
            out.append(time.process_time() - t)
        return min(out) / n * 1e6

    src = PayloadFile(str(args.file))
    objs = [orjson.loads(x) for x in lines]
    decoded = [DEC_LINE(x) for x in lines]
    secs = [(_KINDS[d.kind], getattr(d, d.kind)) for d in decoded]
    parsed = [(k, DEC_SEC[k](s)) for k, s in secs]
    rows: list[tuple[str, float]] = [
        ("index loader now (native_index._parse_records)", best(lambda: native_index._parse_records(src))),
        ("  orjson.loads", best(lambda: [orjson.loads(x) for x in lines])),
        ("  orjson.dumps (the exactness check)", best(lambda: [orjson.dumps(o) for o in objs])),
        ("msgspec _Line, sections Raw (skip 1)", best(lambda: [DEC_LINE(x) for x in lines])),
        ("  section Struct, signature fields Raw (skip 2)", best(lambda: [DEC_SEC[k](s) for k, s in secs])),
        ("  signature: SHA-256", best(lambda: [sig_of(k, s) for k, s in parsed])),
        ("  signature: BLAKE2b-128", best(lambda: [sig_of(k, s, lambda: hashlib.blake2b(digest_size=16))
                                                  for k, s in parsed])),
    ]
    try:
        import xxhash
    except ImportError:
        pass
    else:
        rows.append(("  signature: xxh3-128 (not cryptographic)", best(lambda: [sig_of(k, s, xxhash.xxh3_128)
                                                                                 for k, s in parsed])))
    rows.append(("route, complete per line (raw_record, SHA-256)", best(lambda: [raw_record(x) for x in lines])))
    fast = sum(1 for x in lines if raw_record(x) is not None)
    print(f"{args.file.name}: {n} span lines, {args.file.stat().st_size / 1e6:.0f} MB; "
          f"{fast} lines take the route; CPU microseconds a line, best of {args.repeat}")
    for label, us in rows:
        print(f"  {label:52s}{us:7.2f}")
    return 0


if __name__ == "__main__":
    # first openings: no index cache between the measured runs (core.load.index_cache; the processes inherit it)
    os.environ.setdefault("TRACETUI_INDEX_CACHE", "0")
    sys.exit(main())
