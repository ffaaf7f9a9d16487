"""What the TUI writes or copies, redacted with the project key and rules (as ``tracetui record``).

The span JSON ``w`` writes and ``c`` copies, and a label's note saved to the sidecar, go through the
project's ``Redactor`` first (``tracetui.core.harness.redact.project_redactor``). With no project key
a one-off key is used (a viewer creates no key file): the values are hidden all the same, only the
tokens do not match other files' tokens. One redactor per project folder for the session, so a
value a secret field revealed in one span is hidden in the next one written.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

_REDACTORS: dict[str, Any] = {}


def tui_redactor() -> Any:
    """The project's ``Redactor`` for the current folder (one per folder, kept for the session).

    Raises:
        RedactionKeyError: a key source is set but unusable; RedactionConfigError: the project's
            ``[tool.tracetui.redaction]`` is malformed (both name the file and what to fix).
    """
    from tracetui.core.harness.redact import project_redactor

    cwd = os.getcwd()
    red = _REDACTORS.get(cwd)
    if red is None:
        red = _REDACTORS[cwd] = project_redactor(create=False)[0]
    return red


def redacted_span(span: Any) -> Any:
    """A copy of ``span`` (a ``Span``, or None) with its name, data and attributes redacted."""
    if span is None:
        return None
    red = tui_redactor()
    tool = span.data.get("tool_name") if span.kind.value == "tool" else None
    return dataclasses.replace(span, name=red.text(span.name), data=red.value(dict(span.data), tool=tool),
                               attributes=red.value(dict(span.attributes)) if span.attributes else {})


def redacted_label(label: Any) -> Any:
    """A copy of ``label`` (a ``Label``) whose note is redacted."""
    return dataclasses.replace(label, note=tui_redactor().text(label.note)) if label.note else label
