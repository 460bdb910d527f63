#!/usr/bin/env bash
# The wheel is the product: build it, install it into a fresh virtualenv whose PATH has no Node, and check that
# JupyterLab lists the prebuilt run renderer, and Jupyter Server the server extension, as enabled and OK.
#
#   scripts/check_wheel.sh            # uses .venv/bin/uv to build and install, python3 for the fresh venv
#
# uv builds and installs as pip does (the same build backend, the same dependencies), in seconds instead of a
# minute: the wheel, not the installer, is what is checked.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_PY=${BUILD_PY:-.venv/bin/python}
UV=${UV:-.venv/bin/uv}
PYTHON=${PYTHON:-python3}
EXT=architect-nb

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$SECONDS

echo "== building the wheel"
"$UV" build --quiet --wheel --out-dir "$work/dist" .
wheel=$(ls "$work"/dist/architect_nb-*.whl)
echo "$(basename "$wheel")"
"$BUILD_PY" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
prefix = "architect_nb-0.1.0.dev0.data/data/share/jupyter/labextensions/architect-nb/"
shipped = sorted(n for n in names if "/labextensions/" in n)
for name in shipped:
    print("  " + name)
if "architect_nb/acp/architect.svg" not in names:  # the @architect persona's avatar, for Jupyter AI
    sys.exit("wheel is missing architect_nb/acp/architect.svg")
needed = ["package.json", "install.json", "static/style.js"]
missing = [n for n in needed if not any(s.endswith("/labextensions/architect-nb/" + n) for s in shipped)]
if missing or any(n.startswith("architect_nb/labextension/") for n in names):
    sys.exit(f"wheel is missing {missing} or ships the build twice")
PY

echo "== installing it into a fresh venv"
"$PYTHON" -m venv "$work/venv"
if ! "$UV" pip install --quiet --python "$work/venv/bin/python" "$wheel" >"$work/install.log" 2>&1; then
  cat "$work/install.log" >&2
  exit 1
fi

echo "== jupyter labextension list (PATH=$work/venv/bin only: no node)"
mkdir -p "$work/home"
run() { env -i HOME="$work/home" PATH="$work/venv/bin" "$@"; }
if run bash -c 'command -v node' >/dev/null 2>&1; then
  echo "node is reachable from the check's PATH" >&2
  exit 1
fi
listing=$(run "$work/venv/bin/jupyter" labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
echo "$listing"
if ! grep -Eq "^\s*$EXT v[0-9.]+ enabled .*OK" <<<"$listing"; then
  echo "FAIL: $EXT is not listed as enabled and OK" >&2
  exit 1
fi
# The server extension is enabled by the configuration file the wheel installs, and loads.
servers=$(run "$work/venv/bin/jupyter" server extension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
if ! grep -Eq "^\s*architect_nb.server enabled" <<<"$servers" || ! grep -Eq "^\s*architect_nb.server .*OK" <<<"$servers"; then
  echo "$servers" >&2
  echo "FAIL: the server extension architect_nb.server is not enabled and OK" >&2
  exit 1
fi
# The ACP agent's console script is installed and starts (its SDK is a dependency, not an extra).
if ! run "$work/venv/bin/architect-nb-acp" --help | grep -q "Agent Client Protocol"; then
  echo "FAIL: architect-nb-acp --help did not run from the wheel" >&2
  exit 1
fi
echo "wheel-check: $EXT enabled OK in a Node-free venv ($((SECONDS - start)) s)"
