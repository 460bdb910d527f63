"""The tools: files, patches, search, commands and their sandbox, notebooks, the kernel tools, the todo
list and MCP tools."""
