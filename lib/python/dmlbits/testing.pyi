import os
from numpy.typing import ArrayLike

__all__ = ["assert_bits_equal"]

def assert_bits_equal(__actual: ArrayLike, __expected: ArrayLike | str | os.PathLike[str], *, max_listed: int = ...,
                      label: str | None = ...) -> None: ...
