"""Notifications that replace their predecessor instead of piling up.

Stepping through 7 search matches with ``]`` used to stack 7 "match N of 7"
toasts over the detail pane and the status line. ``notify_replacing`` first
removes the notifications still shown under the same title, then notifies.
"""

from __future__ import annotations

import os
from typing import Any

from textual.app import App


def notify_replacing(app: App[Any], message: str, *, title: str, severity: str = "information",
                     timeout: float | None = None) -> None:
    """``app.notify(message, title=title, markup=False)`` after removing the ones shown with the same ``title``.

    Args:
        app: The app.
        message: Plain text (never markup).
        title: The notification's title; the key of what it replaces.
        severity: ``information``, ``warning`` or ``error``.
        timeout: Seconds shown (None: Textual's default).
    """
    notifications = getattr(app, "_notifications", None)  # Textual's Notifications (private: guarded)
    unnotify = getattr(app, "_unnotify", None)
    if notifications is not None and unnotify is not None:
        try:
            stale = [n for n in list(notifications) if getattr(n, "title", None) == title]
        except TypeError:
            stale = []
        for notification in stale:
            try:
                unnotify(notification, refresh=False)
            except (KeyError, LookupError):
                pass
    kwargs: dict[str, Any] = {"title": title, "severity": severity, "markup": False}
    if timeout is not None:
        kwargs["timeout"] = timeout
    app.notify(message, **kwargs)


def say_source_changed(app: App[Any], error: Exception) -> None:
    """Tell the user, once per file, that a trace changed on disk while open (``SourceChanged``): the spans
    whose payloads were not read yet can no longer be shown; the pair must be opened again.

    Args:
        app: The app.
        error: The ``tracetui.core.errors.SourceChanged`` raised by a span's ``data``.
    """
    path = getattr(error, "path", "")
    said: set[str] | None = getattr(app, "source_changed_said", None)  # TraceTuiApp's; R clears it
    if said is None:
        said = set()
        app.source_changed_said = said  # type: ignore[attr-defined]
    if path in said:
        return
    said.add(path)
    app.notify(f"{os.path.basename(path)} changed on disk since it was opened (truncated or rewritten): the spans "
               "not read yet cannot be shown. R reads the pair again.",
               title="trace file changed", severity="error", markup=False, timeout=30)


STALE_LABEL = "⚠ file changed since it was read"
"""What a row or a pane shows for a span whose payload can no longer be read (``SourceChanged``)."""
