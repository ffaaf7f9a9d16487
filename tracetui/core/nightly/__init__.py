"""Nightly replay of sampled production runs (``tracetui nightly``; docs/nightly.md).

``store`` lists and samples a trace store (a folder or an fsspec URL) without reading it; ``task``
replays one run in one LLM mode on a worker and returns its summary; ``job`` runs the sample on an
executor (``tracetui.core.execute``; Dask in ``tracetui.integrations.dask_cluster``), journalling
each result; ``report`` aggregates, compares with last night's report and judges ``--fail-on``.
"""

from tracetui.core.nightly.job import NightlyConfig, NightlyError, journal_path, run_nightly
from tracetui.core.nightly.report import aggregate, compare, evaluate, parse_rule, render_markdown
from tracetui.core.nightly.store import StoreEntry, list_store, sample
from tracetui.core.nightly.task import OUTCOMES, Task, replay_run

__all__ = ["OUTCOMES", "NightlyConfig", "NightlyError", "StoreEntry", "Task", "aggregate", "compare", "evaluate",
           "journal_path", "list_store", "parse_rule", "render_markdown", "replay_run", "run_nightly", "sample"]
