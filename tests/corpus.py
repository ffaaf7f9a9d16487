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
