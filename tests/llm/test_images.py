"""Images for the model: checked by their bytes, capped, made into image parts; whether a
model takes them (`images` in config.toml, the preset's default)."""

from __future__ import annotations

import base64

import pytest

from paicli.agent.context import estimate_tokens
from paicli.llm.images import MAX_IMAGE_BYTES, ImageProblem, base64_image_part, image_part, sniff
from paicli.llm.messages import UserMessage, content_text
from paicli.llm.settings import resolve_settings
from paicli.user_config import UserConfig

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a...", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"<svg xmlns=...>", None),
        (b"RIFF\x00\x00\x00\x00WAVEfmt ", None),
    ],
)
def test_the_bytes_say_what_an_image_is(data: bytes, kind: str | None) -> None:
    assert sniff(data) == kind


def test_an_image_part_is_a_data_url_of_the_type_its_bytes_say() -> None:
    part = image_part(PNG, "image/png")
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert part == {"type": "image_url", "image_url": {"url": url}}


@pytest.mark.parametrize(
    ("data", "claimed", "why"),
    [
        (b"#!/bin/sh\nrm -rf /\n", "image/png", "not a PNG, JPEG, GIF or WebP image"),
        (b"GIF89a", "image/png", "named as image/png but its bytes are image/gif"),
        (PNG + b"\x00" * MAX_IMAGE_BYTES, None, "over the 5 MiB limit"),
    ],
)
def test_what_is_not_the_image_it_claims_is_refused(
    data: bytes, claimed: str | None, why: str
) -> None:
    with pytest.raises(ImageProblem, match=why):
        image_part(data, claimed)


def test_a_server_image_must_be_valid_base64() -> None:
    with pytest.raises(ImageProblem, match="not valid base64"):
        base64_image_part("iVBOR w0!!", "image/png")
    assert base64_image_part(base64.b64encode(PNG).decode(), "image/png")["type"] == "image_url"


def test_an_image_counts_as_what_the_model_reads_not_its_base64() -> None:
    huge = image_part(PNG + b"\x00" * 3_000_000)
    message = UserMessage(role="user", content=[{"type": "text", "text": "look"}, huge])
    assert estimate_tokens([message]) < 2_000
    assert content_text(message["content"]) == "look\n\n[image]"


def test_whether_the_model_takes_images_comes_from_the_config_or_the_preset() -> None:
    def images(environ: dict[str, str], **values: object) -> tuple[bool, list[str]]:
        config = UserConfig(values=dict(values))
        settings, problems = resolve_settings(flags={}, environ=environ, user_config=config)
        return settings.images, problems

    assert images({"OPENAI_API_KEY": "k"}) == (True, [])  # gpt-4.1 takes images
    assert images({"DEEPSEEK_API_KEY": "k"}) == (False, [])
    assert images({"DEEPSEEK_API_KEY": "k"}, images=True) == (True, [])
    assert images({"OPENAI_API_KEY": "k"}, images=False) == (False, [])
    taken, problems = images({"DEEPSEEK_API_KEY": "k"}, images="yes")
    assert not taken and problems == ["config.toml: images must be true or false"]
