"""Front ends: the CLI, the MCP server, doctor, demo, skill. They call the build API and the query side and only display."""
