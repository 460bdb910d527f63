"""The file tools: read_file, write_file, delete_file, list_files and edit_file, and what they share.

- `file_tools`: read_file, write_file, delete_file and list_files.
- `edit_file`: edit_file; `plan_edit` is its pure part, which the notebook cell edits reuse.
- `fileio`: decoding that explains itself, size limits, and the atomic, durable writes all tools use.
- `encodings`: the encoding of a file that is not UTF-8 (a Python coding cookie, else charset-normalizer when
  it is sure), and the messages for bytes it cannot decide and text it cannot store.
- `textmatch`: line splitting that keeps endings, loose comparison and "closest lines" hints (edit and patch).
- `diffs`: the unified diffs the model, the approval screen and the transcript show.
- `file_kinds`: what a binary file is (a database, a pickle, an image), for describing a change to one.

Depends on the core (`base`, `workspace`, `architect_nb.paths.validators`) and on `tree` (the walk and
globs) for list_files. The tool classes are re-exported here, at the design document's path.
"""

from architect_nb.tools.filesystem.file_tools import (
    DeleteFileArgs,
    DeleteFileTool,
    EditFileArgs,
    EditFileTool,
    ListFilesArgs,
    ListFilesTool,
    ReadFileArgs,
    ReadFileTool,
    WriteFileArgs,
    WriteFileTool,
)

__all__ = [
    "DeleteFileArgs",
    "DeleteFileTool",
    "EditFileArgs",
    "EditFileTool",
    "ListFilesArgs",
    "ListFilesTool",
    "ReadFileArgs",
    "ReadFileTool",
    "WriteFileArgs",
    "WriteFileTool",
]
