"""The design document's path for the workspace sandbox (`execution/validators.py`).

The code lives in the leaf package `architect_nb.paths.validators`, which the tools use too (they sit below
the execution layer and never import it); this module names the same objects.
"""

from architect_nb.paths.validators import (
    MAX_PATH_LENGTH,
    PathTraversalError,
    is_inside,
    validate_path,
    visible,
)

__all__ = ["MAX_PATH_LENGTH", "PathTraversalError", "is_inside", "validate_path", "visible"]
