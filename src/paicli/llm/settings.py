"""Which model paicli talks to: the settings resolved from flags, environment, the user's
config file and the provider presets.

Resolution happens once at the edge (`resolve_settings`) into a frozen `ModelSettings`; the
REPL's `/model NAME` derives new settings with `switch_model`. The API key is held in a
`repr=False` field and never appears in `repr`, `describe()` or any message built here.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from paicli.llm.presets import PRESETS, Preset
from paicli.user_config import UserConfig

# A server reached by `--base-url` alone (a local vLLM, LM Studio, a proxy): we cannot know
# its window, so assume a conservative one; `context_window` in config.toml overrides it.
DEFAULT_CONTEXT_WINDOW = 32_768


FLAG_NAMES = {"provider": "--provider", "model": "--model", "base_url": "--base-url"}
ENV_NAMES = {
    "provider": "PAICLI_PROVIDER",
    "model": "PAICLI_MODEL",
    "base_url": "PAICLI_BASE_URL",
    "api_key": "PAICLI_API_KEY",
}
FILE_KEYS = ("provider", "model", "base_url", "api_key")


@dataclass(frozen=True)
class ModelSettings:
    """The model paicli talks to. `notes` say where each value came from."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    context_window: int = DEFAULT_CONTEXT_WINDOW
    notes: tuple[str, ...] = ()
    # Whether the model takes images (`images = true|false` in config.toml; else the preset's
    # default model's, else no).
    images: bool = False

    @property
    def preset(self) -> Preset | None:
        return PRESETS.get(self.provider) if self.provider else None

    @property
    def configured(self) -> bool:
        """A base URL and a model are known, and a key if the preset needs one (a plain
        base URL, like a local vLLM, needs none)."""
        if not self.base_url or not self.model:
            return False
        preset = self.preset
        return not (preset is not None and preset.needs_key and not self.api_key)

    @property
    def key_hint(self) -> str:
        """Where the user puts the key, for error messages: "DEEPSEEK_API_KEY"."""
        preset = self.preset
        return preset.key_env[0] if preset and preset.key_env else ENV_NAMES["api_key"]

    def describe(self) -> str:
        """ "deepseek · deepseek-chat" (never the key)."""
        where = self.provider or (display_url(self.base_url) if self.base_url else "no provider")
        return f"{where} · {self.model or 'no model'}"

    def why_not_configured(self) -> str:
        """One line telling the user how to configure a model ("" when configured)."""
        if self.configured:
            return ""
        preset = self.preset
        if self.provider and preset is None and not self.base_url:
            known = ", ".join(PRESETS)
            return (
                f"Unknown provider {self.provider!r}: use one of {known}, "
                "or give its --base-url; see paicli --help"
            )
        if preset is not None and not self.api_key:
            keys = " or ".join(preset.key_env)
            return (
                f"No API key for {preset.name}: set {keys} (or PAICLI_API_KEY, or api_key "
                "in ~/.paicli/config.toml); see paicli --help"
            )
        if self.base_url and not self.model:
            return (
                f"No model named for {self.base_url}: pass --model NAME or set PAICLI_MODEL; "
                "see paicli --help"
            )
        return (
            "No model configured: set a provider's key (e.g. DEEPSEEK_API_KEY), "
            "or use --provider ollama or --base-url URL --model NAME; see paicli --help"
        )


@dataclass(frozen=True)
class _Level:
    """The values one source (flags, environment, file) names, and how to cite it."""

    kind: str  # "flags", "env" or "file"
    values: dict[str, str]
    cite: Mapping[str, str]  # field -> "--model", "PAICLI_MODEL", "config.toml"

    def applies_to(self, provider: str | None) -> bool:
        """A level's model, URL and key serve the provider it names, or any if it names
        none: `provider = "deepseek"` with `model = "deepseek-reasoner"` in the file must not
        leak into `--provider glm`."""
        named = self.values.get("provider")
        return named is None or named == provider


def resolve_settings(
    *,
    flags: Mapping[str, str | None],
    environ: Mapping[str, str],
    user_config: UserConfig,
) -> tuple[ModelSettings, list[str]]:
    """Settings from, most specific first: flags (`provider`, `model`, `base_url`), the
    environment (`PAICLI_*` and the preset's key variables), the user file, preset defaults.

    With no provider and no base URL named anywhere, the first preset whose key variable is
    set is used. Returns the settings and one-line problems (an unknown provider, a value of
    the wrong type in the file)."""
    problems: list[str] = []
    file_level = _file_level(user_config, problems)
    levels = [
        _Level("flags", {k: v for k, v in flags.items() if k in FLAG_NAMES and v}, FLAG_NAMES),
        _env_level(environ),
        file_level,
    ]
    provider, provider_note = _first(levels, "provider", None)
    if provider is None and _first(levels, "base_url", None)[0] is None:
        provider, provider_note = _detect_provider(environ)
    known = provider is None or provider in PRESETS
    if not known and _first(levels, "base_url", provider)[0] is None:
        problems.append(
            f"unknown provider {provider!r} ({provider_note}); known: {', '.join(PRESETS)}"
        )
    settings = _build(provider, provider_note, levels, environ, generic=True)
    return settings, problems


