"""dmlbits' exceptions: one class per error category of the library (the CLI's exit statuses).

Kept free of the extension, which imports this module to raise these classes.
"""

from typing import Optional

__all__ = ["Error", "UsageError", "InvalidInputError", "UnsupportedError", "FileError",
           "BackendError", "InternalError", "MismatchError"]


class Error(Exception):
    """Any error dmlbits reports. ``str(e)`` is the CLI's message; ``code`` the category's name
    (as ``dmlbits check`` manifests write it: "invalid-input") and ``exit_status`` the status
    the CLI exits with for it (man dmlbits, EXIT STATUS)."""

    code: Optional[str] = None
    exit_status: Optional[int] = None


class UsageError(Error, ValueError, TypeError):
    """A call dmlbits cannot make sense of: an unknown backend, feature level or keyword value,
    a wrong ``out=``, an operand that is not an array or a literal (the CLI's "usage")."""

    code = "usage"


class InvalidInputError(Error, ValueError, TypeError):
    """An operation DirectML refuses at the chosen feature level (mixed dtypes, a dtype or a rank
    the level lacks, shapes that do not broadcast), or a malformed tensor. The message names the
    lowest level that would accept it. NumPy raises TypeError for dtypes it refuses and
    ValueError for shapes; this is both."""

    code = "invalid-input"


class UnsupportedError(Error, ValueError):
    """A valid operation the chosen backend cannot run (or an instruction set this CPU lacks)."""

    code = "unsupported"


class FileError(Error, OSError):
    """A file could not be read or written (read_tensor, write_tensor, check)."""

    code = "io"


class BackendError(Error, RuntimeError):
    """A device or runtime call failed (D3D12, DirectML)."""

    code = "backend"


class InternalError(Error, RuntimeError):
    """A bug in dmlbits; please report it."""

    code = "internal"


class MismatchError(Error, AssertionError):
    """A result differs from its expected value (dmlbits.testing.assert_bits_equal)."""

    code = "mismatch"


_BY_CODE = {cls.code: cls for cls in (UsageError, InvalidInputError, UnsupportedError, FileError,
                                       BackendError, InternalError, MismatchError)}


def error_for_code(code):
    """The class raised for the library's error category ``code``."""
    return _BY_CODE.get(code, Error)


# Shown and pickled as dmlbits.UsageError etc., the names users import.
for _cls in (Error, *_BY_CODE.values()):
    _cls.__module__ = "dmlbits"
del _cls
