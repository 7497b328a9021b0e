"""The service's Python client (clients/python, the `memory_client` package), as the benchmarks drive the API with it.

The client is a package of its own that the service's environment does not install; it is imported here from its
folder under its own name (so that its modules import each other as they do when installed), once per process."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CLIENT_PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "python" / "memory_client"


def _client_package():
    loaded = sys.modules.get("memory_client")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(
        "memory_client", CLIENT_PACKAGE / "__init__.py", submodule_search_locations=[str(CLIENT_PACKAGE)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules["memory_client"] = package  # its own modules import it by name while it loads
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules["memory_client"]
        raise
    return package


MemoryClient = _client_package().MemoryClient

__all__ = ["MemoryClient"]
