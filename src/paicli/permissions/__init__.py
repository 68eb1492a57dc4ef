"""Who decides whether a tool call runs: rules, the saved and project answers (`policy`), and
the approving wrapper with its modes (`approval`)."""
