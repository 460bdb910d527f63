"""Commands that change a protected file, named or (without the sandbox) not, judged on the shell parse.

- `protected_writes`: the judge; `write_targets` turns words into paths as bash will expand them,
  `write_verdicts` paths into refusals, `copy_landings` says where a copy, move or link lands,
  `write_sources` where an archive's members land and which files a patch changes (`archives`,
  `patch_targets` read them), and `git_rewrites` asks the repository (`git_state`) what a git command would
  rewrite.

Depends on the shared parts of `execution.guardrails` (`shell_runs`, `mentions`, `guarded_files`);
never on the engine (`rails`). The shell parse, its words, the rule tables and the per-program models of
what each program writes and walks (`tools.commands.programs`) are `tools.commands`'; read roots are
matched with `architect_nb.paths`.
"""
