"""How a run asks the person: approvals, `--step` pauses, the plan's Build offer."""
