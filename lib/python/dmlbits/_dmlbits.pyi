# The extension (src/*.cpp): internal, untyped; the package's public stubs type what users call.
from typing import Any

def __getattr__(name: str) -> Any: ...
