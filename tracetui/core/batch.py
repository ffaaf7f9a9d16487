"""Deprecated: moved to ``tracetui.core.triage.batch`` (issue 17); this module re-exports it.

docs/ showed ``tracetui.core.batch`` before triage became a package; import from
``tracetui.core.triage.batch`` instead.
"""

from __future__ import annotations

import warnings

from tracetui.core.triage.batch import *  # noqa: F403
from tracetui.core.triage.batch import __all__  # noqa: F401

warnings.warn("tracetui.core.batch moved to tracetui.core.triage.batch", DeprecationWarning, stacklevel=2)
