"""The agent: a conversation with a model that acts through a toolbox. Never prints, never
reads stdin: it emits typed events and the toolbox's approver asks the user."""
