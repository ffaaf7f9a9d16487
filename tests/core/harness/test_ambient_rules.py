"""The rules of core/harness/ambient.py (the ambient session), pinned on sessions opened in the test."""
