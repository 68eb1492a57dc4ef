"""The OAuth checks that need no network: challenges, the URL rule, the browser's return."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paicli.mcp.auth import OAuthError
from paicli.mcp.auth._challenge import parse_challenges
from paicli.mcp.auth._discovery import ServerMetadata, resource_matches
from paicli.mcp.auth._grant import Attempt, authorization_code, begin
from paicli.mcp.auth._guard import UrlPolicy
from paicli.mcp.auth._store import ClientInfo

ISSUER = "https://as.example.com"


def test_a_bearer_challenge_gives_its_parameters_with_quotes_and_commas() -> None:
    header = (
        'DPoP algs="ES256", Bearer error="insufficient_scope", '
        'scope="files:read files:write", error_description="a, \\"quoted\\" reason", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"'
    )
    dpop, bearer = parse_challenges(header)
    assert dpop.scheme == "dpop" and dpop.params == {"algs": "ES256"}
    assert bearer.scopes == ("files:read", "files:write")
    assert bearer.params["error_description"] == 'a, "quoted" reason'
    assert bearer.params["resource_metadata"].endswith("/oauth-protected-resource")


@pytest.mark.parametrize("header", [None, "", "=", '"', ",,,", "Bearer ===", 'Bearer a="'])
def test_a_malformed_challenge_never_raises(header: str | None) -> None:
    for challenge in parse_challenges(header):
        assert challenge.scheme


@pytest.mark.parametrize(
    ("server", "url", "allowed"),
    [
        ("https://mcp.example.com/mcp", "https://auth.example.com/x", True),
        ("https://mcp.example.com/mcp", "http://auth.example.com/x", False),
        ("https://mcp.example.com/mcp", "http://localhost:8080/x", True),
        ("https://mcp.example.com/mcp", "https://127.0.0.1/x", False),
        ("https://mcp.example.com/mcp", "https://169.254.169.254/x", False),
        ("https://mcp.example.com/mcp", "https://[::ffff:10.0.0.1]/x", False),
        ("https://mcp.example.com/mcp", "https://[fd00::1]/x", False),
        ("https://10.1.2.3/mcp", "https://10.9.9.9/token", True),
        ("https://10.1.2.3/mcp", "https://169.254.169.254/token", False),
        ("http://127.0.0.1:3000/mcp", "http://127.0.0.1:4000/token", True),
        ("https://mcp.example.com/mcp", "javascript:alert(1)", False),
        ("https://mcp.example.com/mcp", "file:///etc/passwd", False),
        ("https://mcp.example.com/mcp", "https://a.example.com/x#frag", False),
        ("https://mcp.example.com/mcp", "https://a.example.com:0/x", False),
        ("https://mcp.example.com/mcp", "https://a.example.com:99999/x", False),
    ],
)
def test_the_url_rule(server: str, url: str, allowed: bool) -> None:
    policy = UrlPolicy(server)
    if allowed:
        assert policy.check(url, "the endpoint") == url
    else:
        with pytest.raises(OAuthError, match="the endpoint"):
            policy.check(url, "the endpoint")


@pytest.mark.parametrize(
    ("resource", "matches"),
    [
        ("https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", True),
        ("https://mcp.example.com/", True),
        ("https://MCP.example.com:443/mcp", True),
        ("https://mcp.example.com/mcp2", False),
        ("https://mcp.example.com/other", False),
        ("http://mcp.example.com/mcp", False),
        ("https://evil.example.com/mcp", False),
        ("https://mcp.example.com/mcp#x", False),
    ],
)
def test_a_protected_resource_must_designate_the_server(resource: str, matches: bool) -> None:
    assert resource_matches(resource, "https://mcp.example.com/mcp") is matches


def attempt(iss_supported: bool = True) -> Attempt:
    meta = ServerMetadata(
        ISSUER,
        f"{ISSUER}/authorize?tenant=7",
        f"{ISSUER}/token",
        iss_parameter_supported=iss_supported,
    )
    client = ClientInfo("client id/1")
    return begin(meta, client, "http://127.0.0.1:5555/cb", "https://mcp.example.com/mcp", "a b")


def test_the_authorization_url_keeps_the_endpoint_query_and_encodes_every_value() -> None:
    url = attempt().url
    assert url.startswith(f"{ISSUER}/authorize?tenant=7&response_type=code&")
    assert "client_id=client%20id%2F1" in url and "scope=a%20b" in url


@pytest.mark.parametrize(
    ("query", "complaint"),
    [
        ("code=c&state=WRONG&iss=" + ISSUER, "wrong state"),
        ("code=c&state={state}", "lacks the 'iss'"),
        ("code=c&state={state}&iss=https://evil.example.com", "possible mix-up"),
        ("code=c&state={state}&iss=" + ISSUER + "/", "possible mix-up"),
        ("code=c&state={state}&iss=HTTPS://as.example.com", "possible mix-up"),
        ("error=access_denied&state={state}&iss=https://evil.example", "possible mix-up"),
        ("error=access_denied&state={state}&iss=" + ISSUER, "access_denied"),
        ("state={state}&iss=" + ISSUER, "no code"),
        ("code=a&code=b&state={state}&iss=" + ISSUER, "repeats 'code'"),
    ],
)
def test_the_browsers_return_is_checked_before_the_code_is_used(query: str, complaint: str) -> None:
    pending = attempt()
    callback = "http://127.0.0.1:5555/cb?" + query.replace("{state}", pending.state)
    with pytest.raises(OAuthError, match=complaint):
        authorization_code(pending, callback, "srv")


def test_an_issuer_not_advertised_may_be_absent_but_must_match_when_present() -> None:
    pending = attempt(iss_supported=False)
    base = f"http://127.0.0.1:5555/cb?code=c&state={pending.state}"
    assert authorization_code(pending, base, "srv") == "c"
    assert authorization_code(pending, f"{base}&iss={ISSUER}", "srv") == "c"
    with pytest.raises(OAuthError, match="mix-up"):
        authorization_code(pending, f"{base}&iss=https://evil.example", "srv")


def test_the_oauth_surface_is_a_decision() -> None:
    import paicli.mcp.auth  # noqa: PLC0415

    assert sorted(paicli.mcp.auth.__all__) == [
        "LoginRequired",
        "MemoryTokenStore",
        "OAuth",
        "OAuthError",
        "Redirect",
        "TokenStore",
    ]


@pytest.mark.real
def test_configuring_oauth_imports_neither_aiohttp_nor_the_flow() -> None:
    script = (
        "import sys, paicli.mcp, paicli.mcp.auth\n"
        "paicli.mcp.HttpServer('https://x.example/mcp', auth=paicli.mcp.auth.OAuth())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('aiohttp', 'paicli.mcp.auth._a'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
