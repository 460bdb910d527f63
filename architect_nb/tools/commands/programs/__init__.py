"""What the project knows about shell programs: their options, and what they read, write and run.

- `options`: a command line read as GNU getopt does, with one table of which options take a value (`SPECS`).
- `effects`: what a command may change, as the models describe it; `writes` says it for each program, with
  `interpreters` (inline code, in-place editors), `archivers` (archives, compressors, `patch`) and `git`.
- `walks`: the trees a recursive reader, a file lister or an archiver reaches, and what it leaves out.

The guardrails (`execution.guardrails`) judge protected and sensitive files with these models. Depends on
the shell words of `tools.commands` only.
"""
