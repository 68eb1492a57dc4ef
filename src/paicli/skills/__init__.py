"""Agent Skills: folders with a `SKILL.md` (YAML front matter, then instructions) found in the
user's and the project's skill folders (`folders`, `local`), and those MCP servers serve
(SEP-2640), gathered in one catalogue the model loads from on demand (`catalog`) through the
built-in `load_skill` tool (`toolbox`)."""
