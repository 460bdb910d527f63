"""The whole job, as a scripted-model conversation: read, search, edit, patch, run the tests, finish.

One script for the agent test (`tests/unit/agent/test_agent_every_tool_session.py`) and the labextension's
fixtures (`labextension/scripts/make_fixtures.py`), so the renderer is tested on the run the agent test
checks.
It fits a copy of `notebooks/sample_project`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CART_PATCH", "FIRST_WORDS", "TASK", "every_tool_turns"]

TASK = "Make totals floats and round discounts to cents; keep the tests green."
FIRST_WORDS = "Let me read the cart first."

CART_PATCH = """--- a/shop/cart.py
+++ b/shop/cart.py
@@ -26,2 +26,3 @@
     def total_with_discount(self, percent: float) -> float:
-        return self.total() * (1 - percent / 100)
+        discounted = self.total() * (1 - percent / 100)
+        return round(discounted, 2)
"""


def every_tool_turns(final_text: str) -> list[dict[str, Any]]:
    """The six turns; each `expect` stops the run if a tool result is not what the script was written for."""
    return [
        {
            "content": FIRST_WORDS,
            "tool_calls": [{"name": "read_file", "arguments": {"path": "shop/cart.py"}}],
        },
        {
            "expect": {"tool_result_contains": "def total"},
            "tool_calls": [{"name": "grep", "arguments": {"pattern": "total = 0", "path": "shop"}}],
        },
        {
            "expect": {"tool_result_contains": "shop/cart.py:"},
            "content": "The total starts from an `int`; I'll make it a float.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "shop/cart.py",
                        "old_str": "total = 0\n",
                        "new_str": "total = 0.0\n",
                    },
                }
            ],
        },
        {"tool_calls": [{"name": "apply_patch", "arguments": {"path": "shop/cart.py", "patch": CART_PATCH}}]},
        {
            "tool_calls": [
                {"name": "run_command", "arguments": {"command": "python -m pytest -q", "timeout": 120}}
            ]
        },
        {"expect": {"tool_result_contains": "2 passed"}, "content": final_text},
    ]
