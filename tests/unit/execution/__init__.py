"""The execution pipeline: the engine, confirmation, hooks, guardrails, quality gates, the notebook
check's rules and undo."""
