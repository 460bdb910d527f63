"""The execution side: path validation now; the engine, policies, hooks and guardrails as they land."""
