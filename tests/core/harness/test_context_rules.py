"""Rules of ``core/harness/context.py`` pinned directly (issue 25: survivors of its mutation run)."""

from __future__ import annotations

import pytest

from tracetui.core.errors import RecordedToolError
from tracetui.core.harness.context import _recorded_error


def test_a_recorded_tool_error_is_raised_as_the_builtin_class_it_names_and_carries_the_recording() -> None:
    e = _recorded_error("get", "TimeoutError", {"message": "slow"})
    assert isinstance(e, TimeoutError) and isinstance(e, RecordedToolError) and type(e).__name__ == "TimeoutError"
    assert (e.tool, e.error_type, e.output, str(e)) == ("get", "TimeoutError", {"message": "slow"}, "slow")
    with pytest.raises(TimeoutError):
        raise e


@pytest.mark.parametrize("error_type", [None, "", "Exception", "BaseException", "KeyboardInterrupt", "print",
                                        "NoSuchError", "int"])
def test_a_recorded_error_naming_no_builtin_exception_is_a_plain_recorded_tool_error(error_type: str | None) -> None:
    e = _recorded_error("get", error_type, "boom")
    assert type(e) is RecordedToolError
    assert (e.tool, e.error_type, e.output) == ("get", error_type, "boom")
    assert str(e) == f"get: recorded {error_type or 'error'}: boom"
