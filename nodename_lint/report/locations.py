"""Where things live for the formats read by code hosts: files relative to the repository root, rule docs.

SARIF viewers and GitHub annotations match a finding to a file of the repository, so they need the
path from the repository root, whatever folder the tool was started in.
"""

from __future__ import annotations

import os
from urllib.parse import quote

from ..sources import STDIN_NAME

PROJECT_URL = "https://github.com/nodename-lint/nodename-lint"
# docs/rules/<id>.md is generated from Rule.documentation() (tests/test_rule_docs.py keeps it in sync).
RULE_DOC_URL = PROJECT_URL + "/blob/main/docs/rules/{rule}.md"


def rule_doc_url(rule_id: str) -> str:
    return RULE_DOC_URL.format(rule=rule_id)


def repository_path(file: str, root: str) -> str | None:
    """FILE relative to ROOT with forward slashes; None for stdin, which has no place in the repository."""
    if file == STDIN_NAME:
        return None
    return os.path.relpath(os.path.abspath(file), root).replace(os.sep, "/")


def relative_uri(path: str) -> str:
    """A repository path as a relative URI reference: percent-encoded, so `#`, `?`, `%`, `:` and spaces
    in a file name stay part of the path (RFC 3986 section 4.2; a `:` in the first segment would read as
    a scheme)."""
    return quote(path, safe="/")


def root_uri(root: str) -> str:
    """ROOT as a file:// URI ending in a slash (SARIF's originalUriBaseIds)."""
    path = root.replace(os.sep, "/").rstrip("/") + "/"
    if not path.startswith("/"):
        path = "/" + path  # a Windows drive letter
    return "file://" + quote(path)
