"""MCP against real servers: the published `mcp-server-git` over stdio on a real git repository, a small SDK
server of ours (tests/support/mcp_toy_server.py) over stdio and over streamable HTTP with a bearer token, and
servers that are missing, hang, or die in the middle of a call. Nothing is mocked.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from architect_nb.config.schema import AppConfig, MCPConfig, MCPServerConfig, WorkspaceConfig
from architect_nb.execution.build import build_engine
from architect_nb.execution.confirmation.policy import ConfirmationPolicy
from architect_nb.execution.engine import ExecutionEngine
from architect_nb.mcp import MCPManager, MCPToolAdapter, inject_mcp_tools, register_mcp_tools
from architect_nb.tools.registry import ToolRegistry

TOY = str(Path(__file__).resolve().parents[2] / "support" / "mcp_toy_server.py")
GIT_SERVER = shutil.which("mcp-server-git", path=str(Path(sys.executable).parent)) or "mcp-server-git"


def git_server(repo: Path, **extra: object) -> MCPServerConfig:
    return MCPServerConfig.model_validate(
        {"name": "git", "command": GIT_SERVER, "args": ["--repository", str(repo)], **extra}
    )


def toy_server(name: str = "toy", **extra: object) -> MCPServerConfig:
    return MCPServerConfig.model_validate(
        {"name": name, "command": sys.executable, "args": [TOY, "stdio"], **extra}
    )


def live_children(marker: str) -> list[int]:
    """PIDs of this process's children whose command line contains `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == os.getpid() and marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real repository: one commit, then an unstaged edit and an untracked file."""
    repo = Path(os.path.realpath(tmp_path_factory.mktemp("mcp_git") / "repo"))
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.invalid",
        "GIT_COMMITTER_NAME": "Ada Lovelace",
        "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "README.md").write_text("# Analytical engine\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "Describe the analytical engine")
    (repo / "README.md").write_text("# Analytical engine\n\nNote G computes Bernoulli numbers.\n")
    (repo / "notes.txt").write_text("untracked\n")
    return repo


@pytest.fixture(scope="module")
def git_manager(git_repo: Path) -> Iterator[MCPManager]:
    manager = MCPManager(MCPConfig(servers=[git_server(git_repo)]))
    assert manager.start() == []
    yield manager
    manager.close()


@pytest.fixture(scope="module")
def toy_manager() -> Iterator[MCPManager]:
    manager = MCPManager(MCPConfig(servers=[toy_server()]))
    assert manager.start() == []
    yield manager
    manager.close()


@pytest.fixture
def yolo_engine(git_repo: Path) -> ExecutionEngine:
    return build_engine(AppConfig(workspace=WorkspaceConfig(root=git_repo)), mode="yolo")


# ---------------------------------------------------------------- mcp-server-git, a server we did not write


@pytest.mark.slow
def test_git_server_tools_are_listed_as_sensitive_local_tools(git_manager: MCPManager) -> None:
    names = {tool.name for tool in git_manager.tools}
    assert {
        "mcp_git_git_status",
        "mcp_git_git_log",
        "mcp_git_git_diff_unstaged",
        "mcp_git_git_commit",
    } <= names
    for tool in git_manager.tools:
        assert tool.sensitive and tool.server_name == "git"
        function = tool.get_schema()["function"]
        assert function["name"] == tool.name and function["description"]
        assert function["parameters"]["type"] == "object"
        assert "repo_path" in function["parameters"]["required"]
        assert "title" not in function["parameters"]


@pytest.mark.slow
def test_git_status_log_and_diff_through_the_engine(
    git_manager: MCPManager, git_repo: Path, yolo_engine: ExecutionEngine
) -> None:
    assert git_manager.register_tools(yolo_engine.registry) == []
    status = yolo_engine.execute_tool_call("mcp_git_git_status", {"repo_path": str(git_repo)})
    assert status.success, status.error
    assert "notes.txt" in status.output and "README.md" in status.output
    assert "On branch main" in status.output

    log = yolo_engine.execute_tool_call("mcp_git_git_log", {"repo_path": str(git_repo), "max_count": 5})
    assert log.success, log.error
    assert "Describe the analytical engine" in log.output and "Ada Lovelace" in log.output

    diff = yolo_engine.execute_tool_call("mcp_git_git_diff_unstaged", {"repo_path": str(git_repo)})
    assert diff.success, diff.error
    assert "+Note G computes Bernoulli numbers." in diff.output


