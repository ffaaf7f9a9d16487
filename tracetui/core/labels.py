"""Deprecated: moved to ``tracetui.core.diff.labels`` (issue 17); this module re-exports it.

docs/ showed ``tracetui.core.labels`` before the core was arranged by concern; import from
``tracetui.core.diff.labels`` instead.
"""

from __future__ import annotations

import warnings

from tracetui.core.diff.labels import *  # noqa: F403
from tracetui.core.diff.labels import __all__  # noqa: F401

warnings.warn("tracetui.core.labels moved to tracetui.core.diff.labels", DeprecationWarning, stacklevel=2)
