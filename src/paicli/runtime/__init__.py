"""Everything one run of paicli needs, wired from its `RunSettings` (`paicli.run_settings`):
the MCP servers and the composed toolbox (`open.open_runtime`, `open.build_toolbox`), held in
a `Runtime` (`run.py`), which builds the agent once a model is configured
(`Runtime.use_model`, through `agent.build.build_agent`); the model client (`model.py`) and
what the system prompt adds (`context.py`).

Shared by the REPL and one-shot mode; it never prints and never reads stdin (asking the user
goes through the `RunIO` it is given).
"""

from paicli.runtime.context import mode_note, schema_profile, server_instructions
from paicli.runtime.open import build_toolbox, open_runtime
from paicli.runtime.run import Runtime

__all__ = [
    "Runtime",
    "build_toolbox",
    "mode_note",
    "open_runtime",
    "schema_profile",
    "server_instructions",
]
