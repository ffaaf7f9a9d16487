"""Single-value mutations of a JSON document, for the "never a traceback" fuzz tests of readers."""

from __future__ import annotations

from typing import Any


def json_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (keys and list indexes), the root ``()`` first."""
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += json_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += json_paths(v, (*path, i))
    return out


def replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``doc`` with the value at ``path`` replaced (the original is not changed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {**doc, head: replaced(doc[head], rest, value)}
    return [replaced(v, rest, value) if i == head else v for i, v in enumerate(doc)]


def odd_value_outcomes(read: Any, doc: Any, odds: tuple[Any, ...], dumps: Any, name: str = "odd.json") -> dict[str, int]:
    """Read ``doc`` with each node in turn replaced by each of ``odds``; check every outcome; count them.

    ``read(name, data)`` is a reader's ``read``; ``dumps`` makes the bytes. Each outcome is one of:

    - ``error``: a ``ReadError`` naming the file, with a reason;
    - ``issue``: a result whose issues each name the file and say something;
    - ``clean``: a result without issues holding spans;
    - ``empty``: neither spans nor issues (an odd value that empties a list the format allows empty;
      ``read_trace`` refuses such a file: "no span found").

    In every result, each span is well-formed (a non-empty string id unique in its run, a ``SpanKind``, a
    ``Status``, integer or absent times, a dict of data) and each parent id names a span of the run or is
    reported (an issue). Returns the counts per outcome, for the caller to assert that odd values were noticed.
    """
    from tracetui.core.errors import ReadError
    from tracetui.core.model import SpanKind, Status

    counts = {"error": 0, "issue": 0, "clean": 0, "empty": 0}
    for path in json_paths(doc):
        for odd in odds:
            where = f"{path!r} <- {odd!r}"
            try:
                out = read(name, dumps(replaced(doc, path, odd)))
            except ReadError as e:
                assert e.path == name and e.reason, where
                counts["error"] += 1
                continue
            issues = [*out.issues, *(i for r in out.runs for i in r.issues)]
            for i in issues:
                assert i.path == name and i.message, where
            spans = [s for r in out.runs for s in r.spans]
            for run in out.runs:
                ids = [s.span_id for s in run.spans]
                assert all(type(x) is str and x for x in ids), where
                assert len(set(ids)) == len(ids) or issues, where
            for s in spans:
                assert type(s.kind) is SpanKind and type(s.status) is Status and isinstance(s.data, dict), where
                assert all(t is None or type(t) is int for t in (s.start_ns, s.end_ns)), where
            if issues:
                counts["issue"] += 1
            else:
                counts["clean" if spans else "empty"] += 1
    return counts
