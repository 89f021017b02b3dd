"""Credentials never reach the output: every secret of the kubeconfig is replaced in every message.

The client's own log records (an exec credential plugin's failure quotes its stderr, which may echo
its environment) go through the same redaction, as one escaped line on stderr.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
from typing import Any

from ..safe_text import note

SECRET_USER_FIELDS = ("token", "password", "client-key-data")
SECRET_PROVIDER_FIELDS = ("id-token", "refresh-token", "client-secret", "access-token")


class Redactor:
    """Replaces every credential of the kubeconfig in a message; used on all exception texts."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()

    def add(self, value: Any) -> None:
        if isinstance(value, str) and len(value.strip()) >= 4:
            self.secrets.add(value.strip())
            for line in value.splitlines():  # a PEM key may be quoted one line at a time
                if len(line.strip()) >= 16 and "-----" not in line:
                    self.secrets.add(line.strip())

    def add_user(self, user: dict[str, Any], base_folder: str) -> None:
        """Every secret of a kubeconfig user entry (also when it is nested wrongly)."""
        if isinstance(user.get("user"), dict):
            self.add_user(user["user"], base_folder)
        for key in SECRET_USER_FIELDS:
            self.add(user.get(key))
        if isinstance(user.get("client-key-data"), str):
            with contextlib.suppress(ValueError):  # not base64: the raw text was added above
                self.add(base64.b64decode(user["client-key-data"]).decode("utf-8", "replace"))
        if isinstance(user.get("username"), str) and isinstance(user.get("password"), str):
            self.add(base64.b64encode(f"{user['username']}:{user['password']}".encode()).decode())
        key_file = user.get("client-key")
        if isinstance(key_file, str):
            try:
                with open(os.path.join(base_folder, os.path.expanduser(key_file)), encoding="utf-8") as handle:
                    self.add(handle.read())
            except (OSError, UnicodeDecodeError):
                pass
        provider = user.get("auth-provider")
        if isinstance(provider, dict) and isinstance(provider.get("config"), dict):
            for key in SECRET_PROVIDER_FIELDS:
                self.add(provider["config"].get(key))
        plugin = user.get("exec")
        if isinstance(plugin, dict):
            for variable in plugin.get("env") or []:
                if isinstance(variable, dict):
                    self.add(variable.get("value"))

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "<redacted>")
        return text


class _RedactedLog(logging.Handler):
    """The client's log records (an exec plugin's failure quotes its stderr) as redacted one-line notes.

    urllib3's own warnings are left out: the error it goes on to raise gets a message of ours.
    """

    def __init__(self, redact: Redactor) -> None:
        super().__init__(logging.WARNING)
        self.redact = redact

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] == "urllib3":
            return
        with contextlib.suppress(Exception):  # a log call must never end the run
            note(self.redact(f"kubernetes client: {record.getMessage()}"))


def route_client_logging(redact: Redactor) -> None:
    """Send every log record (the client logs on the root logger) through the redaction, never raw to stderr."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _RedactedLog)]:
        root.removeHandler(handler)
    root.addHandler(_RedactedLog(redact))
