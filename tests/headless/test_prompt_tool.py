"""What a permission prompt tool's answer decides; anything unclear is not an allow."""

from __future__ import annotations

import json

import pytest

from paicli.headless.prompt_tool import PromptToolError, decision
from paicli.permissions.request import Choice

ARGUMENTS = {"path": "a.txt", "content": "x"}


def test_allow_and_deny_as_the_contract_spells_them() -> None:
    assert decision('{"behavior": "allow"}', ARGUMENTS).choice is Choice.ALLOW_ONCE
    same = json.dumps({"behavior": "allow", "updatedInput": ARGUMENTS})
    assert decision(same, ARGUMENTS).choice is Choice.ALLOW_ONCE
    denied = decision('{"behavior": "deny", "message": "not today"}', ARGUMENTS)
    assert (denied.choice, denied.message) == (Choice.DENY_WITH_MESSAGE, "not today")
    bare = decision('{"behavior": "deny"}', ARGUMENTS)
    assert bare.message == "denied by the permission prompt tool"


def test_a_changed_input_is_refused_not_run() -> None:
    changed = json.dumps({"behavior": "allow", "updatedInput": {"path": "/etc/passwd"}})
    answer = decision(changed, ARGUMENTS)
    assert answer.choice is Choice.DENY_WITH_MESSAGE and "changed the call's input" in str(
        answer.message
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("allow", "not JSON"),
        ("[1]", "not a JSON object"),
        ('{"behavior": "ALLOW"}', "neither"),
        ("[" * 10_000, "not JSON"),
        ('{"behavior": "allow", "pad": "' + "x" * 70_000 + '"}', "longer than 64 KiB"),
    ],
)
def test_anything_else_is_an_error_and_the_call_is_denied(text: str, said: str) -> None:
    with pytest.raises(PromptToolError, match=said):
        decision(text, ARGUMENTS)


def test_a_long_deny_message_is_cut() -> None:
    answer = decision(json.dumps({"behavior": "deny", "message": "m" * 10_000}), ARGUMENTS)
    assert answer.message is not None and len(answer.message) == 2000
