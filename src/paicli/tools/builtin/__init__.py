"""The built-in tools (files, search, commands) in one project folder: `toolbox.BuiltinToolbox`
and the modules behind each tool."""
