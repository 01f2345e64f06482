"""Names of a package looked up on first use (PEP 562's module ``__getattr__``), the one mechanism
behind :mod:`fakecluster`, :mod:`fakecluster.scenario` and :mod:`fakecluster.api`: importing one of
them (or any of their submodules, which imports the package first) imports none of the modules its
names come from, so reading a scenario file or collecting one under pytest does not build the cluster,
the API models or the scenario format."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any


def lazy_attribute(package: str, homes: Mapping[str, str], namespace: dict[str, Any], name: str,
                   source_name: str | None = None) -> Any:
    """``name`` of ``package`` from its module ``homes[name]`` (there called ``source_name``, if given),
    kept in the package's ``namespace`` so the next lookup does not come here; anything else is not
    there (so ``from package import submodule`` goes on to import the submodule, as for any package)."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), source_name or name)
    namespace[name] = value
    return value


def lazy_dir(namespace: dict[str, Any], exported: Iterable[str]) -> list[str]:
    """The package's ``dir()``: what it holds so far and every exported name."""
    return sorted(set(namespace) | set(exported))
