"""Errors a JobSet reconcile returns that do not come from the API server.

controller-runtime retries *every* error a reconcile returns with per-key exponential back-off.
:class:`fakecluster.runtime.Controller` retries :class:`~fakecluster.api.errors.ApiError`, so the
controller-side errors of upstream (an unparsable ``restart-attempt`` label, a disabled feature gate, a
joined Job-creation error, a recovered nil-pointer panic) subclass it to get the same retry behaviour.
"""

from __future__ import annotations

from fakecluster.api.errors import ApiError

NIL_POINTER_PANIC = "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"
"""What controller-runtime (``RecoverPanic`` defaults to true) turns a nil dereference into."""


class ReconcileError(ApiError):
    """An error returned by the reconcile itself; the message is upstream's ``err.Error()``."""

    def __init__(self, message: str) -> None:
        super().__init__(500, "ReconcileError", message)


def join_errors(messages: list[str]) -> str:
    """``errors.Join``: the messages separated by newlines."""
    return "\n".join(messages)
