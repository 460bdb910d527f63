"""What the OS sandbox hides outside the workspace: the person's credential files and folders.

`hidden_paths` lists those that exist: under HOME (`DEFAULT_HIDDEN`), where well-known environment variables
move them (`KUBECONFIG`, ...), the paths in `sandbox.hide`, root-only system secrets, and architect-nb's own
state folder (the engine adds a configured `checkpoints.dir`). The workspace's own
sensitive and protected files are found by `workspace_scan`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["DEFAULT_HIDDEN", "hidden_paths"]

#: Credential files and folders under HOME that no sandboxed command sees (they read as empty).
DEFAULT_HIDDEN: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".pypirc",
    ".npmrc",
    ".yarnrc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".terraform.d",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/rclone",
    ".s3cfg",
    ".boto",
    ".databrickscfg",
    ".kaggle",
    ".huggingface",
    ".cache/huggingface/token",
    ".config/op",
    ".oci",
    # What was typed in IPython (`%env OPENAI_API_KEY=...`) and the shells' histories.
    ".ipython",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    # Kernel connection files: with them a process could run code in a kernel, outside the sandbox.
    ".local/share/jupyter/runtime",
    # Browser profiles hold cookies and saved passwords.
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
)
#: Variables that move a credential file or folder away from its default place.
_HIDDEN_VARIABLES = (
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "CLOUDSDK_CONFIG",
    "GNUPGHOME",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CONFIG_DIR",
    "JUPYTER_RUNTIME_DIR",
    "IPYTHONDIR",
)
#: System files that only root may read; a command run by root could otherwise.
_SYSTEM_HIDDEN = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
)


def _state_folder() -> str:
    """architect-nb's own state folder: snapshots of the workspace (its secrets too), threads, transcripts."""
    import platformdirs

    return str(platformdirs.user_state_dir("architect-nb"))


def hidden_paths(home: Path, extra: Iterable[str] = (), env: Mapping[str, str] | None = None) -> list[str]:
    """The credential paths to hide that exist, resolved (a link is hidden at its target), deepest last."""
    env = os.environ if env is None else env
    candidates = [str(home / rel) for rel in DEFAULT_HIDDEN]
    candidates += [str(home / p[2:]) if p.startswith("~/") else p for p in extra if p != "~"]
    candidates += [str(home)] if "~" in extra else []
    for name in _HIDDEN_VARIABLES:
        for value in env.get(name, "").split(os.pathsep):
            if os.path.isabs(value):
                candidates.append(value)
    candidates += _SYSTEM_HIDDEN
    candidates.append(_state_folder())
    found: list[str] = []
    for path in candidates:
        if os.path.lexists(path):
            real = os.path.realpath(path)
            if os.path.exists(real) and real not in found:
                found.append(real)
    return sorted(found, key=len)
