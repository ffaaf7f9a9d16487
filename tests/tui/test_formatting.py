"""Display text of trace values: literal, control characters made visible, widths exact."""

from __future__ import annotations

from rich.cells import cell_len

from tests.builders import make_span
from tracetui.tui.formatting import args_preview, fit, full_text, one_line, span_label, visible


def test_visible_replaces_control_and_escape_characters() -> None:
    """ESC, NUL, DEL, C1 CSI, bidi overrides and lone surrogates become visible stand-ins; text is kept."""
    out = visible("a\x1b[31mb\x00c\x7fd\x9be\u202ef\ud800g\rh")
    assert out == "a␛[31mb␀c␡d\\x9be\\u202ef\\ud800g␍h"
    assert all(ord(ch) >= 0x20 and not 0x7F <= ord(ch) < 0xA0 for ch in out)


def test_visible_newlines_mode_keeps_line_breaks() -> None:
    """Multi-line mode keeps \\n, turns tabs into spaces; one-line mode shows ↵."""
    assert visible("a\nb\tc", newlines=True) == "a\nb    c"
    assert visible("a\nb") == "a↵b"


def test_markup_is_not_interpreted() -> None:
    """Markup-looking text is returned unchanged (it is drawn as Text/Segments, never parsed)."""
    assert visible("[bold red]x[/]") == "[bold red]x[/]"
    assert one_line("[b]y[/b]") == '"[b]y[/b]"'


def test_one_line_is_compact_json_clipped() -> None:
    """Values show as compact JSON; long ones end with an ellipsis at the limit."""
    assert one_line({"a": [1, None]}) == '{"a":[1,null]}'
    long = one_line("x" * 1000, limit=20)
    assert len(long) == 20 and long.endswith("…")


def test_full_text_pretty_prints_json_and_json_strings() -> None:
    """Objects and JSON strings are indented; multi-line strings keep their line breaks; length is reported."""
    text, total = full_text('{"b": 1, "a": [2]}')
    assert text == '{\n  "b": 1,\n  "a": [\n    2\n  ]\n}'
    assert total == len(text)
    plain, _ = full_text("line one\nline \x1b two")
    assert plain == "line one\nline ␛ two"
    assert full_text("404")[0] == '"404"' and full_text(404)[0] == "404"  # one-line strings keep their quotes
    cut, total = full_text("y\n" * 50, limit=10)
    assert cut == "y\n" * 5 and total == 100


def test_fit_pads_and_cuts_to_exact_cells_including_wide_characters() -> None:
    """fit returns exactly `width` cells: padded, or cut with an ellipsis, double-width characters counted."""
    assert fit("abc", 5) == "abc  "
    assert fit("abcdef", 4) == "abc…"
    assert cell_len(fit("日本語のテキスト", 7)) == 7


def test_tool_label_shows_name_and_arguments() -> None:
    """A tool span reads tool_name(key=value, ...) with JSON values; an error span leads with ✗ and its error type."""
    span = make_span("tool", "check_availability", arguments={"date": "2026-11-06", "n": 2})
    assert span_label(span) == 'check_availability(date="2026-11-06", n=2)'
    failed = make_span("tool", "book", arguments={}, status="error", error_type="TimeoutError")
    assert span_label(failed) == "✗ TimeoutError book()"


def test_args_preview_parses_json_string_arguments() -> None:
    """Arguments recorded as a JSON string are shown like an object."""
    assert args_preview('{"q": "x"}') == 'q="x"'


def test_llm_and_decision_labels_say_what_was_decided() -> None:
    """An LLM span shows its tool calls or answer; a decision span shows decision → value."""
    call = {"name": "lookup", "arguments": {"id": 7}}
    llm = make_span("llm", "chat gpt-4o", output={"role": "assistant", "tool_calls": [call]})
    assert span_label(llm) == "chat gpt-4o → lookup(id=7)"
    dec = make_span("decision", "decision route", decision="route", value="billing")
    assert span_label(dec) == "route → billing"


def test_fold_wraps_at_spaces_and_keeps_newlines() -> None:
    """fold breaks prose after a space, long words mid-word, keeps line breaks, and marks a cut with …."""
    from rich.text import Text

    from tracetui.tui.widgets.text_lines import fold

    plain = [t.plain for t in fold(Text("You are the scheduling assistant of Lumen"), 20)]
    assert plain == ["You are the ", "scheduling assistant", "of Lumen"]
    assert [t.plain for t in fold(Text("abcdefghij"), 4)] == ["abcd", "efgh", "ij"]
    assert [t.plain for t in fold(Text("a\n\nb"), 10)] == ["a", "", "b"]
    assert [t.plain for t in fold(Text("abcdefghij"), 4, max_lines=2)] == ["abcd", "efg…"]
    assert all(cell_len(t.plain) <= 6 for t in fold(Text("日本語のテキストです"), 6))


def test_absent_is_a_dash_and_null_is_null_never_a_crash() -> None:
    """ABSENT (no such field) formats as `—`, alone or nested; None (a recorded null) as `null`; nothing raises."""
    from tracetui.core.diff.compare import ABSENT
    from tracetui.tui.formatting import full_text, one_line, to_json

    assert one_line(ABSENT) == "—" and full_text(ABSENT) == ("—", 1)
    assert one_line(None) == "null" and full_text(None) == ("null", 4)
    assert to_json({"a": ABSENT, "b": [ABSENT, None]}) == '{"a":"(absent)","b":["(absent)",null]}'


def test_a_placeholder_is_labelled_as_not_written_yet() -> None:
    """Watch mode names a parent not written yet as the original's span it stands for (so they pair); the
    label says it is not written yet, once."""
    from tracetui.core.model import Span, SpanKind, Status
    from tracetui.core.watch import PLACEHOLDER
    from tracetui.tui.formatting import span_label

    def ph(name: str) -> Span:
        return Span("p", None, 1, SpanKind.AGENT, name, None, None, Status.UNSET, None, {}, {PLACEHOLDER: True})

    assert span_label(ph("session")) == "session (not written yet)"
    assert span_label(ph("run (not written yet)")) == "run (not written yet)"
    assert span_label(ph("(not written yet)")) == "(not written yet)"
    real = Span("s", None, 1, SpanKind.AGENT, "session", None, None, Status.OK, None, {}, {})
    assert span_label(real) == "session"
