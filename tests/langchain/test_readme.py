"""The README's LangChain example runs as printed, from the repository's root."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO
from tests.imports import fresh_python

pytestmark = pytest.mark.real


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Using MCP tools from LangChain", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_readme_langchain_example_prints_what_it_says() -> None:
    printed = fresh_python(readme_example(), REPO, timeout=120)
    assert printed.splitlines() == ["milk", "eggs", "coffee", "Added note 'idea'."]
