"""Secrets never leave paicli unredacted: known values, secret keys and credential shapes."""

from __future__ import annotations

import pytest

from paicli.redact import REDACTED, Redactor, environment_secrets, is_secret_key

SHAPES = [
    "sk-proj-abcdefghijklmnopqrstuvwx1234",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "sk-abcdefghijklmnopqrstuvwx",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "gho_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "xoxb-1234567890-abcdefghijkl",
    "xoxp-1234567890-abcdefghijkl",
    "xoxa-1234567890-abcdefghijkl",
    "AKIAIOSFODNN7EXAMPLE",
    "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "glpat-xK9aB3cD5eF7gH1iJ2kL",
    "gldt-xK9aB3cD5eF7gH1iJ2kLmN",
    "xoxe-1-abcdefghijklmnop",
    "xapp-1-A0123BCDE45-1234567890123-abcdef0123456789",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "rk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "ya29.a0AfH6SMBx3kQ-abcdefghijklmnopqrstuvwxyz",
    "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",
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
]


@pytest.mark.parametrize("secret", SHAPES)
def test_credential_shapes_in_free_text_are_redacted(secret: str) -> None:
    text = f"here is the key {secret} in a sentence"
    assert Redactor().redact_text(text) == f"here is the key {REDACTED} in a sentence"


def test_known_secret_values_are_redacted_wherever_they_appear() -> None:
    redactor = Redactor(["hunter2-very-secret", "plainvalue42"])
    value = {"output": ["log: hunter2-very-secret used", {"deep": "x plainvalue42 y"}]}
    assert redactor.redact(value) == {
        "output": [f"log: {REDACTED} used", {"deep": f"x {REDACTED} y"}]
    }


def test_short_known_values_are_ignored_so_ordinary_text_survives() -> None:
    redactor = Redactor(["1", "true", "abc12"])
    assert redactor.redact_text("true that abc12 is 1") == "true that abc12 is 1"


def test_a_longer_secret_containing_a_shorter_one_is_replaced_whole() -> None:
    redactor = Redactor(["secret", "secret-and-more"])
    assert redactor.redact_text("x secret-and-more y") == f"x {REDACTED} y"


@pytest.mark.parametrize(
    "key",
    [
        "Authorization",
        "proxy-authorization",
        "Cookie",
        "set-cookie",
        "X-Api-Key",
        "api_key",
        "apikey",
        "API-KEY",
        "token",
        "access_token",
        "refresh_token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "private_key",
        "GITHUB_TOKEN",
        "aws_secret",
        "OPENAI_API_KEY",
        "db_password",
    ],
)
def test_values_under_secret_keys_are_redacted(key: str) -> None:
    assert is_secret_key(key)
    assert Redactor().redact({"config": {key: "value-1"}}) == {"config": {key: REDACTED}}


@pytest.mark.parametrize("key", ["path", "tokens_used", "keyboard", "monkey", "content"])
def test_ordinary_keys_are_kept(key: str) -> None:
    assert not is_secret_key(key)
    assert Redactor().redact({key: "value"}) == {key: "value"}


def test_empty_and_boolean_secret_values_keep_their_meaning() -> None:
    value = {"token": None, "password": False, "secret": ""}
    assert Redactor().redact(value) == value


def test_redaction_is_deep_and_returns_a_new_structure() -> None:
    original = {
        "servers": [
            {"env": {"API_KEY": "abc123456"}, "headers": {"Authorization": "Bearer xyz123456"}},
            ("tuple item", "Bearer abcdef123456"),
        ],
        "count": 3,
        "ok": True,
    }
    redacted = Redactor().redact(original)
    assert redacted == {
        "servers": [
            {"env": {"API_KEY": REDACTED}, "headers": {"Authorization": REDACTED}},
            ["tuple item", f"Bearer {REDACTED}"],
        ],
        "count": 3,
        "ok": True,
    }
    assert original["servers"][0]["env"]["API_KEY"] == "abc123456"  # type: ignore[index]


def test_bearer_and_basic_credentials_in_strings_are_redacted() -> None:
    redactor = Redactor()
    assert (
        redactor.redact_text("curl -H 'X: Bearer abc.def-123'") == f"curl -H 'X: Bearer {REDACTED}'"
    )
    assert redactor.redact_text("use Basic dXNlcjpwYXNz here") == f"use Basic {REDACTED} here"


