"""Fixtures the kernel tests share: one kernel per module, handed to each test as new."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kernel import FrontEnd, loaded_front_end


@pytest.fixture(scope="module")
def shared_kernel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontEnd]:
    """One kernel for a module's tests, started in a folder of its own with architect_nb loaded: ipykernel 7,
    or each of `kernel_params()` where the module says
    `pytestmark = pytest.mark.parametrize("shared_kernel", kernel_params(), indirect=True, scope="module")`.
    Tests take it through `kernel_as_new`, never directly, so none sees another's state."""
    name = str(getattr(request, "param", "ipk7"))
    tmp = tmp_path_factory.mktemp(f"{request.module.__name__.rsplit('.', 1)[-1]}-{name}")
    with loaded_front_end(name, tmp, tmp) as player:
        yield player


@pytest.fixture
def kernel_as_new(shared_kernel: FrontEnd) -> FrontEnd:
    """The module's kernel as new: no earlier test's names, config, runs or cells (`FrontEnd.hand_over`)."""
    return shared_kernel.hand_over()
