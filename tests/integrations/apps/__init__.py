"""Unchanged example programs: recorded and replayed through the zero-code entry
(``tracetui record -- python app.py``) and, for the in-process tests, imported."""
