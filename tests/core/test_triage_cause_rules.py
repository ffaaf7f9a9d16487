"""docs/triage.md, "Step 3": why a trial left the original's path (``triage.cause``), one test per rule, on the
divergences of runs built in the test (issue 25: the survivors of ``scripts/mutation.py cause run``,
tests/mutation_equivalents.md)."""
