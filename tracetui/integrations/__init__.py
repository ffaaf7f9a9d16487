"""Framework glue: record and replay the agents people already have, unchanged.

Outside ``tracetui.core`` (which stays free of optional dependencies); each module imports its
framework lazily and needs that framework's extra (``pip install 'tracetui[openai]'``...):

- ``wire``: the model APIs on the wire (pure: no httpx, no SDK);
- ``transport``: httpx transports for any client built on httpx (``ModelTransport``,
  ``AsyncModelTransport``);
- ``clients``: configured ``openai`` / ``anthropic`` clients (``tracetui.openai_client()``...);
- ``openai_agents``, ``pydantic_ai``, ``langgraph``, ``mcp``: one thin module per framework;
- ``autopatch``: the zero-code entry (``tracetui record -- python app.py``) patches the
  supported clients and frameworks at import.

Every integration finds the open session through ``tracetui.current_session()`` (a context
variable), so tools and clients defined at module level work.
"""
