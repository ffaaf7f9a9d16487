"""Payload blobs next to a cassette (shapes c and e): refs resolved inside the file's folder only,
digests checked, what could not be read reported once.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from typing import Any, NamedTuple

import orjson

from tracetui.core.canonical import canonical_json
from tracetui.core.errors import ReadError
from tracetui.core.model import ReadIssue
from tracetui.core.readers.jsondoc import BOM, load_json

__all__ = ["Blobs", "PayloadLog", "blob_payload", "report_nofolder"]

# --- blobs ----------------------------------------------------------------------------------

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(//)?(.*)", re.DOTALL)
_LOCAL_SCHEMES = frozenset({"blob", "blobs", "payload", "payloads", "ref", "sha256", "cas"})
_TEXT_EXTS = (".txt", ".md", ".log", ".text", ".html", ".csv")


class _Blob(NamedTuple):
    """What resolving a ref gave: ``status`` ok, escape, missing, nofolder, remote, unreadable."""

    status: str
    raw: bytes | None = None
    file: str = ""
    detail: str = ""


class Blobs:
    """Payload blobs next to a trace file (shapes c and e).

    A ref with a ``/`` is a path relative to the file's folder
    (``blobs/ab12.json``). A bare ref (an id or a hash, optionally ``sha256:``
    or ``blob://`` prefixed) is looked up, in order, in ``<dir>/blobs/``,
    ``<dir>/<stem>.blobs/``, ``<dir>/payloads/`` (exact name, then the name plus
    any extension), then ``<dir>/<ref>``. Absolute refs, refs with a ``..``
    component and files whose real path leaves the folder are refused.
    Folder listings and blobs are read once per file.
    """

    def __init__(self, path: str) -> None:
        self.base = os.path.dirname(os.path.abspath(path))
        self.real_base = os.path.realpath(self.base)
        name = os.path.basename(path)
        stems = [name.rsplit(".", 1)[0], name.split(".", 1)[0]]
        self.folders = [os.path.join(self.base, "blobs")]
        self.folders += [os.path.join(self.base, s + ".blobs") for s in dict.fromkeys(stems) if s]
        self.folders.append(os.path.join(self.base, "payloads"))
        self._listing: dict[str, dict[str, str] | None] = {}
        self._cache: dict[str, _Blob] = {}

    def _stems(self, folder: str) -> dict[str, str] | None:
        """name and name-without-extension -> file name, for one folder (None: no such folder)."""
        if folder not in self._listing:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                self._listing[folder] = None
                return None
            table: dict[str, str] = {}
            for n in names:
                table.setdefault(n, n)
            for n in names:
                if "." in n:
                    table.setdefault(n.split(".", 1)[0], n)
            self._listing[folder] = table
        return self._listing[folder]

    def _inside(self, file: str) -> bool:
        real = os.path.realpath(file)
        return real == self.real_base or real.startswith(self.real_base + os.sep)

    def _read(self, file: str) -> _Blob:
        if not self._inside(file):
            return _Blob("escape", detail="its real path leaves the trace file's folder")
        try:
            with open(file, "rb") as fh:
                return _Blob("ok", fh.read(), file)
        except OSError as exc:
            return _Blob("unreadable", detail=exc.strerror or str(exc))

    def get(self, ref: Any) -> _Blob:
        """Resolve one ref (cached)."""
        if not isinstance(ref, str) or not ref.strip():
            return _Blob("missing", detail="the ref is not a non-empty string")
        hit = self._cache.get(ref)
        if hit is None:
            hit = self._cache[ref] = self._resolve(ref.strip())
        return hit

    def _resolve(self, ref: str) -> _Blob:
        m = _SCHEME.fullmatch(ref)
        if m is not None and len(m[1]) > 1:  # "C:\..." is a drive, not a scheme
            if m[1].lower() not in _LOCAL_SCHEMES:
                return _Blob("remote", detail=f"a {m[1]} URL, not a local file")
            ref = m[3]
        if "\x00" in ref:
            return _Blob("escape", detail="the ref holds a NUL byte")
        parts = re.split(r"[\\/]", ref)
        if os.path.isabs(ref) or ref.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", ref) or ".." in parts:
            return _Blob("escape", detail="absolute or leaving the file's folder (..)")
        if len(parts) > 1:
            file = os.path.join(self.base, *parts)
            if os.path.isfile(file):
                return self._read(file)
            if not os.path.isdir(os.path.dirname(file)):
                return _Blob("nofolder")
            return _Blob("missing")
        found_folder = False
        for folder in self.folders:
            table = self._stems(folder)
            if table is None:
                continue
            found_folder = True
            name = table.get(ref)
            if name is not None:
                return self._read(os.path.join(folder, name))
        file = os.path.join(self.base, ref)
        if os.path.isfile(file):
            return self._read(file)
        return _Blob("missing" if found_folder else "nofolder")


def _parse_blob(blob: _Blob, issues: list[ReadIssue], path: str, line: int | None, where: str) -> Any:
    """A blob's payload: JSON parsed when it is JSON (and not a ``.txt``-like file), else text."""
    raw = (blob.raw or b"").removeprefix(BOM)
    if not blob.file.lower().endswith(_TEXT_EXTS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            try:
                return load_json(path, raw, issues, line=line)
            except ReadError:
                pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(ReadIssue(path, line, where, f"blob {os.path.basename(blob.file)} is not UTF-8 text (byte "
                                f"{exc.start}); undecodable bytes replaced", "warning"))
        return raw.decode("utf-8", "replace")


def _digest_problem(digest: Any, raw: bytes, payload: Any) -> str | None:
    """Why a recorded sha256 digest does not match a blob, or None (match, or not a sha256).

    Accepted: ``sha256:<hex>``, ``sha256-<base64>`` (subresource integrity), a
    bare hex string of 16 to 64 digits (a sha256 or its prefix). The digest may
    be of the blob's bytes or of the payload's canonical JSON.
    """
    if not isinstance(digest, str):
        return None
    d = digest.strip()
    low = d.lower()
    if low.startswith("sha256:"):
        want = low[7:]
    elif low.startswith("sha256-"):
        try:
            want = base64.b64decode(d[7:], validate=True).hex()
        except (binascii.Error, ValueError):
            return f"digest {digest!r} is not valid base64"
    elif re.fullmatch(r"[0-9a-f]{16,64}", low):
        want = low
    else:
        return None  # another algorithm: not verified
    got = hashlib.sha256(raw).hexdigest()
    if got.startswith(want):
        return None
    try:
        if hashlib.sha256(canonical_json(payload)).hexdigest().startswith(want):
            return None
    except TypeError:
        pass
    return f"sha256 of the blob is {got[:16]}..., the recorded digest is {d}"


class PayloadLog:
    """Counts refs that could not be read, so a run without its blob folder is reported once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.nofolder: list[str] = []
        self.warned = 0


def blob_payload(blobs: Blobs, ref: Any, log: PayloadLog, issues: list[ReadIssue], line: int | None,
             where: str, owner: str, digest: Any = None) -> tuple[bool, Any]:
    """Resolve a payload ref: ``(found, value)``. Problems are reported (see ``Blobs``)."""
    blob = blobs.get(ref)
    path = log.path
    if blob.status == "ok":
        value = _parse_blob(blob, issues, path, line, where)
        problem = _digest_problem(digest, blob.raw or b"", value) if digest is not None else None
        if problem:
            issues.append(ReadIssue(path, line, where, f"{owner}: payload {ref!r}: {problem}; payload kept, it may "
                                    "not be what was recorded", "warning"))
        return True, value
    if blob.status == "nofolder":
        log.nofolder.append(str(ref))
        return False, None
    reason = {"escape": "refused: ", "remote": "not read: ", "missing": "missing: no such blob",
              "unreadable": "unreadable: "}[blob.status] + blob.detail
    issues.append(ReadIssue(path, line, where, f"{owner}: payload ref {ref!r} {reason}; the field stays absent", "warning"))
    return False, None


def report_nofolder(log: PayloadLog, issues: list[ReadIssue], run: str, blobs: Blobs) -> None:
    if log.nofolder:
        n = len(log.nofolder)
        folders = ", ".join(os.path.relpath(f, blobs.base) + "/" for f in blobs.folders)
        issues.append(ReadIssue(
            log.path, None, "", f"run {run}: payloads are not in the file: {n} payload ref(s) (first {log.nofolder[0]!r}) "
            f"and no blob folder next to it ({folders}): content stripped at capture or not shipped; "
            "those fields stay absent", "warning"))
        log.nofolder = []
