"""What the project knows about shell programs, one model per program (issue 50).

- `model`: `ProgramModel`, everything the checks know about one program: its options, whether it is safe or
  a development tool, what it writes, whether it runs code or decodes bytes. `registry`: `model_of(name)`.
- The models, one family to a module: `readers` (printers, readers, searchers, listers), `files` (remove,
  create, copy, move, link), `code` (shells, builtins, interpreters, editors), `archiving` (archivers,
  compressors, decoders, `patch`), `network` (downloaders) and `dev_tools` (test runners, linters, builders).
- What the models use: `options`, a command line read as GNU getopt does with the program's option table;
  `effects`, what a command may change; `writes`, the write models, with `interpreters` (inline code,
  in-place editors), `archivers` and `git`; `walks`, the trees a reader, lister or archiver reaches (each a
  `Walk`, from `tree_walk`); `python_code`, what inline Python code does with the paths it names (`ast`).

The classifier (`tools.commands.classifier`) and the guardrails (`execution.guardrails`) both read the
models. Depends on the shell words of `tools.commands` and its safe programs' argument checks (`checks`).
"""
