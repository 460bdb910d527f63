"""What a run shows in the notebook: the live view while it runs, and the static output it leaves.

- `live`: the live view, one display output created by the starting cell and updated from the worker thread.
- `render`: the static output, `_repr_mimebundle_` with the run's transcript JSON, HTML and plain text.
- `event_view`: what the output says about each event, whatever draws it; `text_render`: the plain text.
- `inspector_view`: one step's request, the model's raw reply and its usage, drawn as HTML.
- `saved_record`: what a finished run leaves in the notebook (long tool outputs cut, the whole on disk).

Depends on `agent.events` (what is drawn), `agent.conversation` (the inspector's record), `execution.engine`
and `execution.checkpoints` (the run's folder, where the whole transcript is kept), `execution.confirmation`
(the questions shown), `tools.todo` (the checklist) and `tools.state_snapshot` (the review's entry for your
variables).
"""
