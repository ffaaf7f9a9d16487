"""OTLP/JSON reader (placeholder: being written)."""

from __future__ import annotations

from tracetui.core.readers.base import ReaderOutput


class OtlpJsonReader:
    name = "otlp-json"

    def sniff(self, head: bytes) -> bool:
        return b"resourceSpans" in head or b"resource_spans" in head

    def read(self, path: str, data: bytes) -> ReaderOutput:
        raise NotImplementedError
