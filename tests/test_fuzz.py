"""Fuzz test (issue 21): seeded mutations of real trace files (``../shared/corpus`` and ``sample_runs``:
truncation, byte flips, type swaps, deep nesting, huge numbers and strings, bombs; ``tests/fuzzing.py``)
through ``show`` (text and JSON), ``diff`` both ways (text and JSON) and ``convert``, each in a forked child
of a worker process. No run may end in an internal error or a traceback, hang (30 s), exit other than
0/1/2, or peak above 20x the mutated file + 300 MB of RSS (the child's own ``ru_maxrss``).

Bounded to about two minutes (slow: it runs in CI, not in the quick run). ``scripts/fuzz.py`` runs the same
for thousands of mutations.
"""

from __future__ import annotations

import pytest

from tests.fuzzing import KINDS, run_campaign, seed_files

BUDGET_S = 100.0


@pytest.mark.slow
def test_mutated_real_files_never_take_the_cli_down(tmp_path):
    files = seed_files()
    if len(files) < 20:
        pytest.skip("the shared corpus (../shared/corpus/) is not available: only the sample runs to mutate")
    stats = run_campaign(len(files) * len(KINDS), seed=20261202, work=tmp_path, timeout=30.0, files=files,
                         budget_s=BUDGET_S)
    assert stats["mutations"] >= 60, stats  # the budget ran out early: the test would prove little
    assert set(stats["kinds"]) == set(KINDS), stats["kinds"]
    assert stats["codes"].get(2, 0) > 0 and stats["codes"].get(0, 0) > 0  # damage was refused, and read
    assert not stats["problems"], "\n\n".join(f"{case} {argv}: {what}" for case, argv, what in stats["problems"][:5])
