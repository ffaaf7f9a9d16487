"""The vcrpy cassette file: its document (YAML or JSON) and its HTTP bodies, before any mapping.

YAML is read with ``yaml.CSafeLoader`` when libyaml is there, else ``yaml.SafeLoader`` (no Python
object tags); an integer of more than 4,300 digits is kept as text (a warning), and a document whose
aliases expand past ``YAML_NODE_BUDGET`` nodes is refused before it is built. Bodies are text, bytes
(``!!binary``: gzip/deflate decompressed when ``content-encoding`` says so or the bytes start with
the gzip magic) or JSON values. ``readers.vcrpy`` maps the interactions to spans.
"""

from __future__ import annotations

import gzip
import re
import zlib
from email.utils import parsedate_to_datetime
from typing import Any

import orjson
import yaml

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.base import FileReading
from tracetui.core.readers.jsondoc import BOM, load_json

__all__ = ["YAML_NODE_BUDGET", "CassetteFile", "date_header_ns", "header_dict"]

_YAML_ITEM = re.compile(r"(?m)^-[ \n\r]")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, with integers Python refuses to convert (over 4,300 digits) kept as text."""

    def huge_int(self, node: yaml.ScalarNode) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_int(self, node)  # type: ignore[arg-type]
        except ValueError:
            self.kept_as_text.append(node.start_mark.line + 1)
            return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.huge_int)

YAML_NODE_BUDGET = 5_000_000
"""The most nodes a cassette's YAML may expand to once its aliases are followed: a real cassette of
hundreds of MB stays far below; 10 KB of nested aliases would otherwise take many GB."""


def _expanded_size(root: Any, budget: int) -> int:
    """How many nodes ``root`` (a composed YAML node graph, aliases shared) stands for once every
    alias is expanded, counting up to just past ``budget`` (each distinct node sized once, bottom up)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        sizes[key] = min(budget + 1, 1 + sum(sizes.get(id(c), 1) for c in children))
    return sizes.get(id(root), 1)


def header_dict(h: Any) -> dict[str, str]:
    """Header dict with lowercase names and one string value each (vcrpy writes lists)."""
    out: dict[str, str] = {}
    if not isinstance(h, dict):
        return out
    for k, v in h.items():
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v)
        out[str(k).lower()] = "" if v is None else str(v)
    return out


def date_header_ns(value: str | None) -> int | None:
    """An HTTP ``Date`` header (RFC 9110 IMF-fixdate) as ns since the epoch, or None."""
    if not value:
        return None
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if dt.tzinfo is None:
        return None
    return int(dt.timestamp()) * 1_000_000_000


class CassetteFile(FileReading):
    """A pass over one cassette file: ``load`` its document, decode each ``body``; issues as
    ``FileReading`` keeps them (``readers.vcrpy`` builds on it)."""

    def load(self, data: bytes) -> tuple[Any, list[int] | None]:
        """The cassette's document, and the 1-based line of each YAML list item that starts a line
        (None for JSON; empty when none does).

        Raises:
            ReadError: the file is empty, not YAML (with the line and column) or JSON, or its
                aliases expand past ``YAML_NODE_BUDGET`` nodes.
        """
        body = data.removeprefix(BOM)
        if not body.strip():
            raise ReadError(self.path, "file is empty")
        if body.lstrip().startswith(b"{"):
            return load_json(self.path, body, self.issues), None
        loader = _Loader(body)
        loader.kept_as_text = []
        try:
            node = loader.get_single_node()
            if node is not None:
                expanded = _expanded_size(node, YAML_NODE_BUDGET)
                if expanded > YAML_NODE_BUDGET:
                    raise ReadError(self.path, f"YAML aliases expand this {len(body):,}-byte file to more than "
                                    f"{YAML_NODE_BUDGET:,} nodes (an alias bomb?); not read")
            doc = loader.construct_document(node) if node is not None else None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
            raise ReadError(self.path, f"not valid YAML: {problem}"
                            + (f" (column {mark.column + 1})" if mark is not None else ""),
                            line=mark.line + 1 if mark is not None else None) from None
        finally:
            loader.dispose()
        for line in loader.kept_as_text:
            self.issues.append(ReadIssue(self.path, line, "", "an integer of more than 4300 digits kept as text",
                                         "warning"))
        text = body.decode("utf-8", "replace")
        lines = [text.count("\n", 0, m.start()) + 1 for m in _YAML_ITEM.finditer(text)] if "\n-" in text else []
        return doc, lines

    def body(self, raw: Any, headers: dict[str, str], where: str, line: int | None) -> tuple[str | None, int]:
        """A body as text (decompressed, decoded), and its size in bytes when it is binary (else -1).

        ``raw`` is a request body or a response's ``{"string": ...}``; ``headers`` (lowercase names)
        give the ``content-encoding``. An encoding it cannot undo is a warning at ``where``, the
        body then ``(None, size)``.
        """
        if isinstance(raw, dict):  # response body {"string": ...}
            raw = raw.get("string", raw.get("base64_string"))
        if raw is None:
            return None, -1
        if isinstance(raw, str):
            return raw, -1  # text: already decoded (vcrpy's decode_compressed_response, or never compressed)
        if not isinstance(raw, (bytes, bytearray)):
            return orjson.dumps(raw).decode() if isinstance(raw, (dict, list)) else str(raw), -1
        b = bytes(raw)
        enc = headers.get("content-encoding", "").lower()
        try:
            if "gzip" in enc or b[:2] == b"\x1f\x8b":
                b = gzip.decompress(b)
            elif "deflate" in enc:
                try:
                    b = zlib.decompress(b)
                except zlib.error:
                    b = zlib.decompress(b, -15)
            elif enc and enc not in ("identity", "utf-8"):
                self.issue(line, where, f"content-encoding {enc!r} is not supported; body kept as {len(b)} bytes",
                           "warning")
                return None, len(b)
        except (OSError, EOFError, zlib.error) as exc:
            self.issue(line, where, f"body says {enc or 'gzip'} but does not decompress ({exc}); kept as "
                       f"{len(b)} bytes", "warning")
            return None, len(b)
        try:
            return b.decode("utf-8"), -1
        except UnicodeDecodeError:
            return None, len(b)
