"""OAuth for remote MCP servers (the authorization part of the specification).

    from paicli.mcp.auth import OAuth
    server = HttpServer("https://mcp.example.com/mcp", auth=OAuth(redirect=my_browser_step))

With `auth`, a 401 from the server starts discovery, client registration and the
authorization code flow (PKCE, state and issuer checks); tokens are refreshed before they
expire and sent only to that server. Tokens and registrations persist in the `TokenStore`
given (in memory by default). Importing this package does not import aiohttp: the flow
itself is loaded on a server's first challenge.
"""

from ..errors import LoginRequired, OAuthError
from ._config import OAuth, Redirect
from ._store import MemoryTokenStore, TokenStore

__all__ = ["LoginRequired", "MemoryTokenStore", "OAuth", "OAuthError", "Redirect", "TokenStore"]
