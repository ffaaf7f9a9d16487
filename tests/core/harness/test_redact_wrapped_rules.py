"""The rules of core/harness/redact_wrapped.py, pinned one by one on a Redactor built in the test."""
