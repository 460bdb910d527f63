"""Commands that read a sensitive file without naming it, judged on the shell parse.

- `unnamed_reads`: the judge: globs, recursive searches, `find -exec`, `xargs` or `$(...)` fed by a file
  lister, archives or recursive copies of a folder that holds a sensitive file.
- `program_walks`: the per-program models of the trees a reader (`grep -r`, `rg`), a lister (`find`, `ls -R`)
  or a copier (`cp -r`, `tar c`) reaches; the write checks use them too.

Depends on the shared parts of `execution.guardrails` (`shell_runs`, `program_options`, `guarded_files`);
never on `writes` or on the engine (`rails`). The shell parse and its words are `tools.commands`'.
"""
