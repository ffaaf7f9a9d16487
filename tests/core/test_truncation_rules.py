"""docs/triage.md, ``truncated_output``: when a value looks cut (``triage.truncation``), one test per rule (issue 25:
the survivors of ``scripts/mutation.py truncation run``, tests/mutation_equivalents.md)."""
