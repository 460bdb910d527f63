"""Commands that read a sensitive file without naming it, judged on the shell parse.

- `unnamed_reads`: the judge: globs, recursive searches, `find -exec`, `xargs` or `$(...)` fed by a file
  lister, archives or recursive copies of a folder that holds a sensitive file.

Depends on the shared parts of `execution.guardrails` (`shell_runs`, `guarded_files`); never on `writes` or
on the engine (`rails`). The shell parse, its words and the models of the trees programs walk
(`tools.commands.programs.walks`) are `tools.commands`'.
"""
