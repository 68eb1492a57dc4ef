"""Who decides whether a tool call runs: rules (`rules`), the saved and project answers
(`policy`), what the user is asked and answers, and the modes (`request`), and the approving
wrapper (`approval`)."""
