"""Sub-agents: their definitions (`definitions`, read from Markdown files with YAML front
matter, `front_matter`) and the `Agent` tool that runs them (`toolbox`)."""
