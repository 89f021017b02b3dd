"""Watches that keep a WatchedState current, for as long as the process runs (the admission webhook).

Each kind (nodes, namespaces, RuntimeClasses, and the non-terminated Pods for the usage) is listed, then
watched from the list's resourceVersion with bookmarks, as client-go's reflector does: a watch the
server ends (its timeoutSeconds) starts again from the last version seen; a watch that is lost (reset,
silent past the idle bound, an ERROR event, a malformed object) starts again from that version after a
backoff; a version the server no longer has (410 Gone) means a relist. The requests are the GETs of
ApiConnection: a list and a watch per kind, and one GET of a node (confirm_node), nothing else.

While a kind is lost, until its watch is re-established or its relist completes, `degraded()` says
why: the webhook then turns every denial into a warning, since the state may be behind the cluster.
A watch resumed after a loss counts as re-established at its first event, or once SETTLE_SECONDS pass
without an ERROR: kube-apiserver accepts a watch (200) before it says the version is gone (410, an
ERROR event: Cacher.Watch answers a version GetAllEventsSinceThreadUnsafe no longer has with
newErrWatcher), and denials must not resume in between.
A kind the server refuses (403) is `unavailable` in the state: the rules that need it are skipped.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

import msgspec

from ..podspec import is_dns1123_subdomain
from ..safe_text import note
from .connection import ApiConnection, LiveOptions
from .errors import ClusterUnavailable, Forbidden, Gone
from .live import NON_TERMINATED, RUNTIME_CLASSES
from .objects import StateError, node_from_object
from .trimming import decode_node_page, decode_pod_page
from .watched import KEEP, PodSums, WatchedState, pod_entry

CONFIRM_TIMEOUT = 1.0  # seconds for the GET of a node the state lacks: a review has 3 s in all
WATCH_SECONDS = (300, 600)  # each watch asks the server to end it after a random time in this range, as client-go
IDLE_SECONDS = 150.0  # no byte for this long (the API server sends a bookmark every minute): the watch is lost
BACKOFF = (0.5, 30.0)  # seconds before a lost watch or a failed list is tried again: first, most
SETTLE_SECONDS = 1.0  # a resumed watch without an event or an ERROR this long follows the cluster again


@dataclass(frozen=True)
class WatchedKind:
    """One kind of the state and where the API serves it."""

    name: str  # as the state and the rules call it
    path: str
    field_selector: str = ""


WATCHED = (
    WatchedKind("nodes", "/api/v1/nodes"),
    WatchedKind("namespaces", "/api/v1/namespaces"),
    WatchedKind("runtime_classes", RUNTIME_CLASSES),
    WatchedKind("pods", "/api/v1/pods", NON_TERMINATED),  # a Pod that terminates leaves the watch as DELETED
)


@dataclass
class WatchStatus:
    """How the watch of one kind stands: for /readyz, the metrics, and whether denials are safe."""

    kind: str
    listed: bool = False  # a first full list is in (or the kind is refused)
    synced: bool = False  # the state follows the cluster now
    refused: str = ""  # why the server refuses this kind (403), its rules skipped
    problem: str = ""  # why it is not synced
    since: float = field(default_factory=time.monotonic)  # when `synced` last changed
    version: str = ""  # the last resourceVersion seen
    attempts: int = 0  # bumped at each loss (by the watch's thread alone): a settle timer from before does nothing
    relists: int = 0
    losses: int = 0
    events: dict[str, int] = field(default_factory=dict)  # by type: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR

    def set_synced(self, synced: bool, problem: str = "") -> None:
        if synced != self.synced:
            self.since = time.monotonic()
            if synced and self.listed:
                note(f"webhook: the watch of {self.kind} follows the cluster again; denials resume")
        self.synced, self.problem = synced, problem


class _Event(msgspec.Struct, gc=False):
    type: str
    object: dict[str, Any]


_EVENT = msgspec.json.Decoder(_Event)


class WatchedCluster:
    """The cluster state of a live cluster, kept current by one watch per kind, each in its own thread."""

    def __init__(
        self,
        options: LiveOptions,
        *,
        watch_seconds: tuple[int, int] = WATCH_SECONDS,
        idle_seconds: float = IDLE_SECONDS,
        backoff: tuple[float, float] = BACKOFF,
    ) -> None:
        self.connection = ApiConnection(options)  # lists and watches
        # the GET of a node a review names: its own short bound and pool, never behind a list
        self.lookups = ApiConnection(replace(options, request_timeout=min(options.request_timeout, CONFIRM_TIMEOUT)))
        self.state = WatchedState(source=self.connection.source)
        self.statuses = {kind.name: WatchStatus(kind.name) for kind in WATCHED}
        self.watch_seconds, self.idle_seconds, self.backoff = watch_seconds, idle_seconds, backoff
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.sync_lock = threading.Lock()  # `synced` is set by a watch's thread and by its settle timer

    @property
    def source(self) -> str:
        return self.connection.source

    @property
    def lock(self) -> threading.Lock:
        """Held while the rules read the state (a review): events wait for it."""
        return self.state.lock

    def start(self) -> None:
        for kind in WATCHED:
            thread = threading.Thread(target=self._keep, args=(kind,), name=f"watch-{kind.name}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def close(self) -> None:
        self.stopping.set()
        self.connection.abandon_watches()
        for thread in self.threads:
            thread.join(timeout=5)
        self.connection.close()
        self.lookups.close()

    # --- what the webhook asks ------------------------------------------------------------------
    def ready(self) -> bool:
        """Every kind has been listed once (or refused): the state can be used."""
        return all(status.listed for status in self.statuses.values())

    def degraded(self) -> list[str]:
        """Why the state may be behind the cluster now (empty when it follows it): one line per lost kind."""
        now = time.monotonic()
        return [
            f"the watch of {status.kind} is lost since {now - status.since:.0f}s ago ({status.problem})"
            for status in self.statuses.values()
            if not status.synced and not status.refused
        ]

    def confirm_node(self, name: str) -> bool | None:
        """Whether a node the state lacks exists, by one GET (it may have just joined): True (and the state
        has it now), False (404), None when the server could not tell."""
        if not is_dns1123_subdomain(name):  # never a request for a name the API would refuse
            return False
        try:
            found = self.lookups.get_object(f"/api/v1/nodes/{quote(name, safe='')}")
            if found is None:
                return False
            self.state.add_node(node_from_object(found))
            return True
        except (ClusterUnavailable, Forbidden, StateError) as exc:
            note(f"webhook: could not confirm that node {name} is missing: {_reason(exc)}")
            return None

    # --- one kind -----------------------------------------------------------------------------------
    def _keep(self, kind: WatchedKind) -> None:
        """List, then watch, again and again, until the process stops."""
        status = self.statuses[kind.name]
        delay = self.backoff[0]
        if kind.name == "pods":  # listed last, see _list
            others = [self.statuses[other.name] for other in WATCHED if other.name != "pods"]
            while not all(other.listed for other in others) and not self.stopping.wait(0.05):
                pass
        while not self.stopping.is_set():
            try:
                if not status.version:
                    self._list(kind, status)
                started, seen = time.monotonic(), sum(status.events.values())
                self._watch(kind, status)  # until the server ends it: then again from the last version
                if time.monotonic() - started < 1 and sum(status.events.values()) == seen:
                    raise ClusterUnavailable("the API server ended the watch at once, without an event")
                delay = self.backoff[0]
                continue
            except Gone as exc:
                self._lost(status, f"410 Gone: {exc}; relisting")
                status.version = ""
                continue  # relist at once: the server said where it stands
            except Forbidden as exc:
                status.version = ""  # what was read is stale by the time the server allows it again: relist
                status.refused = exc.reason()
                status.listed = True
                self.state.forget(kind.name, status.refused)
                note(f"webhook: {status.refused}")
            except (ClusterUnavailable, StateError, msgspec.DecodeError, RecursionError) as exc:
                self._lost(status, _reason(exc))
                if isinstance(exc, (StateError, msgspec.DecodeError, RecursionError)):
                    status.version = ""  # a reply that cannot be read: read everything again
            if self.stopping.wait(delay * random.uniform(0.8, 1.2)):
                return
            delay = min(self.backoff[1], delay * 2)

    def _opened(self, kind: WatchedKind, status: WatchStatus) -> None:
        """A watch accepted: a kind refused before is allowed now; one resumed after a loss follows the
        cluster again at its first event, or SETTLE_SECONDS later if no ERROR (410) came before."""
        if status.refused:  # listed just before, and followed from now on
            status.refused = ""
            self.state.forget(kind.name, None)
        if status.synced:  # a watch the server ended, started again from the last version
            return
        timer = threading.Timer(SETTLE_SECONDS, self._confirmed, (status, status.attempts))
        timer.daemon = True
        timer.start()

    def _confirmed(self, status: WatchStatus, attempt: int) -> None:
        """No loss since the watch opened at `attempt`, and the server did not refuse its version."""
        with self.sync_lock:
            if attempt == status.attempts and not status.synced and not self.stopping.is_set():
                status.set_synced(True)

    def _lost(self, status: WatchStatus, problem: str) -> None:
        """A watch lost, or a list or watch that failed again while lost (counted and said once)."""
        if self.stopping.is_set():
            return
        with self.sync_lock:
            status.attempts += 1
            if status.synced or not status.problem:
                status.losses += status.synced
                what = "is lost" if status.listed else "cannot list it yet"
                until = "denials turn into warnings until it is back"
                note(f"webhook: the watch of {status.kind} {what} ({problem}); {until}")
            status.set_synced(False, problem)

    def _list(self, kind: WatchedKind, status: WatchStatus) -> None:
        if kind.name == "pods":
            # Summed as the pages arrive (150,000 entries held at once took 60 MB), after the other kinds,
            # with each known node's sums made first: what stays is then not scattered among the pages'
            # short-lived objects, which the process could not give back (31 -> 26 MB at 150,000 Pods).
            sums = PodSums()
            for node in list(self.state.nodes or ()):
                sums.node(node)
            listed = self.connection.list_all(
                kind.path,
                kind.field_selector,
                keep=lambda pod: sums.add(pod_entry(pod)),
                decode=decode_pod_page,
                budget=self.connection.fresh_budget(),
            )
            self.state.install(kind.name, sums)
        else:
            decode = decode_node_page if kind.name == "nodes" else None
            listed = self.connection.list_all(
                kind.path,
                kind.field_selector,
                keep=KEEP[kind.name],
                decode=decode,
                budget=self.connection.fresh_budget(),
            )
            self.state.install(kind.name, listed)
        if status.refused:  # listed, but its watch was refused: the rules still may not use what goes stale
            self.state.forget(kind.name, status.refused)
        status.version = listed.resource_version
        status.relists += status.listed
        status.set_synced(True)
        status.listed = True

    def _watch(self, kind: WatchedKind, status: WatchStatus) -> None:
        keep, events = KEEP[kind.name], status.events
        for event in self._events(kind, status):
            events[event.type] = events.get(event.type, 0) + 1
            obj = event.object
            if event.type == "ERROR":  # a Status: 410 when the version is too old
                if obj.get("code") == 410:
                    raise Gone(str(obj.get("message") or "the resourceVersion is too old"))
                raise ClusterUnavailable(f"the watch sent an error: {obj.get('message') or obj.get('reason')}")
            if event.type in ("ADDED", "MODIFIED", "DELETED"):
                self.state.apply(kind.name, event.type == "DELETED", keep(obj))
            elif event.type != "BOOKMARK":
                raise ClusterUnavailable(f"the watch sent an event of unknown type {event.type[:40]!r}")
            if not status.synced:  # the first event of a watch resumed after a loss: the server has the version
                self._confirmed(status, status.attempts)
            metadata = obj.get("metadata")
            version = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
            if isinstance(version, str) and version:
                status.version = version

    def _events(self, kind: WatchedKind, status: WatchStatus) -> Iterator[_Event]:
        lines = self.connection.watch(
            kind.path,
            status.version,
            random.randint(*self.watch_seconds),
            kind.field_selector,
            idle=self.idle_seconds,
            on_open=lambda: self._opened(kind, status),
        )
        for line in lines:
            yield _EVENT.decode(line)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, Forbidden):
        return exc.reason()
    if isinstance(exc, msgspec.DecodeError):
        return f"a watch event that is not valid JSON ({exc})"
    if isinstance(exc, RecursionError):
        return "a watch event nested too deeply"
    return str(exc)
