"""The conversation: what a run continues, what it sends to the model, and what it adds to the system prompt.

- `thread`: `Thread`, a conversation that goes on across runs (cells), with its forks; `thread_store`:
  threads saved on disk with the checkpoints.
- `context`: `ContextBuilder`, the conversation kept within the model's window (redacted, cut, compressed);
  `context_meter`: what fills that window, by part.
- `inspector`: what the model saw and said at every step, rebuilt from a run's events.
- `instructions`: the project's `AGENTS.md` and `CLAUDE.md`; `skills`: `SKILL.md` folders.
- `recording`: record mode, a thread's runs written as a script for the scripted model.

Depends on `agent.models` (answers and their extras, token estimates, the scripted model's scripts),
`architect_nb.config`, `architect_nb.paths`, `execution.checkpoints` (where threads are saved, what an undo
reports), `tools.base` (tool results) and `tools.todo` (the checklist a thread carries).
"""
