"""The rules of ``core/diff/comparable.py`` (what a foreign recording and its replay cannot compare), each stated
on traces built in the test (issue 25: mutation testing)."""
