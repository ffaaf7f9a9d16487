"""The rules of core/harness/redact_walk.py, pinned one by one on a Redactor built in the test."""
