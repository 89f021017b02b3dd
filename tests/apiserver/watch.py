"""Watches for the loopback API server: changes with resourceVersions, an event history, watch streams.

As the API server's watch cache serves them: a watch from resourceVersion N replays every change after
N to the objects it selects, then follows new ones as chunked JSON lines (`{"type": ..., "object": ...}`)
until its timeoutSeconds; with allowWatchBookmarks it gets a BOOKMARK with the current version every
`bookmark_seconds`. An object that starts or stops matching the watch's field selector arrives as ADDED
or DELETED. A version older than the history (after `compact()`) gets a 200 with an ERROR event
(Status 410 Expired, "too old resource version"), as kube-apiserver sends it. `cut()` drops every open
watch connection without its last chunk: what a client sees when the network fails.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler


@dataclass(frozen=True)
class Change:
    version: int
    resource: str
    type: str  # ADDED, MODIFIED, DELETED
    old: dict[str, Any] | None  # before the change (None for ADDED)
    new: dict[str, Any]  # after it (for DELETED: as it was deleted)


class History:
    """Every change since the last compaction, and the current resourceVersion; watchers wait on `changed`."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.oldest = version  # a watch from an older version gets 410
        self.changes: list[Change] = []
        self.changed = threading.Condition()
        self.cuts = 0  # bumped by cut(): every open watch ends at once
        self.bookmark_seconds = 60.0
        self.expired_delay = 0.0  # seconds between a watch's 200 and its 410 ERROR event

    def record(self, resource: str, type_: str, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        """Add a change; returns the object with its new resourceVersion."""
        with self.changed:
            self.version += 1
            stamped = {**new, "metadata": {**new.get("metadata", {}), "resourceVersion": str(self.version)}}
            self.changes.append(Change(self.version, resource, type_, old, stamped))
            self.changed.notify_all()
        return stamped

    def compact(self) -> None:
        """Like etcd compaction: the history so far is gone, a watch from an older version gets 410."""
        with self.changed:
            self.changes.clear()
            self.oldest = self.version
            self.changed.notify_all()

    def cut(self) -> None:
        with self.changed:
            self.cuts += 1
            self.changed.notify_all()


def _event(type_: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": type_, "object": obj}, separators=(",", ":")).encode() + b"\n"


def _chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    handler.wfile.flush()


@dataclass
class WatchStream:
    """One watch request, served on its handler's connection until its timeout, a cut, or the server stops."""

    history: History
    resource: str
    kind: str
    api_version: str
    selects: Callable[[dict[str, Any]], bool]  # namespace and field selector of the request
    query: dict[str, str]
    current: Callable[[], list[dict[str, Any]]]  # the objects now (a watch without resourceVersion starts there)
    stopping: threading.Event

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.close_connection = True
        try:
            if self._stream(handler):
                handler.wfile.write(b"0\r\n\r\n")  # the server ended the watch: the last chunk
                handler.close_connection = self.stopping.is_set()  # kept alive, as kube-apiserver does
        except OSError:
            pass  # the client hung up

    def _stream(self, handler: BaseHTTPRequestHandler) -> bool:
        """False when cut (the connection is dropped without its last chunk)."""
        history = self.history
        deadline = time.monotonic() + float(self.query.get("timeoutSeconds") or 1800)
        bookmarks = self.query.get("allowWatchBookmarks") == "true"
        requested = self.query.get("resourceVersion") or ""
        with history.changed:
            cuts, oldest = history.cuts, history.oldest
            expired = bool(requested) and requested != "0" and int(requested) < oldest
            if not expired and requested in ("", "0"):  # the state now, as synthetic ADDED events
                for obj in self.current():
                    if self.selects(obj):
                        _chunk(handler, _event("ADDED", self._typed(obj)))
            seen = history.version if requested in ("", "0") else int(requested)
        if expired:  # the 200 is out: the ERROR follows, late when the server is slow (`expired_delay`)
            time.sleep(history.expired_delay)
            message = f"too old resource version: {requested} ({oldest})"
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
            _chunk(handler, _event("ERROR", {**status, "message": message, "reason": "Expired", "code": 410}))
            return True
        next_bookmark = time.monotonic() + history.bookmark_seconds
        while True:
            with history.changed:
                while (
                    history.version == seen
                    and history.cuts == cuts
                    and not self.stopping.is_set()
                    and time.monotonic() < min(deadline, next_bookmark)
                ):
                    history.changed.wait(min(deadline, next_bookmark) - time.monotonic())
                if history.cuts != cuts:
                    handler.connection.shutdown(socket.SHUT_RDWR)
                    return False
                pending = [change for change in history.changes if change.version > seen]
                seen = history.version
            for change in pending:
                event = self._event_of(change)
                if event is not None:
                    _chunk(handler, event)
            now = time.monotonic()
            if self.stopping.is_set() or now >= deadline:
                return True
            if now >= next_bookmark:
                if bookmarks:
                    bookmark = {"kind": self.kind, "apiVersion": self.api_version}
                    _chunk(handler, _event("BOOKMARK", {**bookmark, "metadata": {"resourceVersion": str(seen)}}))
                next_bookmark = now + history.bookmark_seconds

    def _event_of(self, change: Change) -> bytes | None:
        if change.resource != self.resource:
            return None
        before = change.old is not None and self.selects(change.old)
        after = change.type != "DELETED" and self.selects(change.new)
        if change.type == "DELETED":
            return _event("DELETED", self._typed(change.new)) if before else None
        if before and after:
            return _event("MODIFIED", self._typed(change.new))
        if after:
            return _event("ADDED", self._typed(change.new))
        if before:  # it no longer matches the selector: gone from this watch
            return _event("DELETED", self._typed(change.new))
        return None

    def _typed(self, obj: dict[str, Any]) -> dict[str, Any]:
        return {"kind": self.kind, "apiVersion": self.api_version, **obj}
