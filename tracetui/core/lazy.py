"""PEP 562 lazy exports: a package names its public objects and the modules that define them;
each is imported on first use, so ``import tracetui.core`` (or ``.harness``, ``.golden``) costs
nothing until a name is used."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str | tuple[str, str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving ``exports`` on first use: name -> defining module (the
    same name there), or name -> ``(module, name there)``.

    Raises (from the returned function):
        AttributeError: ``name`` is not exported.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = (target, name) if isinstance(target, str) else target
        return getattr(import_module(module), attr)

    return __getattr__
