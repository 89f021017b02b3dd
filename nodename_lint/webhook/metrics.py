"""The webhook's Prometheus metrics, through prometheus_client (imported by the webhook alone).

Reviews by verdict, findings by rule and what they did, the review latency, and the cluster state:
ready, degraded, and per kind whether its watch follows the cluster, its losses, relists and events.
The state's figures are read when /metrics is scraped (a collector), so the watch layer keeps plain
counters and knows nothing of Prometheus.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from .review import ClusterSource, Verdict

PREFIX = "nodename_lint_webhook"
# seconds: fine below the 5 ms a review should take, up to the API server's 3 s timeout
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 3.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """One registry per server (tests run several in one process)."""

    def __init__(self, cluster: ClusterSource) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reviews = Counter(
            f"{PREFIX}_reviews",
            "AdmissionReviews answered, by verdict: allowed, warned, denied, skipped (a kind or operation not "
            "reviewed), invalid (a request that is not an AdmissionReview: 400), error (500)",
            ["verdict"],
            registry=self.registry,
        )
        self.findings = Counter(
            f"{PREFIX}_rule_verdicts",
            "Reviews in which a rule found something, by rule and what it did (denied or warned)",
            ["rule", "verdict"],
            registry=self.registry,
        )
        self.latency = Histogram(
            f"{PREFIX}_review_duration_seconds",
            "Time to answer one POST /validate, from its body read to its reply written",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_ClusterCollector(cluster))

    def observe(self, verdict: Verdict, seconds: float) -> None:
        self.reviews.labels(verdict.verdict).inc()
        for rule, what in verdict.rules.items():
            self.findings.labels(rule, what).inc()
        self.latency.observe(seconds)

    def failed(self, seconds: float) -> None:
        self.reviews.labels("error").inc()
        self.latency.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _ClusterCollector(Collector):
    """The cluster state's figures, read at each scrape."""

    def __init__(self, cluster: ClusterSource) -> None:
        self.cluster = cluster

    def collect(self) -> Iterator[Metric]:
        cluster = self.cluster
        ready = GaugeMetricFamily(f"{PREFIX}_ready", "1 once the cluster state is loaded (the first full lists)")
        ready.add_metric([], float(cluster.ready()))
        degraded = GaugeMetricFamily(
            f"{PREFIX}_degraded", "1 while a watch is lost and the webhook warns instead of denying"
        )
        degraded.add_metric([], float(bool(cluster.degraded())))
        yield ready
        yield degraded
        statuses = cluster.statuses
        if not statuses:
            return
        synced = GaugeMetricFamily(
            f"{PREFIX}_watch_synced", "1 while the watch of a kind follows the cluster", labels=["kind"]
        )
        losses = CounterMetricFamily(f"{PREFIX}_watch_losses", "Watches lost (reset, silent, error)", labels=["kind"])
        relists = CounterMetricFamily(
            f"{PREFIX}_relists", "Full lists after the first (410 Gone, errors)", labels=["kind"]
        )
        events = CounterMetricFamily(f"{PREFIX}_watch_events", "Watch events applied, by type", labels=["kind", "type"])
        for kind, status in statuses.items():
            synced.add_metric([kind], float(status.synced and not status.refused))
            losses.add_metric([kind], status.losses)
            relists.add_metric([kind], status.relists)
            for event_type, count in sorted(list(status.events.items())):  # one copy: a watch may add a type
                events.add_metric([kind, event_type], count)
        yield from (synced, losses, relists, events)
