"""How a run asks the person at the notebook: approvals, `--step` pauses and the plan's Build offer.

- `asking`: the one way a run asks, with the one headless policy (no front end that can show buttons);
  `front_ends`: whether a front end that can show widgets has shown itself to this kernel.
- `approval`: the widget confirmer (Approve, Deny, Abort run, Approve all like this), asked through `asking`.
- `stepping`: the `--step` pause's buttons, before each model call and each tool call.
- `plans`: a plan run's **Build this plan** and **Edit plan** offer, and the build it starts.

The buttons answer while the cell is busy because `pump` keeps the kernel's messages flowing.

Depends on `notebook.pump` (how the cell waits), `notebook.magics` and `notebook.state` (`%architect build`
finds the plan in the session's history), `notebook.output` (the questions are drawn with the run's
output), `agent.events`, `agent.stepping` and `agent.conversation` (what a pause shows),
`execution.confirmation` (the confirmer's questions and answers), `architect_nb.config` and `tools.todo` (a
plan's checklist).
"""