@pytest.mark.slow
def test_git_server_errors_and_bad_arguments_come_back_as_failed_results(
    git_manager: MCPManager, git_repo: Path, yolo_engine: ExecutionEngine
) -> None:
    git_manager.register_tools(yolo_engine.registry)
    outside = yolo_engine.execute_tool_call("mcp_git_git_status", {"repo_path": "/"})
    assert not outside.success
    assert "mcp_git_git_status" in (outside.error or "") and "outside" in (outside.error or "")
    missing = yolo_engine.execute_tool_call("mcp_git_git_log", {"max_count": "ten"})
    assert not missing.success
    assert "repo_path" in (missing.error or "") and "max_count" in (missing.error or "")


@pytest.mark.slow
def test_mcp_tools_need_approval_in_confirm_sensitive_mode(git_manager: MCPManager) -> None:
    policy = ConfirmationPolicy("confirm-sensitive")
    assert all(policy.should_confirm(tool) for tool in git_manager.tools)


@pytest.mark.slow
def test_discovered_tools_join_an_agents_explicit_list(git_manager: MCPManager) -> None:
    registry = ToolRegistry()
    git_manager.register_tools(registry)
    allowed = inject_mcp_tools(["read_file", "edit_file"], registry)
    assert allowed is not None and allowed[:2] == ["read_file", "edit_file"]
    assert set(allowed[2:]) == {tool.name for tool in git_manager.tools}


# ---------------------------------------------------------------- names that clash, schemas that are odd


@pytest.mark.slow
def test_clashing_argument_names_reach_the_server_under_their_own_names(
    toy_manager: MCPManager, yolo_engine: ExecutionEngine
) -> None:
    toy_manager.register_tools(yolo_engine.registry)
    result = yolo_engine.execute_tool_call(
        "mcp_toy_odd_names", {"schema": "s", "from": "3", "my-field": True, "model_config": {"k": 1}}
    )
    assert result.success, result.error
    assert result.output == '{"from": 3, "model_config": {"k": 1}, "my-field": true, "schema": "s"}'
    unknown = yolo_engine.execute_tool_call("mcp_toy_odd_names", {"schema": "s", "from": 1, "extra": 1})
    assert not unknown.success and "extra" in (unknown.error or "")  # additionalProperties: false


@pytest.mark.slow
def test_hostile_schema_from_a_live_server(toy_manager: MCPManager, yolo_engine: ExecutionEngine) -> None:
    toy_manager.register_tools(yolo_engine.registry)
    schema = yolo_engine.registry.get("mcp_toy_hostile").get_schema()["function"]["parameters"]
    assert schema["properties"]["weird"] == {} and schema["properties"]["junk"] == {}
    assert schema["properties"]["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    result = yolo_engine.execute_tool_call(
        "mcp_toy_hostile", {"mode": "fast", "ghost": [1], "either": 2, "1st": None, "": "empty name"}
    )
    assert result.success, result.error
    assert result.output == '{"": "empty name", "1st": null, "either": 2, "ghost": [1], "mode": "fast"}'


@pytest.mark.slow
def test_is_error_result_is_a_failure_with_the_servers_message(toy_manager: MCPManager) -> None:
    registry = ToolRegistry()
    toy_manager.register_tools(registry)
    result = registry.get("mcp_toy_fail").execute(message="disk on fire")
    assert not result.success
    assert "failed on purpose: disk on fire" in (result.error or "")


@pytest.mark.slow
def test_calls_from_many_threads_share_one_connection(toy_manager: MCPManager) -> None:
    registry = ToolRegistry()
    toy_manager.register_tools(registry)
    echo = registry.get("mcp_toy_echo")
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: echo.execute(text=f"call {i}"), range(32)))
    assert [r.output for r in results] == [f"call {i}" for i in range(32)]


# ---------------------------------------------------------------- servers that are missing, hang or die


def test_missing_command_leaves_a_warning_and_no_tools() -> None:
    registry = ToolRegistry()
    with MCPManager(
        MCPConfig(servers=[MCPServerConfig(name="ghost", command="/no/such/mcp-server")])
    ) as manager:
        warnings = register_mcp_tools(registry, manager.config, manager=manager)
    assert len(warnings) == 1
    assert "ghost" in warnings[0] and "not found" in warnings[0] and "left out" in warnings[0]
    assert registry.count() == 0


