//! MCP adapter over the ToolDispatcher (stdio and streamable HTTP). Not built yet: it will be
//! as thin as `src/http`, mapping each `docdex_*` tool to a dispatcher message.
