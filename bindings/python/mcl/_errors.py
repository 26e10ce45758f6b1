"""The exceptions mcl raises: one class per result code of the C API."""

import builtins


class Error(Exception):
    """An mcl call failed. ``code`` is the C API's result code (an int, as
    in mcl.h), ``code_name`` its name, ``message`` the text that names the
    argument, rank, peer or link at fault."""

    code = -1
    code_name = "mclError"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return f"{self.code_name}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.message, self.code))


class SystemCallError(Error):
    """A system call or the OS failed (mclSystemError)."""
    code, code_name = 2, "mclSystemError"


class InternalError(Error):
    """A bug in mcl (mclInternalError)."""
    code, code_name = 3, "mclInternalError"


class InvalidArgumentError(Error, ValueError):
    """A bad argument (mclInvalidArgument). The communicator stays usable."""
    code, code_name = 4, "mclInvalidArgument"


class InvalidUsageError(Error):
    """Calls in the wrong order, a closed communicator, or ranks that
    disagree (mclInvalidUsage)."""
    code, code_name = 5, "mclInvalidUsage"


class RemoteError(Error):
    """A peer failed, left or sent something wrong, or the communicator was
    aborted (mclRemoteError)."""
    code, code_name = 6, "mclRemoteError"


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 (mcl.TimeoutError)
    """A peer stopped answering within the communicator's timeout
    (mclTimeout)."""
    code, code_name = 8, "mclTimeout"


BY_CODE = {cls.code: cls for cls in (SystemCallError, InternalError,
                                     InvalidArgumentError, InvalidUsageError,
                                     RemoteError, TimeoutError)}

# Tracebacks name them as the package exports them: mcl.RemoteError.
for _cls in (Error, *BY_CODE.values()):
    _cls.__module__ = "mcl"
