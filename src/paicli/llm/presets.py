"""The OpenAI-compatible providers paicli knows by name: endpoint, default model, key.

Each figure carries where it came from; a provider's limits change, so these are defaults
the user overrides (`--model`, `context_window` in config.toml), never hard limits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """A known OpenAI-compatible provider: where it lives, which model and key it uses."""

    name: str
    base_url: str
    default_model: str
    key_env: tuple[str, ...]  # environment variables holding its key, first set wins
    needs_key: bool
    context_window: int  # tokens, of `default_model`
    images: bool = False  # whether `default_model` takes image parts


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        # Zhipu's GLM-4.6 release notes: 200K context.
        Preset(
            "glm",
            "https://open.bigmodel.cn/api/paas/v4/",
            "glm-4.6",
            ("GLM_API_KEY", "ZHIPUAI_API_KEY"),
            True,
            200_000,
        ),
        # DeepSeek API docs (deepseek-chat): 128K context.
        Preset(
            "deepseek",
            "https://api.deepseek.com",
            "deepseek-chat",
            ("DEEPSEEK_API_KEY",),
            True,
            128_000,
        ),
        # DashScope model list gives qwen-plus 131,072 tokens (newer snapshots allow more).
        Preset(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            ("DASHSCOPE_API_KEY",),
            True,
            131_072,
        ),
        # Moonshot platform docs: kimi-k2-0905-preview has a 256K (262,144 token) window.
        Preset(
            "kimi",
            "https://api.moonshot.cn/v1",
            "kimi-k2-0905-preview",
            ("MOONSHOT_API_KEY",),
            True,
            262_144,
        ),
        # OpenAI model page: gpt-4.1 has a 1,047,576 token window.
        Preset(
            "openai",
            "https://api.openai.com/v1",
            "gpt-4.1",
            ("OPENAI_API_KEY",),
            True,
            1_047_576,
            images=True,
        ),
        # OpenRouter routes to many hosts whose limits differ: a conservative 128K.
        Preset(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "deepseek/deepseek-chat",
            ("OPENROUTER_API_KEY",),
            True,
            128_000,
        ),
        # Ollama serves a small num_ctx unless OLLAMA_CONTEXT_LENGTH is raised, and silently
        # truncates longer prompts: a conservative 8K (raise context_window alongside it).
        Preset("ollama", "http://localhost:11434/v1", "qwen3", (), False, 8_192),
    )
}
