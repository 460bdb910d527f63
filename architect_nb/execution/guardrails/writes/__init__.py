"""Commands that change a protected file, named or (without the sandbox) not, judged on the shell parse.

- `protected_writes`: the judge; `write_targets` turns words into paths as bash will expand them,
  `write_verdicts` paths into refusals, `copy_landings` says where a copy, move or link lands,
  `write_sources` where an archive's members land and which files a patch changes (`archives`,
  `patch_targets` read them), and `git_rewrites` asks the repository (`git_state`) what a git command would
  rewrite.
- The per-program models: `program_writes` (what each program writes), with `interpreter_writes` (inline
  code), `archiver_writes` and `git_writes`, all describing `write_effects`.

Depends on the shared parts of `execution.guardrails` (`shell_runs`, `mentions`, `program_options`,
`guarded_files`) and on `reads.program_walks`; never on the engine (`rails`). The shell parse, its words
and the rule tables are `tools.commands`'; read roots are matched with `architect_nb.paths`.
"""