def test_prose_about_bearer_and_basic_is_left_alone() -> None:
    text = "Basic usage: Bearer tokens are explained in the Basic configuration chapter."
    assert Redactor().redact_text(text) == text


def test_authorization_headers_in_text_lose_their_whole_value() -> None:
    text = 'Authorization: Token abc def\ncookie: a=1; b=2\n{"Authorization": "Digest x y"}'
    assert Redactor().redact_text(text) == (
        f'Authorization: {REDACTED}\ncookie: {REDACTED}\n{{"Authorization": "{REDACTED}"}}'
    )


def test_secret_pairs_in_urls_query_strings_and_env_files_are_redacted() -> None:
    redactor = Redactor()
    assert redactor.redact_text("https://api.example.com/x?access_token=abc123&page=2") == (
        f"https://api.example.com/x?access_token={REDACTED}&page=2"
    )
    assert redactor.redact_text("password=hunter2 user=bob") == f"password={REDACTED} user=bob"
    assert redactor.redact_text("token: abcdef") == f"token: {REDACTED}"
    assert redactor.redact_text('DB_PASSWORD="s3 cr3t"\nHOME=/x') == (
        f'DB_PASSWORD="{REDACTED}"\nHOME=/x'
    )
    assert redactor.redact_text('{"client_secret": "abc"}') == f'{{"client_secret": "{REDACTED}"}}'


def test_passwords_in_url_userinfo_are_redacted() -> None:
    text = "clone https://bob:hunter2@example.com/repo.git and postgres://u:p%40ss@db:5432/x"
    assert Redactor().redact_text(text) == (
        f"clone https://bob:{REDACTED}@example.com/repo.git and postgres://u:{REDACTED}@db:5432/x"
    )


def test_with_secrets_adds_values_learned_later() -> None:
    redactor = Redactor(["first-secret"]).with_secrets(["second-secret"])
    assert redactor.redact_text("first-secret second-secret") == f"{REDACTED} {REDACTED}"


def test_secrets_in_json_escaped_inside_a_string_are_redacted() -> None:
    text = r'{"arguments": "{\"api_key\": \"abcDEF123456\", \"Authorization\": \"Bearer xyz\"}"}'
    assert Redactor().redact_text(text) == (
        rf'{{"arguments": "{{\"api_key\": \"{REDACTED}\", \"Authorization\": \"{REDACTED}\"}}"}}'
    )


def test_signatures_and_keys_in_query_strings_are_redacted() -> None:
    text = "GET https://b.s3.example.com/o?X-Amz-Signature=deadbeef1234&sig=AbC123%2F&key=AIzaX&n=2"
    assert Redactor().redact_text(text) == (
        f"GET https://b.s3.example.com/o?X-Amz-Signature={REDACTED}&sig={REDACTED}"
        f"&key={REDACTED}&n=2"
    )


def test_a_key_outside_a_query_string_is_not_a_secret() -> None:
    assert Redactor().redact({"key": "sort-order"}) == {"key": "sort-order"}
    assert Redactor().redact_text("cache key=users:42") == "cache key=users:42"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("curl -u bob:hunter2pass https://x", f"curl -u bob:{REDACTED} https://x"),
        ("curl -s -ubob:hunter2pass https://x", f"curl -s -ubob:{REDACTED} https://x"),
        ("curl --user 'bob:hunter2pass' https://x", f"curl --user 'bob:{REDACTED}' https://x"),
    ],
)
def test_curl_user_passwords_are_redacted_and_the_user_kept(command: str, expected: str) -> None:
    assert Redactor().redact_text(command) == expected


def test_pem_private_key_blocks_are_redacted_whole() -> None:
    text = (
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU=\n"
        "-----END OPENSSH PRIVATE KEY-----\ndone"
    )
    assert Redactor().redact_text(text) == (
        f"key:\n-----BEGIN OPENSSH PRIVATE KEY-----{REDACTED}"
        "-----END OPENSSH PRIVATE KEY-----\ndone"
    )


