# Everything runs from a local virtualenv that the first target creates, so a fresh clone needs only python3 >= 3.11.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-stamp
CHECK_PYTHON := $(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "architect-nb needs Python 3.11 or later")'

# Every Python process these targets start may write its bytecode cache (`__pycache__`, in the venvs and the
# checkout, both ignored by git), even where the environment says not to (PYTHONDONTWRITEBYTECODE=1, as on our
# CI machines). Without a cache every process compiles each module it imports, every time: LiteLLM's import
# took 9.6 s of CPU instead of 5.2 s, and a kernel's start 0.9 s instead of 0.4 s, which the suite pays in
# every kernel and subprocess it starts.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup setup-ipk6 setup-proxy setup-jupyter-ai setup-collab setup-documents demo test test-unit lint format pytest pytest-without-bwrap bench clean \
	labextension labextension-test wheel-check

JLPM := PATH="$(CURDIR)/$(VENV)/bin:$$PATH" jlpm
LABEXT_SHARE := $(VENV)/share/jupyter/labextensions/architect-nb
# Install the extension's Node packages with `jlpm $(1)` and build it into architect_nb/labextension.
build_labextension = cd labextension && $(JLPM) $(1) && $(JLPM) build:prod
define copy_labextension
	rm -rf $(LABEXT_SHARE) && mkdir -p $(dir $(LABEXT_SHARE)) && cp -r architect_nb/labextension $(LABEXT_SHARE) \
		&& cp labextension/install.json $(LABEXT_SHARE)/
endef

# Packages are installed by uv, which the venv's own pip installs first (so a fresh clone still needs only
# python3): on a clean machine uv installed the `dev` group in 9 s where pip took about two minutes, and the
# same versions (`pip freeze` compared). uv does not read pip's configuration; it installs from PyPI.
# The package goes in with `--no-build-isolation`: its build tools (pyproject's build-system.requires, JupyterLab
# among them, which is a dependency anyway) are installed into the venv first, so JupyterLab is not installed a
# second time into a throwaway build environment to build the labextension (with the venv's bin on PATH, where
# the build finds `jlpm`). `editables` is what hatchling asks for to build an editable install. The development
# tools are pyproject's dependency groups (`--group`). Nothing is compiled to bytecode at install: Python
# compiles a module when it is first imported, so only what is used is ever compiled. That needs Python to be
# allowed to write its bytecode cache: see `unexport` above.
UV := $(VENV)/bin/uv
# $(1) is the interpreter of the venv to install into.
uv_install = $(UV) pip install --quiet --python $(1)
VENV_INSTALL := $(call uv_install,$(PY))
BUILD_REQUIRES := $(PY) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))'
# The extension (Node, in labextension/) builds in the background while uv installs the Python packages, since
# neither waits for the other: two cores do both in the time of the longer. The package's build hook is skipped
# (SKIP_JUPYTER_BUILDER) and the built extension is copied into the venv, as `make labextension` does. $(2) is
# how the extension's Node packages are installed: all of them, or only what the build needs (its test and lint
# tools are the `devtools` workspace, which `workspaces focus` leaves out). $(1) is the dependency group.
define install_package
	@$(CHECK_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check 'uv>=0.8'
	$(VENV_INSTALL) $$($(BUILD_REQUIRES)) editables
	@echo "building the JupyterLab extension in the background (log: $(VENV)/labextension-build.log)"
	@($(call build_labextension,$(2))) > $(VENV)/labextension-build.log 2>&1 & build=$$!; \
	echo "$(VENV_INSTALL) --no-build-isolation -e . --group $(1)"; \
	SKIP_JUPYTER_BUILDER=1 PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV_INSTALL) --no-build-isolation -e . --group $(1); \
	installed=$$?; \
	if ! wait $$build; then cat $(VENV)/labextension-build.log; echo "the extension build failed"; exit 1; fi; \
	exit $$installed
	$(copy_labextension)
endef

# Everything: the package with the `dev` group (the demo's packages, test plugins, linters, browser driver, ...).
$(STAMP): pyproject.toml
	$(call install_package,dev,install)
	@touch $(STAMP) $(DEMO_STAMP)

# Only what the demo needs (the package and the `demo` group), so a first `make demo` installs no dev tool.
# A venv made by `make setup` has it already.
$(DEMO_STAMP): pyproject.toml
	$(call install_package,demo,workspaces focus architect-nb)
	@touch $(DEMO_STAMP)

setup: $(STAMP)

# A side venv's .pth that adds the main venv's site-packages after its own: venv $(1) reaches architect-nb
# (and all the main venv has) without installing it again.
define link_main_venv
	$(PY) -c 'import sysconfig; print("import site; site.addsitedir(%r)" % sysconfig.get_paths()["purelib"])' \
		> "$$($(1)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/architect_main_venv.pth"
endef

# A side venv $(1) for a browser test's JupyterLab: the main venv's JupyterLab version and the packages $(2),
# linked to the main venv.
define lab_side_venv
	rm -rf $(1)
	$(PY) -m venv $(1)
	$(call uv_install,$(1)/bin/python) \
		"jupyterlab==$$($(PY) -c 'import jupyterlab; print(jupyterlab.__version__)')" $(2)
	$(call link_main_venv,$(1))
