"""``kimiops.env.env_var``: the hot-path environment read agrees with ``os.environ.get`` through
every way a variable changes."""

import os

from kimiops.env import env_var


def test_env_var_follows_os_environ(monkeypatch):
    name = "KIMIOPS_TEST_ENV_VAR"
    monkeypatch.delenv(name, raising=False)
    assert env_var(name) is None
    monkeypatch.setenv(name, "1")
    assert env_var(name) == "1" == os.environ.get(name)
    os.environ[name] = "héllo"  # non-ASCII round trip
    assert env_var(name) == "héllo"
    del os.environ[name]
    assert env_var(name) is None
    monkeypatch.setenv(name, "")
    assert env_var(name) == ""


def test_debug_flag_reads_through_env_var(monkeypatch):
    from kimiops.validation import debug_enabled

    monkeypatch.setenv("KIMIOPS_DEBUG", "1")
    assert debug_enabled()
    monkeypatch.setenv("KIMIOPS_DEBUG", "0")
    assert not debug_enabled()
    monkeypatch.delenv("KIMIOPS_DEBUG")
    assert not debug_enabled()