def test_a_private_key_cut_off_before_its_end_line_is_redacted_to_the_end() -> None:
    text = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    assert Redactor().redact_text(text) == f"-----BEGIN PRIVATE KEY-----{REDACTED}"


def test_header_lists_redact_the_value_of_secret_names() -> None:
    value = [{"name": "Authorization", "value": "tok_abc123"}, {"name": "Accept", "value": "x"}]
    assert Redactor().redact({"headers": value}) == {
        "headers": [{"name": "Authorization", "value": REDACTED}, {"name": "Accept", "value": "x"}]
    }
    text = '[{"name": "X-Api-Key", "value": "tok_abc123"}, {"name": "Accept", "value": "json"}]'
    assert Redactor().redact_text(text) == (
        f'[{{"name": "X-Api-Key", "value": "{REDACTED}"}}, {{"name": "Accept", "value": "json"}}]'
    )


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "curl -H Authorization: Bearer abc123XYZ https://x.example/y; rm -rf build",
            f"curl -H Authorization: Bearer {REDACTED} https://x.example/y; rm -rf build",
        ),
        (
            'curl -H "Authorization: Bearer abc123XYZ" https://x.example/y; rm -rf build',
            f'curl -H "Authorization: {REDACTED}" https://x.example/y; rm -rf build',
        ),
        (
            "curl -H 'Cookie: a=1; b=2' https://x.example && make",
            f"curl -H 'Cookie: {REDACTED}' https://x.example && make",
        ),
        (
            "http GET x.example Authorization:abc123XYZ page==2",
            f"http GET x.example Authorization:{REDACTED} page==2",
        ),
    ],
)
def test_a_header_inside_a_command_line_keeps_the_rest_of_the_command(
    command: str, expected: str
) -> None:
    assert Redactor().redact_text(command) == expected


AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    "text",
    [
        # `aws configure list`, a CSV export of new keys, an env dump under an innocent name
        f"access_key     ****************MPLE shared-credentials-file\n{AWS_ID} {AWS_SECRET}",
        f"User name,Access key ID,Secret access key\ndeploy,{AWS_ID},{AWS_SECRET}",
        f"ID={AWS_ID}\nVALUE={AWS_SECRET}\n",
        f'{{"AccessKeyId": "{AWS_ID}", "SecretAccessKey": "{AWS_SECRET}"}}',
    ],
)
def test_an_aws_secret_access_key_next_to_its_key_id_is_redacted(text: str) -> None:
    shown = Redactor().redact_text(text)
    assert AWS_SECRET not in shown
    assert AWS_ID not in shown
    assert "wJalr" not in shown


def test_forty_base64_characters_far_from_any_key_id_stay() -> None:
    # A commit hash, a base64 blob in a file the model must edit: no AWS key id nearby.
    digest = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    text = f"commit {digest}\nblob {AWS_SECRET}"
    assert Redactor().redact_text(text) == text


def test_a_hex_digest_next_to_a_key_id_stays() -> None:
    digest = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert digest in Redactor().redact_text(f"{AWS_ID} {digest}")


def test_redact_known_replaces_only_the_known_values() -> None:
    redactor = Redactor(["my-model-key-123"])
    text = "key my-model-key-123 and ghp_abcdefghijklmnopqrstuvwxyz0123456789 and api_key=x1"
    assert redactor.redact_known(text) == (
        f"key {REDACTED} and ghp_abcdefghijklmnopqrstuvwxyz0123456789 and api_key=x1"
    )


def test_a_learned_secret_is_redacted_by_every_user_of_the_redactor() -> None:
    redactor = Redactor()
    redactor.learn(["late-server-header-value"])
    assert redactor.redact_known("x late-server-header-value") == f"x {REDACTED}"


def test_environment_secrets_are_the_long_values_under_secret_names() -> None:
    environ = {
        "GITHUB_TOKEN": "ghp_realtokenvalue",
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "SKIP_TOKEN": "1",
        "API_KEY": "dummy",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "PWD": "/home/someone/project",
        "XDG_SESSION_TYPE": "wayland-session",
    }
    assert sorted(environment_secrets(environ)) == sorted(["ghp_realtokenvalue", AWS_SECRET])


