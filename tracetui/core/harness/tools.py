"""``@tracetui.tool``: a plain function, sync or async, recorded and replayed at the tool boundary.

The decorated function keeps its name, signature, docstring and type hints (``functools.wraps``;
``inspect.signature`` follows ``__wrapped__``), so every framework builds the same tool schema
from it as from the bare function. Outside a session it is the function, called as is. Inside
one (``tracetui.record`` / ``tracetui.replay``, ``tracetui.core.harness.ambient``) each call is a
tool span: recorded live, or in replay answered from the recording (a read), intercepted (a
write: a success marked simulated, unless the recording holds the same write) or raised as a
divergence — the live function is never called in strict replay.

The arguments recorded are the call's bound arguments by parameter name (``{"city": "Paris"}``),
defaults not filled in. In replay the function returns the recorded output as JSON: a function
that returns a dataclass or a model returns its JSON form (a dict) in replay.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, overload

from tracetui.core.harness.agent import signature_schema
from tracetui.core.harness.ambient import current_session, declare_tool

F = TypeVar("F", bound=Callable[..., Any])

EFFECTS = ("read", "write")


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(*, read: bool = False, effect: str | None = None, name: str | None = None) -> Callable[[F], F]: ...


def tool(fn: Callable[..., Any] | None = None, /, *, read: bool = False, effect: str | None = None,
         name: str | None = None) -> Any:
    """Make ``fn`` a recorded tool: ``@tracetui.tool`` (a write) or ``@tracetui.tool(read=True)``.

    Args:
        fn: The tool function (sync or ``async def``).
        read: The tool only reads (served from the recording in replay). Every other tool is a
            write, intercepted in replay.
        effect: ``"read"`` or ``"write"``, the same as ``read`` spelled out.
        name: The tool name recorded (default: the function's ``__name__``).

    Returns:
        The wrapped function, or a decorator when called with keywords only.

    Raises:
        ValueError: ``effect`` is neither ``read`` nor ``write``, or contradicts ``read``.
    """
    if effect is not None:
        if effect not in EFFECTS:
            raise ValueError(f"tracetui.tool: effect must be 'read' or 'write', not {effect!r}")
        if read and effect == "write":
            raise ValueError("tracetui.tool: read=True contradicts effect='write'")
        read = effect == "read"

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        tool_name = name or getattr(f, "__name__", None) or type(f).__name__
        sig = _signature(f)
        schema = signature_schema(f)
        declare_tool(tool_name, read=read)

        def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            if sig is None:
                return {"args": list(args), **kwargs} if args else dict(kwargs)
            try:
                return dict(sig.bind(*args, **kwargs).arguments)
            except TypeError:
                return {"args": list(args), **kwargs} if args else dict(kwargs)

        if inspect.iscoroutinefunction(f):
            @functools.wraps(f)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                session = current_session()
                if session is None or session.engine is None:
                    return await f(*args, **kwargs)
                session.saw_tool(tool_name, schema)
                return await session.engine.atool(tool_name, arguments(args, kwargs), None,
                                                  lambda: f(*args, **kwargs))

            awrapper.__tracetui_tool__ = tool_name  # type: ignore[attr-defined]
            return awrapper

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            session = current_session()
            if session is None or session.engine is None:
                return f(*args, **kwargs)
            session.saw_tool(tool_name, schema)
            return session.engine.tool(tool_name, arguments(args, kwargs), None, lambda: f(*args, **kwargs))

        wrapper.__tracetui_tool__ = tool_name  # type: ignore[attr-defined]
        return wrapper

    if fn is not None:
        return wrap(fn)
    return wrap


def _signature(f: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):
        return None
