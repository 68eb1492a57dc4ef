"""The exceptions raised by `paicli.llm`, a subtree of `paicli.errors.PaicliError`.

Every failure of a model call is an `LlmError` whose message is one line naming the provider
and base URL, fit to show the user as it is (it never contains the API key):

    LlmError
    ├── AuthenticationFailed   401/403: the key is missing, wrong or not allowed
    ├── ModelNotFound          the server does not know the model (404, model_not_found)
    ├── EndpointUnreachable    connection refused, name not resolved, timed out
    ├── RequestRejected        another 4xx, with the server's message
    └── ServiceUnavailable     429 or 5xx still failing after the retries, or the stream broke

The openai SDK's exceptions are translated in `paicli.llm.client` and chained (`from exc`).
Caller cancellation stays a plain `asyncio.CancelledError`.
"""

from __future__ import annotations

from paicli.errors import PaicliError

__all__ = [
    "AuthenticationFailed",
    "EndpointUnreachable",
    "LlmError",
    "ModelNotFound",
    "RequestRejected",
    "ServiceUnavailable",
]


class LlmError(PaicliError):
    """A model call failed; `str(error)` is one line for the user."""


class AuthenticationFailed(LlmError):
    """The server refused the key (401/403)."""


class ModelNotFound(LlmError):
    """The server does not serve the requested model."""


class EndpointUnreachable(LlmError):
    """No HTTP answer: connection refused, name not resolved, timed out."""


class RequestRejected(LlmError):
    """The server rejected the request (a 4xx other than auth, unknown model, rate limit)."""


class ServiceUnavailable(LlmError):
    """Rate limited or failing (429/5xx) after every retry, or the stream broke midway."""