def test_environment_secrets_follow_the_one_secret_name_rule() -> None:
    """Names the trust prompt flags (`servers/_secret_names.py`) are secrets here too; what the
    shell, the desktop and git keep under such names (sockets, session ids, paths, author
    names) is not."""
    secrets = {
        "PGPASSWORD": "pg-secret-1",
        "DB_PASS": "db-secret-2",
        "SENTRY_DSN": "https://4f1c0a@o1.ingest.example.io/77",
        "DATABASE_URL": "postgres://app:pw-secret-3@db/app",
        "NPM_CONFIG__AUTH": "bnBtOnNlY3JldA==",
        "AWS_SESSION_TOKEN": "session-token-4",
        "SESSION_SECRET": "cookie-signing-5",
    }
    ordinary = {
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1234",
        "XDG_SESSION_TYPE": "wayland-session",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
        "TERM_SESSION_ID": "w0t0p0:6E2B1C1A",
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "XAUTHORITY": "/run/user/1000/gdm/Xauthority",
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        "GIT_ASKPASS": "/usr/lib/code/askpass.sh",
        "DB_PASSWORD_FILE": "/run/secrets/db_password",
    }
    assert sorted(environment_secrets({**secrets, **ordinary})) == sorted(secrets.values())


# One sample per net (and per shape): `redact_quickly` must catch whatever `redact` catches.
NET_SAMPLES: list[object] = [
    *(f"see {s} here" for s in SHAPES),
    {"Authorization": "Bearer abcdef123456"},
    {"headers": [{"name": "X-Api-Key", "value": "v4lue-123456"}]},
    {"GITHUB_TOKEN": "abc123456"},
    {"client_secret": "zzzzzzzz"},
    "Cookie: session=abcdef123456",
    "curl -u admin:hunter22 http://h",
    "https://user:pa55word@example.com/x",
    "https://h/x?sig=abcdef&key=123456",
    "DB_PASSWORD=hunter22",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    "Basic dXNlcjpwYXNzd29yZA==",
    {"env": 'the value known"\\secret leaked'},
    "the value known-secret-42 leaked",
    "glpat-abcdefghijklmnopqrst12",
    "xoxe-1234567890-abcdefghijkl",
    "xapp-1-abcdefghijkl-1234",
    "hooks.slack.com/services/T000/B000/abcdefghijklmnopqrstuvwx",
    "rk_live_abcdefghijklmnop1234",
    "sk_test_abcdefghijklmnop1234",
    "whsec_abcdefghijklmnop1234",
    "ya29.abcdefghijklmnopqrstuvwx",
    "GOCSPX-abcdefghijklmnopqrstuvwx",
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "pypi-" + "a" * 50,
    "hf_abcdefghijklmnopqrstuvwxyz01234",
    "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
]


@pytest.mark.parametrize("value", NET_SAMPLES)
def test_the_quick_path_redacts_whatever_the_full_redaction_does(value: object) -> None:
    redactor = Redactor(['known"\\secret', "known-secret-42"])
    full = redactor.redact(value)
    assert full != value
    assert redactor.redact_quickly(value) == full


def test_the_quick_path_hands_back_plain_messages_uncopied() -> None:
    message = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}}
    assert Redactor(["known-secret-42"]).redact_quickly(message) is message


def test_known_values_are_redacted_from_a_request_and_nothing_else_is_touched() -> None:
    redactor = Redactor(["tok-123456789", 'quote"and\\slash'])
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "Use token tok-123456789."},
        {"role": "user", "content": 'say quote"and\\slash, api_key=abcdefgh'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"arguments": '{"t": "tok-123456789"}'}}],
        },
    ]
    redacted = redactor.redact_known_in(messages)
    assert redacted == [
        {"role": "system", "content": f"Use token {REDACTED}."},
        {"role": "user", "content": f"say {REDACTED}, api_key=abcdefgh"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"arguments": f'{{"t": "{REDACTED}"}}'}}],
        },
    ]
    assert messages[0]["content"] == "Use token tok-123456789."  # a copy was redacted
    plain = [{"role": "user", "content": "nothing secret here"}]
    assert redactor.redact_known_in(plain) is plain