def test_bad_server_entries_are_warnings() -> None:
    config = MCPConfig(
        servers=[
            MCPServerConfig(name="both", command="x", url="http://127.0.0.1:1/mcp"),
            MCPServerConfig(name="neither"),
            MCPServerConfig(name="ftp", url="ftp://127.0.0.1/mcp"),
            MCPServerConfig(
                name="tokenless", url="http://127.0.0.1:1/mcp", token_env="ARCHITECT_NB_NO_SUCH_VAR"
            ),
        ]
    )
    with MCPManager(config) as manager:
        warnings = manager.start()
    assert [w.split("'")[1] for w in warnings] == ["both", "neither", "ftp", "tokenless"]
    assert "ARCHITECT_NB_NO_SUCH_VAR" in warnings[3]


@pytest.mark.slow
def test_server_that_exits_at_start_up_is_a_warning_with_its_stderr(tmp_path: Path) -> None:
    config = MCPConfig(servers=[git_server(tmp_path / "not-a-repo")])
    registry = ToolRegistry()
    with MCPManager(config) as manager:
        warnings = manager.register_tools(registry)
    assert len(warnings) == 1 and "does not exist" in warnings[0]
    assert registry.count() == 0


@pytest.mark.slow
def test_one_server_down_does_not_stop_the_others(git_repo: Path) -> None:
    config = MCPConfig(servers=[MCPServerConfig(name="down", command="/no/such/cmd"), git_server(git_repo)])
    registry = ToolRegistry()
    with MCPManager(config) as manager:
        warnings = manager.register_tools(registry)
        assert len(warnings) == 1 and "down" in warnings[0]
        assert registry.has_tool("mcp_git_git_status")
        assert not any(name.startswith("mcp_down") for name in registry.names())
        assert registry.get("mcp_git_git_log").execute(repo_path=str(git_repo)).success


@pytest.mark.slow
def test_server_that_never_answers_times_out_at_start_up_and_is_stopped() -> None:
    marker = "architect-nb-silent-server"
    hang = MCPServerConfig(
        name="silent",
        command=sys.executable,
        args=["-c", f"import time; time.sleep(60)  # {marker}"],
        startup_timeout=0.5,
    )
    started = time.perf_counter()
    with MCPManager(MCPConfig(servers=[hang])) as manager:
        warnings = manager.start()
    assert len(warnings) == 1 and "did not finish starting within 0.5 s" in warnings[0]
    assert time.perf_counter() - started < 10
    assert live_children(marker) == []


@pytest.mark.slow
def test_slow_call_times_out_with_a_clear_error_and_the_server_stays_usable() -> None:
    registry = ToolRegistry()
    with MCPManager(MCPConfig(servers=[toy_server(timeout=0.5)])) as manager:
        assert manager.register_tools(registry) == []
        started = time.perf_counter()
        result = registry.get("mcp_toy_slow").execute(seconds=30)
        assert time.perf_counter() - started < 5
        assert not result.success
        assert "did not answer within 0.5 s" in (result.error or "")
        assert registry.get("mcp_toy_echo").execute(text="still here").output == "still here"


@pytest.mark.slow
def test_server_crash_mid_call_is_a_failed_result_and_later_calls_fail_fast() -> None:
    registry = ToolRegistry()
    manager = MCPManager(MCPConfig(servers=[toy_server("fragile", restarts=0)]))
    try:
        assert manager.register_tools(registry) == []
        crashed = registry.get("mcp_fragile_crash").execute()
        assert not crashed.success
        assert "stopped while running 'crash'" in (crashed.error or "")
        assert "crashing on purpose" in (crashed.error or "")  # the server's last stderr line
        assert "unavailable for the rest of this run" in (crashed.error or "")
        after = registry.get("mcp_fragile_echo").execute(text="hello?")
        assert not after.success and "no longer running" in (after.error or "")
        assert not manager.connections[0].alive
    finally:
        manager.close()


