"""Images for the model: bytes checked by their magic numbers (never by the name they came
with) and made into OpenAI chat image parts (`data:` URLs).

Only the formats every multimodal OpenAI-compatible endpoint takes are accepted: PNG, JPEG,
GIF and WebP, up to `MAX_IMAGE_BYTES`.
"""

from __future__ import annotations

import base64

from paicli.errors import PaicliError
from paicli.llm.messages import ImagePart

__all__ = [
    "IMAGE_SUFFIXES",
    "MAX_IMAGE_BYTES",
    "ImageProblem",
    "base64_image_part",
    "image_part",
    "sniff",
]

# Providers refuse larger images (OpenAI and Anthropic take about 5 MB per image).
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MIME_TYPES = frozenset(IMAGE_SUFFIXES.values())


class ImageProblem(PaicliError, ValueError):
    """The bytes are not an image the model can take; the message says why (never leaves
    the callers, which make it a line for the user)."""


def sniff(data: bytes) -> str | None:
    """The image type `data` starts with, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_part(data: bytes, claimed: str | None = None) -> ImagePart:
    """`data` as an image part; ImageProblem when it is too large, not an image, or not
    the `claimed` type (a file's extension, a server's mimeType)."""
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageProblem(
            f"the image is {len(data):,} bytes, over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB "
            "limit"
        )
    found = sniff(data)
    if found is None:
        named = f" (its name says {claimed})" if claimed else ""
        raise ImageProblem(f"it is not a PNG, JPEG, GIF or WebP image{named}")
    if claimed is not None and claimed != found:
        raise ImageProblem(f"it is named as {claimed} but its bytes are {found}")
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{found};base64,{encoded}"}}


def base64_image_part(data: str, mime_type: str | None) -> ImagePart:
    """An MCP `ImageContent` (base64 text and a mimeType) as an image part, checked as
    `image_part` checks bytes."""
    if len(data) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise ImageProblem(f"the image is over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB limit")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as exc:
        raise ImageProblem("its data is not valid base64") from exc
    return image_part(raw, mime_type if mime_type in MIME_TYPES else None)
