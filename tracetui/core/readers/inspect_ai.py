"""inspect-ai eval log reader: ``.json`` logs and ``.eval`` zip logs, one run per sample x epoch.

Containers (``../shared/design/formats.md`` §7; inspect_ai ``src/inspect_ai/log/``):

- ``.json``: one document ``{"version", "status", "eval", "plan", "results", "stats",
  "samples": [EvalSample...], "reductions"}``;
- ``.eval``: a zip holding ``header.json`` (the log without samples; ``_journal/start.json``
  while the eval runs), ``samples/<id>_epoch_<n>.json`` (one EvalSample each),
  ``summaries.json``, ``reductions.json``. Read in memory (``zipfile`` over the bytes,
  never extracted). A zip whose central directory is damaged (a truncated file) is read
  by walking its local file headers; a member that cannot be read or parsed is reported
  and the other samples load.

Each sample x epoch is one run (``RunSpans.trace_id`` = ``sample-<id>-epoch-<n>``). The
sample's ``events`` become spans under one synthesized root ``agent`` span named after
the task:

- nesting: ``span_begin``/``span_end`` (``parent_id`` on the begin, ``span_id`` on every
  event; inspect ``event/_tree.py``), or in older logs ``step`` events (``action:
  begin|end``) as a stack; a ``span_begin`` of type ``tool`` is merged into the ``tool``
  event it wraps (same function, sibling or enclosing), so its sandbox/store events
  become the tool span's children;
- ``model`` -> ``llm``; ``tool`` -> ``tool``; ``score`` -> ``other`` named ``score``;
  ``approval`` -> ``decision``; ``subtask`` and ``span_begin`` of type ``agent`` ->
  ``agent``; every other event -> ``other`` with a compact ``input``/``output``
  (docs/readers/inspect-ai.md has the table and why).

``attachment://<hash>`` strings (and the older ``tc://<hash>``) are replaced by the
sample's ``attachments`` (``transcript.content`` in older logs), as inspect's
``resolve_sample_attachments`` does; a reference with no attachment is left as is and
reported once per run. Timestamps (ISO 8601 with offset) become exact integer ns.

Split by job: this module loads the log (``.json`` documents, ``.eval`` zips, damaged zips,
one sample at a time); ``inspect_ai_sample`` maps one sample's events into spans, on
``inspect_ai_content`` (the sample's values, attachments resolved).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any

from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.base import IssueList, ReaderOutput, RunSpans
from tracetui.core.readers.gc_paused import gc_paused
from tracetui.core.readers.inspect_ai_sample import LogInfo, SampleSpans
from tracetui.core.readers.jsondoc import BOM, load_json

__all__ = ["InspectAiReader"]

_ZIP_LOCAL = b"PK\x03\x04"
_ZIP_NAMES = (b"header.json", b"_journal/start.json", b"summaries.json", b"reductions.json")
_SAMPLE_MEMBER = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_JSON_EVAL = re.compile(rb'"eval"\s*:\s*\{')

# -- small helpers ------------------------------------------------------------------------



def _sample_order(header: dict[str, Any]) -> dict[str, int]:
    """Position of each sample id in ``eval.dataset.sample_ids`` (the dataset's order)."""
    ev = header.get("eval")
    ds = ev.get("dataset") if isinstance(ev, dict) else None
    ids = ds.get("sample_ids") if isinstance(ds, dict) else None
    return {str(x): i for i, x in enumerate(ids)} if isinstance(ids, list) else {}


# -- zip ----------------------------------------------------------------------------------

_LOCAL = struct.Struct("<4sHHHHHIIIHH")


def _first_zip_names(head: bytes, limit: int = 8) -> list[bytes]:
    """Member names of the first local file headers found in ``head``."""
    names: list[bytes] = []
    pos = head.find(_ZIP_LOCAL)
    while pos >= 0 and len(names) < limit and pos + 30 <= len(head):
        nlen = int.from_bytes(head[pos + 26:pos + 28], "little")
        names.append(head[pos + 30:pos + 30 + nlen])
        pos = head.find(_ZIP_LOCAL, pos + 30 + nlen)
    return names


def _scan_local_headers(data: bytes) -> tuple[dict[str, bytes | None], list[str]]:
    """Members of a zip whose central directory is unreadable, from its local file headers.

    Returns:
        ``(members, problems)``: name -> bytes (None when the member's data is cut or
        uses an unsupported compression), in file order, and one line per problem.
    """
    members: dict[str, bytes | None] = {}
    problems: list[str] = []
    pos = data.find(_ZIP_LOCAL)
    while pos >= 0 and pos + 30 <= len(data):
        _sig, _ver, flag, method, _t, _d, _crc, csize, _usize, nlen, xlen = _LOCAL.unpack_from(data, pos)
        name = data[pos + 30:pos + 30 + nlen].decode("utf-8", "replace")
        start = pos + 30 + nlen + xlen
        sized = not (flag & 0x08) and csize > 0
        body: bytes | None = None
        end = start + csize if sized else start
        if method == 8:
            d = zlib.decompressobj(-15)
            try:
                body = d.decompress(data[start:start + csize] if sized else data[start:])
            except zlib.error as exc:
                problems.append(f"{name}: {exc}")
                body = None
            else:
                if not d.eof:
                    problems.append(f"{name}: compressed data is cut short")
                    body = None
                elif not sized:
                    end = len(data) - len(d.unused_data)
        elif method == 0 and sized:
            body = data[start:start + csize]
            if len(body) < csize:
                problems.append(f"{name}: data is cut short")
                body = None
        else:
            problems.append(f"{name}: compression method {method} without a known size is not supported")
        members[name] = body
        pos = data.find(_ZIP_LOCAL, max(end, pos + 30))
    return members, problems


# -- the reader ---------------------------------------------------------------------------



def member_cap(zip_bytes: int) -> int:
    """The most bytes one zip member may expand to: 20x the zip's size plus 256 MiB (a real log's
    members compress 5-15x; a zip bomb's, thousands of times)."""
    return 20 * zip_bytes + (256 << 20)

class InspectAiReader:
    """Reads inspect-ai eval logs (``.json`` and ``.eval``)."""

    name = "inspect-ai"

    def sniff(self, head: bytes) -> bool:
        """A zip whose first members are inspect's (``_journal/start.json``, ``header.json``,
        ``samples/<id>_epoch_<n>.json``...), or a JSON object with an ``"eval"`` object naming
        ``task`` and ``task_id`` (or ``created`` and ``model``)."""
        if head.startswith(_ZIP_LOCAL):
            for n in _first_zip_names(head):
                if n in _ZIP_NAMES or (n.startswith(b"samples/") and b"_epoch_" in n):
                    return True
            return False
        body = head.removeprefix(BOM).lstrip()
        if not body.startswith(b"{") or _JSON_EVAL.search(head) is None:
            return False
        return b'"task"' in head and (b'"task_id"' in head or (b'"created"' in head and b'"model"' in head)) \
            and (b'"version"' in head or b'"samples"' in head or b'"plan"' in head)

    @gc_paused
    def read(self, path: str, data: bytes) -> ReaderOutput:
        """Parse a whole log: one run per sample x epoch.

        Raises:
            ReadError: not JSON / not a zip, not an inspect log, or no sample could be loaded.
        """
        r = _Reading(path)
        if data.startswith(b"PK"):
            r.read_zip(data)
        else:
            r.read_json(data)
        return ReaderOutput(runs=r.runs, issues=r.issues)


class _Reading:
    """State of reading one log file: issues and runs, in order."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[ReadIssue] = IssueList()
        self.runs: list[RunSpans] = []
        self.run_ids: set[str] = set()
        self.unknown_events: set[str] = set()

    def issue(self, where: str, message: str, severity: str = "skipped") -> None:
        self.issues.append(ReadIssue(self.path, None, where, message, severity))

    # -- containers --------------------------------------------------------------------

    def read_json(self, data: bytes) -> None:
        doc = load_json(self.path, data, self.issues)
        if not isinstance(doc, dict) or not ("eval" in doc or "samples" in doc):
            found = type(doc).__name__ if not isinstance(doc, dict) else "keys " + ", ".join(list(doc)[:8])
            raise ReadError(self.path, f"not an inspect-ai log (expected an object with eval and samples; found {found})")
        samples = doc.get("samples")
        if not isinstance(samples, list) or not samples:
            raise ReadError(self.path, "the log holds no samples (written with log_samples=False, or a header only); "
                            "nothing to show", where="$.samples")
        info = LogInfo(doc)
        for k, sample in enumerate(samples):
            self.sample(sample, f"$.samples[{k}]", info)
        if not self.runs:
            raise ReadError(self.path, "no sample could be loaded" + (f"; first problem: {self.issues[0]}" if self.issues else ""))

    def read_zip(self, data: bytes) -> None:
        """Read an ``.eval`` zip's members (each capped by ``member_cap``)."""
        members: dict[str, bytes | None] = {}
        names: list[str]
        read: Callable[[str], bytes | None]
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
            names = [i.filename for i in zf.infolist()]
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, struct.error) as exc:
            members, problems = _scan_local_headers(data)
            if not members:
                raise ReadError(self.path, f"not a readable zip ({exc}) and no zip member found") from None
            self.issue("", f"zip directory unreadable ({exc}): the file is cut short or damaged; "
                           f"{len(members)} member(s) recovered from their local headers", "warning")
            for p in problems:
                self.issue(p.split(":", 1)[0], f"zip member unreadable ({p.split(': ', 1)[-1]}); skipped")
            names = list(members)
            read = members.get
        else:
            cap = member_cap(len(data))

            def read(name: str) -> bytes | None:
                try:
                    with zf.open(name) as fh:
                        raw = fh.read(cap + 1)  # never more than the cap, whatever the header claims
                except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
                    self.issue(name, f"zip member unreadable ({exc}); skipped")
                    return None
                if len(raw) > cap:
                    self.issue(name, f"zip member expands past {cap:,} bytes from a {len(data):,}-byte file "
                                     "(a zip bomb?); skipped")
                    return None
                return raw

        header: dict[str, Any] = {}
        for hname in ("header.json", "_journal/start.json"):
            if hname in names:
                raw = read(hname)
                value = self.member_json(hname, raw) if raw is not None else None
                if isinstance(value, dict):
                    header = value
                    break
        if not header:
            self.issue("header.json", "no readable header.json (nor _journal/start.json): task, model and "
                       "revision unknown", "warning")
        order = _sample_order(header)
        sample_names: list[tuple[tuple[int, int, int], str]] = []
        for zi, name in enumerate(names):
            m = _SAMPLE_MEMBER.match(name)
            if m:
                sample_names.append(((order.get(m.group(1), len(order)), int(m.group(2)), zi), name))
        if not sample_names:
            raise ReadError(self.path, "the .eval zip holds no samples/<id>_epoch_<n>.json member "
                            "(written with log_samples=False?); nothing to show")
        # Zip member order is completion order, which differs between two runs of one task; the
        # dataset's order makes both files list (and pick by default) the same sample first.
        sample_names.sort()
        info = LogInfo(header)
        for _, name in sample_names:
            raw = read(name)
            if raw is None:
                continue
            sample = self.member_json(name, raw)
            if sample is not None:
                self.sample(sample, name + " $", info)
        if not self.runs:
            raise ReadError(self.path, "no sample could be loaded" + (f"; first problem: {self.issues[0]}" if self.issues else ""))

    def member_json(self, name: str, raw: bytes) -> Any:
        mark = len(self.issues)
        try:
            value = load_json(self.path, raw, self.issues)
        except ReadError as exc:
            where = name + (f" line {exc.line}" if exc.line is not None else "")
            self.issue(where, f"{exc.reason}; member skipped")
            return None
        for i in range(mark, len(self.issues)):  # name the member in load_json's warnings
            old = self.issues[i]
            self.issues[i] = ReadIssue(old.path, old.line, name, old.message, old.severity)
        return value

    # -- one sample ---------------------------------------------------------------------

    def sample(self, sample: Any, base: str, info: LogInfo) -> None:
        if not isinstance(sample, dict):
            self.issue(base, f"sample is a {type(sample).__name__}, not an object; skipped")
            return
        sid, epoch = sample.get("id"), sample.get("epoch")
        run_id = f"sample-{sid if sid is not None else len(self.runs) + 1}-epoch-{epoch if epoch is not None else 1}"
        if run_id in self.run_ids:
            n = 2
            while f"{run_id}-{n}" in self.run_ids:
                n += 1
            self.issue(base, f"a second sample with id {sid!r} epoch {epoch!r}; read as run {run_id}-{n}", "warning")
            run_id = f"{run_id}-{n}"
        self.run_ids.add(run_id)
        mark = len(self.issues)
        run = SampleSpans(self, sample, base, info, run_id).build()
        run.issues = self.issues[mark:]  # this sample's warnings: reported with its run only
        del self.issues[mark:]
        self.runs.append(run)
