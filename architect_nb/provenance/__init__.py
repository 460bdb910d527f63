"""Provenance: which lines the agent wrote, recorded where it wrote them and reported for graders.

- `record`: the record a cell keeps of who wrote each of its lines (run, model, line hashes; never prompts),
  made when the agent writes and compared with the text as it is now.
- `report`: `python -m architect_nb provenance PATH...`: for notebooks or folders of submissions (nbgrader's
  layout included), which cells and lines came from the agent and whether the student changed them since.

Depends on no other package of `architect_nb` (the standard library only).
"""
