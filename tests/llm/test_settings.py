"""Model settings: presets, precedence (flags > environment > file > preset), /model."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import paicli.llm
from paicli.llm import PRESETS, ModelSettings, resolve_settings, switch_model
from paicli.llm.settings import display_url
from paicli.user_config import UserConfig

FILE = Path("/home/user/.paicli/config.toml")
NO_FILE = UserConfig()


def user_file(**values: object) -> UserConfig:
    return UserConfig(values=dict(values), source=FILE)


def resolve(
    flags: Mapping[str, str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    user_config: UserConfig = NO_FILE,
) -> ModelSettings:
    settings, problems = resolve_settings(
        flags=flags or {}, environ=environ or {}, user_config=user_config
    )
    assert problems == []
    return settings


def test_the_public_api_is_deliberate() -> None:
    assert sorted(paicli.llm.__all__) == [
        "AuthenticationFailed",
        "Completion",
        "EndpointUnreachable",
        "LlmError",
        "ModelNotFound",
        "ModelSettings",
        "PRESETS",
        "Preset",
        "ReasoningDelta",
        "RequestRejected",
        "Retrying",
        "ServiceUnavailable",
        "StreamEvent",
        "TextDelta",
        "ToolCallRequest",
        "Usage",
        "resolve_settings",
        "switch_model",
    ]


def test_every_preset_but_ollama_needs_a_key_variable() -> None:
    assert set(PRESETS) == {"glm", "deepseek", "qwen", "kimi", "openai", "openrouter", "ollama"}
    for preset in PRESETS.values():
        assert preset.needs_key == (preset.name != "ollama")
        assert bool(preset.key_env) == preset.needs_key
        assert preset.context_window > 0


def test_flags_beat_the_environment_which_beats_the_file_which_beats_the_preset() -> None:
    file = user_file(provider="deepseek", model="file-model", base_url="https://file.example")
    environ = {"DEEPSEEK_API_KEY": "k", "PAICLI_MODEL": "env-model"}
    assert resolve({"model": "flag-model"}, environ, file).model == "flag-model"
    assert resolve({}, environ, file).model == "env-model"
    assert resolve({}, {"DEEPSEEK_API_KEY": "k"}, file).model == "file-model"
    assert resolve({}, {"DEEPSEEK_API_KEY": "k"}, user_file(provider="deepseek")).model == (
        "deepseek-chat"
    )
    assert resolve({}, environ, file).base_url == "https://file.example"
    assert resolve({"base_url": "http://flag"}, environ, file).base_url == "http://flag"


def test_the_provider_flag_beats_the_environment_and_the_file() -> None:
    environ = {"PAICLI_PROVIDER": "qwen", "GLM_API_KEY": "g", "DASHSCOPE_API_KEY": "q"}
    settings = resolve({"provider": "glm"}, environ, user_file(provider="kimi"))
    assert (settings.provider, settings.model, settings.api_key) == ("glm", "glm-4.6", "g")
    assert settings.base_url == "https://open.bigmodel.cn/api/paas/v4/"


def test_a_set_key_variable_picks_its_provider_when_none_is_named() -> None:
    settings = resolve(environ={"DEEPSEEK_API_KEY": "sk-d"})
    assert settings.configured
    assert (settings.provider, settings.model, settings.api_key) == (
        "deepseek",
        "deepseek-chat",
        "sk-d",
    )
    assert settings.base_url == "https://api.deepseek.com"
    assert "provider: DEEPSEEK_API_KEY is set" in settings.notes


def test_the_first_preset_with_a_key_wins_and_alternate_key_names_count() -> None:
    both = {"OPENAI_API_KEY": "o", "DEEPSEEK_API_KEY": "d"}
    assert resolve(environ=both).provider == "deepseek"
    settings = resolve(environ={"ZHIPUAI_API_KEY": "z", "OPENAI_API_KEY": "o"})
    assert (settings.provider, settings.api_key) == ("glm", "z")


def test_nothing_configured_says_how_in_one_line() -> None:
    settings = resolve(environ={"PATH": "/usr/bin"})
    assert not settings.configured
    hint = settings.why_not_configured()
    assert "DEEPSEEK_API_KEY" in hint
    assert "--provider ollama" in hint
    assert "\n" not in hint


def test_ollama_needs_no_key() -> None:
    settings = resolve({"provider": "ollama"})
    assert settings.configured
    assert settings.api_key is None
    assert settings.base_url == "http://localhost:11434/v1"
    assert settings.why_not_configured() == ""


def test_a_preset_that_needs_a_key_is_not_configured_without_one() -> None:
    settings = resolve({"provider": "glm"})
    assert not settings.configured
    assert "GLM_API_KEY or ZHIPUAI_API_KEY" in settings.why_not_configured()


def test_a_plain_base_url_needs_a_model_but_no_key_and_gets_no_presets_key() -> None:
    environ = {"DEEPSEEK_API_KEY": "not-for-localhost"}
    without_model = resolve({"base_url": "http://localhost:8000/v1"}, environ)
    assert not without_model.configured
    assert "--model" in without_model.why_not_configured()
    settings = resolve({"base_url": "http://localhost:8000/v1", "model": "qwen"}, environ)
    assert settings.configured
    assert (settings.provider, settings.api_key) == (None, None)
    assert settings.describe() == "http://localhost:8000/v1 · qwen"


def test_a_base_url_in_the_environment_takes_paicli_api_key() -> None:
    environ = {"PAICLI_BASE_URL": "http://vllm:8000/v1", "PAICLI_MODEL": "m", "PAICLI_API_KEY": "p"}
    settings = resolve(environ=environ)
    assert (settings.base_url, settings.model, settings.api_key) == (
        "http://vllm:8000/v1",
        "m",
        "p",
    )


def test_paicli_api_key_beats_the_presets_variable_which_beats_the_file() -> None:
    file = user_file(provider="deepseek", api_key="from-file")
    environ = {"DEEPSEEK_API_KEY": "from-preset-var", "PAICLI_API_KEY": "from-paicli-var"}
    assert resolve({}, environ, file).api_key == "from-paicli-var"
    del environ["PAICLI_API_KEY"]
    assert resolve({}, environ, file).api_key == "from-preset-var"
    assert resolve({}, {}, file).api_key == "from-file"
    assert resolve({}, {}, file).configured


def test_values_the_file_gives_for_another_provider_do_not_leak() -> None:
    file = user_file(provider="deepseek", model="deepseek-reasoner", api_key="deepseek-key")
    settings = resolve({"provider": "glm"}, {"GLM_API_KEY": "g"}, file)
    assert (settings.model, settings.api_key) == ("glm-4.6", "g")


def test_the_repr_and_description_never_show_the_key() -> None:
    settings = resolve(environ={"DEEPSEEK_API_KEY": "sk-test-SECRET123"})
    assert "SECRET123" not in repr(settings)
    assert "SECRET123" not in " ".join(settings.notes)
    assert settings.describe() == "deepseek · deepseek-chat"


def test_an_unknown_provider_is_a_problem_naming_where_it_came_from() -> None:
    settings, problems = resolve_settings(
        flags={"provider": "gemini"}, environ={}, user_config=NO_FILE
    )
    assert not settings.configured
    [problem] = problems
    assert "'gemini'" in problem
    assert "--provider" in problem
    assert "deepseek" in problem
    assert "Unknown provider 'gemini'" in settings.why_not_configured()


def test_an_unknown_provider_with_a_base_url_is_a_named_custom_server() -> None:
    flags = {"provider": "vllm", "base_url": "http://gpu:8000/v1", "model": "qwen3-32b"}
    settings = resolve(flags)
    assert settings.configured
    assert settings.describe() == "vllm · qwen3-32b"
    assert settings.context_window == 32_768


def test_the_file_sets_the_context_window_and_bad_values_are_problems_naming_the_file() -> None:
    environ = {"DEEPSEEK_API_KEY": "k"}
    assert resolve({}, environ).context_window == 128_000
    assert resolve({}, environ, user_file(context_window=64_000)).context_window == 64_000
    settings, problems = resolve_settings(
        flags={},
        environ=environ,
        user_config=user_file(model=3, context_window="big"),
    )
    assert settings.model == "deepseek-chat"
    assert problems == [
        f"{FILE}: model must be a non-empty string",
        f"{FILE}: context_window must be a positive whole number",
    ]


def test_notes_say_where_each_value_came_from() -> None:
    file = user_file(base_url="https://proxy.example/v1")
    settings = resolve({"provider": "openai"}, {"OPENAI_API_KEY": "o"}, file)
    assert settings.notes == (
        "provider: --provider",
        "model: preset openai",
        f"base URL: {FILE}",
        "API key: OPENAI_API_KEY",
        "context window: preset openai",
    )


def test_switching_to_a_preset_takes_its_default_model_and_key() -> None:
    environ = {"DEEPSEEK_API_KEY": "d", "MOONSHOT_API_KEY": "m", "PAICLI_MODEL": "my-model"}
    settings = resolve(environ=environ)
    assert settings.model == "my-model"
    switched = switch_model(settings, "kimi", environ, NO_FILE)
    assert switched.configured
    assert (switched.provider, switched.model, switched.api_key) == (
        "kimi",
        "kimi-k2-0905-preview",
        "m",
    )
    assert switched.base_url == "https://api.moonshot.cn/v1"
    assert switched.context_window == PRESETS["kimi"].context_window


def test_switching_to_a_preset_keeps_what_the_file_says_about_that_provider() -> None:
    file = user_file(provider="glm", model="glm-4.5-air", api_key="file-key")
    settings = resolve({"provider": "ollama"}, {}, file)
    switched = switch_model(settings, "glm", {}, file)
    assert (switched.model, switched.api_key) == ("glm-4.5-air", "file-key")


def test_switching_to_a_preset_without_its_key_is_not_configured() -> None:
    settings = resolve(environ={"DEEPSEEK_API_KEY": "d"})
    switched = switch_model(settings, "openai", {"DEEPSEEK_API_KEY": "d"}, NO_FILE)
    assert not switched.configured
    assert "OPENAI_API_KEY" in switched.why_not_configured()


def test_switching_to_a_model_name_keeps_the_provider_and_key() -> None:
    environ = {"DEEPSEEK_API_KEY": "d"}
    settings = resolve(environ=environ)
    switched = switch_model(settings, "deepseek-reasoner", environ, NO_FILE)
    assert (switched.provider, switched.model, switched.api_key) == (
        "deepseek",
        "deepseek-reasoner",
        "d",
    )
    assert switched.base_url == settings.base_url
    assert "model: /model" in switched.notes


def test_a_base_url_is_shown_without_credentials() -> None:
    assert display_url("https://user:tok@host.example/v1?key=abc") == "https://host.example/v1"
    assert display_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
