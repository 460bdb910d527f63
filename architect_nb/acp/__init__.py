"""architect-nb as an Agent Client Protocol (ACP) agent: `architect-nb-acp`, for Zed, Jupyter AI and marimo.

- `server`: the console script; stdio is the protocol's.
- `agent`: `ArchitectAgent`, the protocol's agent side: sessions (architect-nb threads), prompts, cancel.
- `session`: `AcpSession`, one thread and its runs on the same `AgentLoop` and `ExecutionEngine` as a cell.
- `permissions`: `AcpConfirmer`, the engine's approvals as ACP permission requests.
- `updates`: a run's events as ACP session updates (text, thinking, tool calls, diffs), redacted.
- `outbox`: the worker thread's updates and questions, in order, over the connection's event loop.
- `notebook_kernel` and `kernel_tools`: the kernel of a notebook the prompt attaches, joined over the
  Jupyter protocol, and the kernel tools run there.
- `mcp_servers`: the MCP servers the client offers, joined to the session's own.
- `jupyter_ai`: `@architect` in Jupyter AI's chat (loaded by Jupyter AI only).

Above `agent`, beside `notebook`: it imports neither the notebook layer nor IPython. The protocol's SDK
(`acp`) is imported by these modules only, so `import architect_nb` never loads it.

Depends on `architect_nb.agent`, `architect_nb.config`, `execution.checkpoints` and `execution.confirmation`,
and the tools it runs or describes: `tools.base`, `tools.metadata`, `tools.state_snapshot`, `tools.commands`
and `tools.kernel`.
"""
