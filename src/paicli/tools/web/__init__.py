"""The web tools: web_fetch (a page as Markdown or text, within an address rule, a size cap
and a deadline) and web_search (a configured provider)."""
