"""`python -m tracetui` runs the CLI."""

from tracetui.cli.main import main

raise SystemExit(main())
