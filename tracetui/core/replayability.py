"""Deprecated: moved to ``tracetui.core.triage.replayability`` (issue 17); this module re-exports it.

docs/ showed ``tracetui.core.replayability`` before triage became a package; import from
``tracetui.core.triage.replayability`` instead.
"""

from __future__ import annotations

import warnings

from tracetui.core.triage.replayability import *  # noqa: F403
from tracetui.core.triage.replayability import __all__  # noqa: F401

warnings.warn("tracetui.core.replayability moved to tracetui.core.triage.replayability", DeprecationWarning, stacklevel=2)