endef

# A second kernel environment with an older ipykernel (6.x, as Colab and many installs have), for the notebook
# tests that run on both kernels. It holds only ipykernel 6 and jupyter-ui-poll and reaches everything else
# (architect-nb itself, ipywidgets, ...) through a .pth that adds the main venv's site-packages after its own,
# so it takes seconds to build instead of minutes.
IPK6 ?= .venv-ipk6
IPK6_STAMP := $(IPK6)/.installed-stamp
$(IPK6_STAMP): $(STAMP)
	rm -rf $(IPK6)
	$(PY) -m venv $(IPK6)
	$(call uv_install,$(IPK6)/bin/python) --no-deps \
		'ipykernel==6.31.0' 'jupyter-ui-poll==1.1.0' 'nest-asyncio>=1.6'
	$(call link_main_venv,$(IPK6))
	$(IPK6)/bin/python -c 'import ipykernel, architect_nb, ipywidgets; assert ipykernel.__version__.startswith("6.")'
	@touch $(IPK6_STAMP)

setup-ipk6: $(IPK6_STAMP)

# A real LiteLLM proxy (`litellm --config`) for tests/kernel/test_litellm_proxy.py and the hub test
# (tests/browser/test_hub_classroom_browser.py), in its own venv: the proxy's server stack is nothing the package
# needs. `litellm[proxy]` cannot be installed from the registry here (its
# `litellm-proxy` wheel of the same version is not there), so the venv gets the LiteLLM the main venv has and
# the proxy's own imports by name (what `litellm --config` asks for on start). The hub's proxy is the npm
# configurable-http-proxy, pinned by tests/hub/package-lock.json.
PROXY_VENV ?= .venv-proxy
PROXY_STAMP := $(PROXY_VENV)/.installed-stamp
PROXY_PACKAGES := fastapi uvicorn uvloop backoff apscheduler orjson 'websockets<16' pyjwt python-multipart \
	cryptography pynacl rq email-validator fastapi-sso semver expression mcp soundfile
$(PROXY_STAMP): $(STAMP) tests/hub/package.json tests/hub/package-lock.json
	rm -rf $(PROXY_VENV)
	$(PYTHON) -m venv $(PROXY_VENV)
	$(call uv_install,$(PROXY_VENV)/bin/python) \
		"litellm==$$($(PY) -c 'import importlib.metadata as m; print(m.version("litellm"))')" $(PROXY_PACKAGES)
	LITELLM_LOCAL_MODEL_COST_MAP=True $(PROXY_VENV)/bin/python -c 'import litellm.proxy.proxy_server'
	cd tests/hub && npm ci --no-audit --no-fund --silent
	tests/hub/node_modules/.bin/configurable-http-proxy --version
	@touch $(PROXY_STAMP)

setup-proxy: $(PROXY_STAMP)

# Jupyter AI 3 and its ACP client, for tests/browser/test_jupyter_ai_browser.py (the @architect persona). A venv
# of its own: Jupyter AI adds server extensions and a chat to JupyterLab that the other browser tests must not
# see, and jupyter-ai-acp-client 0.3.3 needs agent-client-protocol <0.12 (the main venv has the newest, so the
# persona runs the agent on 0.11 there). It gets the main venv's JupyterLab version, and reaches architect-nb
# (and LiteLLM, ...) through a .pth that adds the main venv's site-packages after its own.
JAI ?= .venv-jai
JAI_STAMP := $(JAI)/.installed-stamp
$(JAI_STAMP): $(STAMP)
	$(call lab_side_venv,$(JAI),'jupyter-ai==3.2.0' 'jupyter-ai-acp-client==0.3.3')
	$(JAI)/bin/python -c 'import architect_nb.acp.jupyter_ai, acp; assert acp.__file__.startswith("$(CURDIR)/$(JAI)/")'
	@touch $(JAI_STAMP)

setup-jupyter-ai: $(JAI_STAMP)

# Real-time collaboration (jupyter-collaboration 5), for tests/browser/test_collaboration_browser.py. A venv of
# its own, as for Jupyter AI: once installed, collaboration is on in every JupyterLab the venv starts, and the
# other browser tests must keep testing the notebook without it. It gets the main venv's JupyterLab version,
# and reaches architect-nb through a .pth that adds the main venv's site-packages after its own.
COLLAB ?= .venv-collab
COLLAB_STAMP := $(COLLAB)/.installed-stamp
$(COLLAB_STAMP): $(STAMP)
	$(call lab_side_venv,$(COLLAB),'jupyter-collaboration==5.0.4')
	$(COLLAB)/bin/python -c 'import jupyter_server_ydoc, architect_nb'
	@touch $(COLLAB_STAMP)

setup-collab: $(COLLAB_STAMP)

