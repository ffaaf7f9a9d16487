"""Command-line interface: argument parsing and words around the core's results."""
