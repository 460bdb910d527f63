"""Tokens and dollars per step and per run, against an optional budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from architect_nb.agent.models.model_reply import Usage

__all__ = ["CostTracker"]

DEFAULT_WARN_FRACTION = 0.8


@dataclass
class CostTracker:
    """Adds up usage. `add()` returns the warnings to raise; `exceeded` says the budget is spent.

    Args:
        budget_usd: Stop the run once this many dollars are spent.
        budget_tokens: Stop the run once this many tokens are used.
        warn_at_usd: Warn once at this spend (default: 80% of `budget_usd`).
        warn_fraction: The fraction of a budget at which to warn when `warn_at_usd` is not set.
    """

    budget_usd: float | None = None
    budget_tokens: int | None = None
    warn_at_usd: float | None = None
    warn_fraction: float = DEFAULT_WARN_FRACTION
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, read from the provider's prompt cache
    reasoning_tokens: int = 0  # of the completion tokens, spent thinking
    cost_usd: float = 0.0
    priced: bool = True
    _warned: set[str] = field(default_factory=set)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: Usage) -> list[str]:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        self.cost_usd += usage.cost_usd
        self.priced = self.priced and usage.priced
        warnings = []
        usd_mark = self.warn_at_usd
        if usd_mark is None and self.budget_usd is not None:
            usd_mark = self.budget_usd * self.warn_fraction
        if usd_mark is not None and self.cost_usd >= usd_mark and "usd" not in self._warned:
            self._warned.add("usd")
            limit = f" of the ${self.budget_usd:.4f} budget" if self.budget_usd is not None else ""
            warnings.append(f"Spent ${self.cost_usd:.4f}{limit}.")
        tokens_mark = self.budget_tokens * self.warn_fraction if self.budget_tokens is not None else None
        if tokens_mark is not None and self.total_tokens >= tokens_mark and "tokens" not in self._warned:
            self._warned.add("tokens")
            warnings.append(f"Used {self.total_tokens} of the {self.budget_tokens}-token budget.")
        return warnings

    @property
    def exceeded(self) -> str | None:
        """Why the budget is spent, or None."""
        if self.budget_usd is not None and self.cost_usd >= self.budget_usd:
            return f"the ${self.budget_usd:.4f} budget is spent (${self.cost_usd:.4f})"
        if self.budget_tokens is not None and self.total_tokens >= self.budget_tokens:
            return f"the {self.budget_tokens}-token budget is spent ({self.total_tokens} tokens)"
        return None