# jupyter-server-documents, the document server of Jupyter AI 3, for the same browser test under that server: a
# venv of its own for the same reason (it replaces the kernels' websockets and runs cells on the server).
DOCS ?= .venv-docs
DOCS_STAMP := $(DOCS)/.installed-stamp
$(DOCS_STAMP): $(STAMP)
	$(call lab_side_venv,$(DOCS),'jupyter-server-documents==0.3.3')
	$(DOCS)/bin/python -c 'import jupyter_server_documents, architect_nb'
	@touch $(DOCS_STAMP)

setup-documents: $(DOCS_STAMP)

# Runs notebooks/01-quickstart.ipynb headless on the scripted model and prints it as a terminal transcript.
demo: $(DEMO_STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m architect_nb.demo

# JupyterLab on notebooks/, with the venv first on PATH so the agent's commands and hooks use its tools.
.PHONY: lab
lab: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter lab --notebook-dir=notebooks

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The venv's bin comes first on PATH, as in an activated venv, so commands the agent runs (python -m pytest)
# find the same interpreter and packages. The workers (pytest-xdist) each take whole test files, so a file's
# kernels, servers and browser start once; PYTEST_WORKERS=0 runs everything in one process. There is one worker
# more than the cores: a worker spends part of its time waiting on a kernel, a server, a browser or a
# subprocess, and with one per core the cores sat 20% idle over the suite (half idle in the kernel layer). On 2
# cores, 3 workers took the pytest phase from 720 s to 552 s and `make test-unit` from 84 s to 64 s; 4 workers
# made `make test-unit` slower again (72 s). The workers take the files in the order collected
# (`--no-loadscope-reorder`), which tests/conftest.py sorts longest layer first: xdist's own order, most tests
# first, handed out the browser files (a few long tests each) last, where each ran alone on one worker at the
# end.
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
XDIST = -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder
# Everything the suite needs: the main venv and the three side venvs.
TEST_ENVS := $(STAMP) $(IPK6_STAMP) $(PROXY_STAMP) $(JAI_STAMP) $(COLLAB_STAMP) $(DOCS_STAMP)
pytest: $(TEST_ENVS)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# The linters run beside the tests, not before them: mypy on a fresh clone takes a minute of one core, and the
# tests leave about a third of the two cores idle while they wait on kernels, servers and browsers. The linters'
# report is printed after the tests'; either failing fails `make test`.
LINT_LOG := $(VENV)/lint.log
test: $(TEST_ENVS)
	@$(MAKE) --no-print-directory lint > $(LINT_LOG) 2>&1 & lint=$$!; \
	echo "linting in the background (log: $(LINT_LOG))"; \
	$(MAKE) --no-print-directory pytest; tested=$$?; \
	wait $$lint; linted=$$?; \
	echo "== lint"; cat $(LINT_LOG); \
	if [ $$linted -ne 0 ]; then echo "make test: the linters failed (above)"; fi; \
	[ $$linted -eq 0 ] && [ $$tested -eq 0 ]

# The inner loop: the unit layer without its slow tests (those that drive real servers, subprocess corpora or
# real waits; `slow` says why at each). Pure unit tests and the magics in an in-process IPython.
test-unit: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m pytest $(XDIST) -m "not slow" tests/unit \
		$(PYTEST_ARGS)

# The engine, command and sandbox tests once more as on a machine without bubblewrap (scripts/without-bwrap
# hides it from PATH), so a test that silently needs it cannot come back: the sandbox tests skip with the
# install hint, the rest must pass. CI runs it after `make test`; bubblewrap stays installed.
WITHOUT_BWRAP_TESTS := tests/unit/execution/test_engine*.py tests/unit/tools/test_commands*.py \
	tests/unit/tools/test_sandbox*.py tests/unit/agent/test_agent*.py tests/unit/execution/test_guardrails.py \
	tests/unit/execution/test_policies.py tests/unit/execution/test_quality_gates.py
pytest-without-bwrap: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" scripts/without-bwrap $(PY) -m pytest $(XDIST) \
		$(WITHOUT_BWRAP_TESTS) $(PYTEST_ARGS)

# The JupyterLab extension (labextension/). `pip install -e` builds it and copies it into the venv; this target
# rebuilds both after source changes. labextension-test makes fresh fixtures from scripted runs, then lints
# and runs the jest tests; wheel-check installs the wheel where there is no Node and asks JupyterLab about it.
LABEXT_OUT := architect_nb/labextension/package.json
$(LABEXT_OUT): $(wildcard labextension/src/*.ts labextension/style/*) labextension/package.json labextension/yarn.lock | $(STAMP)
	$(call build_labextension,install)
	$(copy_labextension)
	@touch $@

labextension: $(LABEXT_OUT)

labextension-test: $(LABEXT_OUT)
	$(PY) labextension/scripts/make_fixtures.py labextension/tests/fixtures
	cd labextension && $(JLPM) lint:check && $(JLPM) test

wheel-check: $(LABEXT_OUT)
	bash scripts/check_wheel.sh

bench: $(STAMP)
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) $(IPK6) $(JAI) $(COLLAB) $(DOCS) $(PROXY_VENV) .pytest_cache .mypy_cache .ruff_cache build dist
