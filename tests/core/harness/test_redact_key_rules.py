"""The project key and the stable tokens, rule by rule: the token's HMAC for every key length and its
normalisation, the key id old recordings carry, where the project key is looked for and how each failure names its
source and says what to do, how a new key file is created (modes, a concurrent creator, a filesystem without hard
links), and ``project_redactor`` (the key it uses, the one-off key and its note, the project's rules)."""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import stat
from pathlib import Path

import pytest

from tracetui.core.harness.redact import (
    RedactionKeyError,
    RedactionKeyMissing,
    StableTokens,
    load_key,
    project_redactor,
)

KEY_HELP = ("set TRACETUI_REDACTION_KEY to the key text (in CI: a secret), or TRACETUI_REDACTION_KEY_FILE to a key "
            "file, or write one to .tracetui/redaction.key with: python -c 'import secrets; "
            "print(secrets.token_hex(32))' > .tracetui/redaction.key (keep it out of git: recordings made with "
            "another key share no tokens with yours)")


def _hmac_token(key: bytes, kind: str, norm: str) -> str:
    """The documented token, computed with the standard library's HMAC (not the redactor's)."""
    digest = hmac.new(key, (kind + "\0" + norm).encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    return f"<{kind.upper()}_{digest[:8]}>"


# ----------------------------------------------------------------------------- tokens


@pytest.mark.parametrize("length", [1, 63, 64, 65, 100])
def test_a_token_is_hmac_sha256_under_keys_of_every_length_longer_than_a_block_too(length: int) -> None:
    """HMAC hashes a key longer than its 64-byte block first; a key of exactly 64 bytes is used as is."""
    key = bytes(range(1, length + 1))
    assert StableTokens(key).token("secret", "hunter2") == _hmac_token(key, "secret", "hunter2")


def test_the_key_id_recordings_carry_is_sha256_of_the_domain_separated_key() -> None:
    """A header's key_id is compared with the current key's: it must not change between versions."""
    key = b"test-redaction-key-0123456789abcdef"
    expected = hashlib.sha256(b"tracetui redaction key id v1\0" + key).hexdigest()[:12]
    assert StableTokens(key).key_id == expected


def test_card_and_phone_tokens_keep_only_digits_and_a_leading_plus_after_spaces() -> None:
    tokens = StableTokens(b"k" * 20)
    assert tokens.token("card", "4111 1111 1111 1111 VISA") == tokens.token("card", "4111111111111111")
    assert tokens.token("phone", "  +33 6 12 34 56 78") == tokens.token("phone", "+33612345678")
    assert tokens.token("phone", "+33 6 12 34 56 78") != tokens.token("phone", "33612345678")


def test_a_value_holding_a_lone_surrogate_still_gets_its_own_token() -> None:
    """JSON ``"\\ud800"`` reads as a lone surrogate: the value is hashed as it is, not refused."""
    tokens = StableTokens(b"k" * 20)
    assert tokens.token("secret", "ab\ud800cd") == _hmac_token(b"k" * 20, "secret", "ab\ud800cd")
    assert tokens.token("secret", "ab\ud800cd") != tokens.token("secret", "abcd")


def test_an_empty_key_is_refused_naming_the_constructor_and_where_to_get_one() -> None:
    with pytest.raises(RedactionKeyError) as e:
        StableTokens(b"")
    assert (e.value.source, e.value.reason) == (
        "Redactor(key=...)", "the key must be non-empty bytes; get one from load_key()")
    assert str(e.value) == "Redactor(key=...): the key must be non-empty bytes; get one from load_key()"


# ----------------------------------------------------------------------------- load_key: each failure names its source


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("TRACETUI_REDACTION_KEY", raising=False)
    monkeypatch.delenv("TRACETUI_REDACTION_KEY_FILE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _error(**kwargs) -> RedactionKeyError:
    with pytest.raises(RedactionKeyError) as e:
        load_key(**kwargs)
    return e.value


def test_a_named_key_file_that_does_not_exist_names_it_and_says_how_to_create_one(clean_env: Path) -> None:
    path = clean_env / "nope.key"
    e = _error(path=str(path))
    assert e.source == str(path) and not isinstance(e, RedactionKeyMissing)
    assert e.reason == ("the redaction key file named here does not exist; fix the path, or create the file with: "
                        "python -c 'import secrets; print(secrets.token_hex(32))' > FILE (mode 0600, out of git)")


def test_no_key_anywhere_names_the_default_file_and_every_way_to_provide_one(clean_env: Path) -> None:
    with pytest.raises(RedactionKeyMissing) as e:
        load_key()
    assert e.value.source == str(clean_env / ".tracetui" / "redaction.key")
    assert e.value.reason == "no redaction key; " + KEY_HELP


def test_an_unreadable_key_file_names_it_and_the_system_reason(clean_env: Path) -> None:
    folder = clean_env / "dir.key"
    folder.mkdir()
    e = _error(path=str(folder))
    assert (e.source, e.reason) == (str(folder), "cannot read the redaction key (Is a directory); fix its permissions")


def test_a_bad_key_names_the_file_it_came_from_and_what_is_wrong(clean_env: Path) -> None:
    path = clean_env / "k.key"
    path.write_text("short")
    e = _error(path=str(path))
    assert e.source == str(path)
    assert e.reason == ("the redaction key is 5 characters; use at least 16 "
                        "(python -c 'import secrets; print(secrets.token_hex(32))')")
    path.write_bytes(b"\xff\xfe" * 10)
    e = _error(path=str(path))
    assert (e.source, e.reason) == (str(path), "the redaction key is not UTF-8 text; write it as hex text")
    path.write_text(" \n")
    e = _error(path=str(path))
    assert (e.source, e.reason) == (str(path), "the redaction key is empty; " + KEY_HELP)


def test_a_key_of_exactly_16_characters_is_accepted_15_is_not(clean_env: Path) -> None:
    path = clean_env / "k.key"
    path.write_text("0123456789abcdef\n")
    assert load_key(str(path)) == (b"0123456789abcdef", str(path))
    path.write_text("0123456789abcde")
    assert _error(path=str(path)).reason.startswith("the redaction key is 15 characters")


def test_a_bad_key_in_the_environment_names_the_variable(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "short")
    assert _error().source == "env TRACETUI_REDACTION_KEY"
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "   ")
    e = _error()
    assert (e.source, e.reason) == (
        "env TRACETUI_REDACTION_KEY",
        "set but empty (a missing CI secret?); set the key or unset TRACETUI_REDACTION_KEY")


def test_a_key_variable_holding_bytes_that_are_not_utf8_is_refused_as_not_utf8(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment hands such bytes over as surrogate escapes: they are the bytes given, which are not text."""
    monkeypatch.setenv("TRACETUI_REDACTION_KEY", "0123456789abcdef\udcff")
    e = _error()
    assert (e.source, e.reason) == ("env TRACETUI_REDACTION_KEY",
                                    "the redaction key is not UTF-8 text; write it as hex text")


def test_the_key_file_variable_names_itself_when_empty_and_the_file_when_bad(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACETUI_REDACTION_KEY_FILE", " ")
    e = _error()
    assert (e.source, e.reason) == (
        "env TRACETUI_REDACTION_KEY_FILE",
        "set but empty; name the key file or unset TRACETUI_REDACTION_KEY_FILE")
    path = clean_env / "k.key"
    path.write_text("short")
    monkeypatch.setenv("TRACETUI_REDACTION_KEY_FILE", str(path))
    assert _error().source == f"{path} (from env TRACETUI_REDACTION_KEY_FILE)"


def test_a_default_key_that_cannot_be_created_names_the_file_and_the_system_reason(clean_env: Path) -> None:
    (clean_env / ".tracetui").write_text("a file where the folder goes")
    e = _error(create=True)
    path = clean_env / ".tracetui" / "redaction.key"
    assert (e.source, e.reason) == (str(path), "cannot create the redaction key (File exists); " + KEY_HELP)


# ----------------------------------------------------------------------------- creating the key file


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_created_key_sits_in_a_private_folder_beside_a_readable_gitignore(clean_env: Path, umask_022) -> None:
    load_key(create=True)
    folder = clean_env / ".tracetui"
    assert (_mode(folder), _mode(folder / "redaction.key"), _mode(folder / ".gitignore")) == (0o700, 0o600, 0o644)


def _no_hard_links(monkeypatch: pytest.MonkeyPatch, before=None) -> None:
    """A filesystem without hard links (vfat, some network mounts): ``os.link`` fails with EPERM, after
    ``before`` ran (another process creating the key in the meantime)."""

    def link(src, dst, *args, **kwargs):
        if before is not None:
            before(Path(dst))
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", link)


def test_without_hard_links_the_key_is_created_in_place_private_and_no_temporary_file_left(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch, umask_022) -> None:
    _no_hard_links(monkeypatch)
    key, source = load_key(create=True)
    path = clean_env / ".tracetui" / "redaction.key"
    assert source == str(path) and re.fullmatch(rb"[0-9a-f]{64}", key)
    assert path.read_text() == key.decode() + "\n" and _mode(path) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == [".gitignore", "redaction.key"]


def test_without_hard_links_a_key_another_process_wrote_first_is_kept_and_read(
        clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    winner = "0123456789abcdef0123456789abcdef"
    _no_hard_links(monkeypatch, before=lambda dst: dst.write_text(winner + "\n"))
    assert load_key(create=True)[0] == winner.encode()
    assert (clean_env / ".tracetui" / "redaction.key").read_text() == winner + "\n"


# ----------------------------------------------------------------------------- project_redactor


def test_project_redactor_uses_the_named_key_file_and_the_sensitive_fields(clean_env: Path) -> None:
    path = clean_env / "k.key"
    path.write_text("0123456789abcdef0123\n")
    r, note = project_redactor(str(path), sensitive_fields={"crm": ["address"]})
    assert note is None and r.key_id == StableTokens(b"0123456789abcdef0123").key_id
    assert r.value({"address": "1 Main St"}, tool="crm") == {"address": r.token("sensitive", "1 Main St")}


def test_project_redactor_creates_the_default_key_only_when_asked(clean_env: Path) -> None:
    r, note = project_redactor(create=True)
    key = (clean_env / ".tracetui" / "redaction.key").read_text().strip().encode()
    assert note is None and r.key_id == StableTokens(key).key_id


def test_without_a_key_project_redactor_uses_a_one_off_key_and_says_what_that_costs(clean_env: Path) -> None:
    (clean_env / "pyproject.toml").write_text('[tool.tracetui.redaction]\nfields = ["member_no"]\n')
    r, note = project_redactor(sensitive_fields={"crm": ["address"]})
    assert not (clean_env / ".tracetui").exists()
    missing = f"{clean_env / '.tracetui' / 'redaction.key'}: no redaction key; {KEY_HELP}"
    assert note == (f"{missing} Using a one-off key: values the agent adds itself will not match tokens made with "
                    "the project key")
    assert r.value({"address": "1 Main St"}, tool="crm") == {"address": r.token("sensitive", "1 Main St")}
    assert r.value({"member_no": "AB12CD"}) == {"member_no": r.token("secret", "AB12CD")}  # the project's rules
    _, with_recorded = project_redactor(recorded_key="abc123abc123")
    assert with_recorded == note + " (the recording was redacted with key abc123abc123)"


def test_project_redactor_with_a_key_runs_the_projects_own_rules(clean_env: Path) -> None:
    (clean_env / "pyproject.toml").write_text('[tool.tracetui.redaction]\nfields = ["member_no"]\n')
    path = clean_env / "k.key"
    path.write_text("0123456789abcdef0123\n")
    r, _ = project_redactor(str(path))
    assert r.value({"member_no": "AB12CD"}) == {"member_no": r.token("secret", "AB12CD")}
