"""An OpenTelemetry SDK tracer provider whose console exporter writes each run to its own file.

Shared by the tests that trace real frameworks with their own instrumentation
(test_otel_frameworks.py, test_otel_openai.py). Import only after the
``pytest.importorskip("opentelemetry.sdk.trace")`` of the importing test module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TextIO

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor


class ToFile:
    """Where the console exporter writes: the file of the run being made."""

    def __init__(self) -> None:
        self.fh: TextIO | None = None

    def write(self, text: str) -> None:
        assert self.fh is not None
        self.fh.write(text)

    def flush(self) -> None:
        if self.fh is not None:
            self.fh.flush()


def console_provider() -> tuple[TracerProvider, ToFile]:
    """A private tracer provider exporting every span, as it ends, to the returned sink."""
    sink = ToFile()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sink)))
    return provider, sink


def traced(sink: ToFile, out: Path, run: Callable[[], Any]) -> Any:
    """``run()`` with the spans it ends written to ``out``; returns what ``run`` returns."""
    with out.open("w") as fh:
        sink.fh = fh
        try:
            return run()
        finally:
            sink.fh = None