@pytest.mark.slow
def test_a_crashed_server_is_started_again_for_the_next_call_until_its_restarts_run_out() -> None:
    marker = "architect-nb-restart-test"
    registry = ToolRegistry()
    manager = MCPManager(MCPConfig(servers=[toy_server("fragile", args=[TOY, "stdio", marker], restarts=1)]))
    try:
        assert manager.register_tools(registry) == []
        first_pid = live_children(marker)
        crashed = registry.get("mcp_fragile_crash").execute()
        assert not crashed.success and "started again for the next call" in (crashed.error or "")
        assert live_children(marker) == []  # the crashed call is not retried
        echo = registry.get("mcp_fragile_echo").execute(text="back")
        assert echo.success and echo.output == "back", echo.error
        assert manager.connections[0].alive and live_children(marker) not in ([], first_pid)
        crashed_again = registry.get("mcp_fragile_crash").execute()
        assert "unavailable for the rest of this run" in (crashed_again.error or "")  # no restart left
        after = registry.get("mcp_fragile_echo").execute(text="hello?")
        assert not after.success and "no longer running" in (after.error or "")
    finally:
        manager.close()
    assert live_children(marker) == []


@pytest.mark.slow
def test_close_terminates_the_server_processes() -> None:
    marker = "architect-nb-close-test"
    servers = [toy_server(name, args=[TOY, "stdio", marker]) for name in ("a", "b")]
    manager = MCPManager(MCPConfig(servers=servers))
    assert manager.start() == []
    assert len(live_children(marker)) == 2
    manager.close()
    assert live_children(marker) == []
    manager.close()  # twice is fine
    result = manager.tools[0].execute(text="x")
    assert not result.success and "not connected" in (result.error or "")


# ---------------------------------------------------------------- streamable HTTP with a bearer token


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, str]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "test-token-" + os.urandom(6).hex()
    process = subprocess.Popen(
        [sys.executable, TOY, "http", str(port), token], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the toy HTTP MCP server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.slow
def test_streamable_http_with_bearer_token(
    http_server: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, token = http_server
    monkeypatch.setenv("TOY_MCP_TOKEN", token)
    registry = ToolRegistry()
    config = MCPConfig(servers=[MCPServerConfig(name="web", url=url, token_env="TOY_MCP_TOKEN")])
    with MCPManager(config) as manager:
        assert manager.register_tools(registry) == []
        assert all(isinstance(tool, MCPToolAdapter) for tool in registry.list_all())
        assert registry.get("mcp_web_add").execute(a=2, b=40).output == "42"
        assert registry.get("mcp_web_odd_names").execute(**{"schema": "x", "from": 1}).success


@pytest.mark.slow
def test_streamable_http_with_a_wrong_token_is_a_warning(
    http_server: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = http_server
    monkeypatch.setenv("TOY_MCP_TOKEN", "not-the-token-8d1f")
    registry = ToolRegistry()
    config = MCPConfig(servers=[MCPServerConfig(name="web", url=url, token_env="TOY_MCP_TOKEN")])
    with MCPManager(config) as manager:
        warnings = manager.register_tools(registry)
    assert len(warnings) == 1 and "'web'" in warnings[0] and "TOY_MCP_TOKEN" in warnings[0]
    assert "not-the-token-8d1f" not in warnings[0]  # the token itself is never shown
    assert registry.count() == 0


# ---------------------------------------------------------------- configuration


def test_servers_are_configured_under_mcp_servers_in_the_yaml(tmp_path: Path, git_repo: Path) -> None:
    from architect_nb.config import load_config

    config_file = tmp_path / ".architect.yaml"
    config_file.write_text(
        "mcp:\n"
        "  servers:\n"
        "    - name: git\n"
        f"      command: {GIT_SERVER}\n"
        f"      args: [--repository, {git_repo}]\n"
        "      timeout: 5\n"
        "    - name: remote\n"
        "      url: http://127.0.0.1:8765/mcp\n"
        "      token_env: REMOTE_MCP_TOKEN\n"
        "      startup_timeout: 2.5\n"
    )
    servers = load_config(config_file, environ={}).mcp.servers
    assert [s.name for s in servers] == ["git", "remote"]
    assert servers[0].args == ["--repository", str(git_repo)] and servers[0].timeout == 5
    assert servers[1].url == "http://127.0.0.1:8765/mcp" and servers[1].token_env == "REMOTE_MCP_TOKEN"
    assert servers[1].startup_timeout == 2.5