def switch_model(
    settings: ModelSettings,
    name: str,
    environ: Mapping[str, str],
    user_config: UserConfig,
) -> ModelSettings:
    """The REPL's `/model NAME`: a preset name switches provider (its default model and its
    key, unless the environment or file configure that provider by name); anything else is a
    model name for the current provider."""
    if name in PRESETS:
        levels = [
            _env_level(environ),
            _file_level(user_config, []),
        ]
        return _build(name, "/model", levels, environ, generic=False)
    notes = (*(n for n in settings.notes if not n.startswith("model:")), "model: /model")
    return replace(settings, model=name, notes=notes)


def _build(
    provider: str | None,
    provider_note: str,
    levels: list[_Level],
    environ: Mapping[str, str],
    *,
    generic: bool,
) -> ModelSettings:
    """`generic=False` (a /model switch) only takes values from levels naming `provider`."""
    usable = [
        level
        for level in levels
        if level.applies_to(provider) and (generic or "provider" in level.values)
    ]
    preset = PRESETS.get(provider) if provider else None
    notes: list[str] = [f"provider: {provider_note}"] if provider else []

    model, note = _first(usable, "model", provider)
    if model is None and preset is not None:
        model, note = preset.default_model, f"preset {preset.name}"
    if model is not None:
        notes.append(f"model: {note}")

    base_url, note = _first(usable, "base_url", provider)
    if base_url is None and preset is not None:
        base_url, note = preset.base_url, f"preset {preset.name}"
    if base_url is not None:
        notes.append(f"base URL: {note}")

    api_key, note = _api_key(usable, provider, environ)
    if api_key is not None:
        notes.append(f"API key: {note}")

    window, note = DEFAULT_CONTEXT_WINDOW, "default"
    if preset is not None:
        window, note = preset.context_window, f"preset {preset.name}"
    for level in usable:
        if "context_window" in level.values:
            window, note = int(level.values["context_window"]), level.cite["context_window"]
            break
    notes.append(f"context window: {note}")
    images = preset is not None and preset.images and model == preset.default_model
    for level in usable:
        if "images" in level.values:
            images = level.values["images"] == "true"
            break

    return ModelSettings(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=api_key,
        context_window=window,
        notes=tuple(notes),
        images=images,
    )


def _api_key(
    levels: list[_Level], provider: str | None, environ: Mapping[str, str]
) -> tuple[str | None, str]:
    """PAICLI_API_KEY, then the preset's own variables, then the file's `api_key`."""
    preset = PRESETS.get(provider) if provider else None
    key, note = _first([level for level in levels if level.kind == "env"], "api_key", provider)
    if key is not None:
        return key, note
    for name in preset.key_env if preset else ():
        if environ.get(name):
            return environ[name], name
    return _first([level for level in levels if level.kind == "file"], "api_key", provider)


def _first(levels: list[_Level], name: str, provider: str | None) -> tuple[str | None, str]:
    for level in levels:
        if name in level.values and (name == "provider" or level.applies_to(provider)):
            return level.values[name], level.cite[name]
    return None, ""


def _detect_provider(environ: Mapping[str, str]) -> tuple[str | None, str]:
    for preset in PRESETS.values():
        for name in preset.key_env:
            if environ.get(name):
                return preset.name, f"{name} is set"
    return None, ""


def _file_level(user_config: UserConfig, problems: list[str]) -> _Level:
    where = str(user_config.source) if user_config.source else "config.toml"
    values: dict[str, str] = {}
    for key in FILE_KEYS:
        value = user_config.values.get(key)
        if value is None:
            continue
        if isinstance(value, str) and value:
            values[key] = value
        else:
            problems.append(f"{where}: {key} must be a non-empty string")
    window = user_config.values.get("context_window")
    if window is not None:
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            values["context_window"] = str(window)
        else:
            problems.append(f"{where}: context_window must be a positive whole number")
    images = user_config.values.get("images")
    if isinstance(images, bool):
        values["images"] = "true" if images else "false"
    elif images is not None:
        problems.append(f"{where}: images must be true or false")
    return _Level("file", values, dict.fromkeys((*FILE_KEYS, "context_window", "images"), where))


def _env_level(environ: Mapping[str, str]) -> _Level:
    return _Level("env", {k: environ[n] for k, n in ENV_NAMES.items() if environ.get(n)}, ENV_NAMES)


def display_url(url: str) -> str:
    """`url` fit to show: without `user:password@` and without the query string, either of
    which can carry a credential."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
