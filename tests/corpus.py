"""Where the shared public corpus lives, for tests that read real files.

``../shared/corpus/`` sits next to the checkout (see its README and each
folder's SOURCES.md). Tests that need a file call ``corpus(rel)``, which skips
the test with the file's name when the corpus is not there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = (Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus").resolve()


def corpus(rel: str) -> Path:
    """Path of ``../shared/corpus/<rel>``; skips the calling test when it is absent."""
    p = CORPUS / rel
    if not p.exists():
        pytest.skip(f"corpus file {rel} not available")
    return p


def corpus_files(*, outside: str | None = None) -> list[Path]:
    """Every file of the corpus but its notes (``.md``), leaving out the folder ``outside`` (a reader's own
    files); skips the calling test when the corpus is absent, so a "rejects every other file" test never
    passes silently on fewer files."""
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus/) is not available")
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md"
                   and (outside is None or outside not in p.relative_to(CORPUS).parts))
    assert len(files) >= 10, f"only {len(files)} corpus files: is ../shared/corpus/ complete?"
    return files
