"""A generated case turned into a workload that already runs on the cluster, and the rollout step the
Kubernetes code can judge.

The workload (Deployment, StatefulSet or DaemonSet `probe`) runs R Pods of an older template (another
image, the same resources and ports) on the case's node, each owned as its controller owns them, with
the ReplicaSet or ControllerRevision holding that template in the dump; the manifest is the case's
Pod as the new template. What the controllers do first decides which Pod the kubelet or the scheduler
meets, beside which Pods (the Kubernetes functions followed are in nodename_lint/rollout.py):

- `surge`: a Deployment under the default strategy (maxSurge 25% rounds up to 1, maxUnavailable 25%
  of 1 to 3 replicas rounds down to 0: `ResolveFenceposts`) first creates one new Pod beside all R
  old ones (`reconcileNewReplicaSet`), and scales no old one down until it is available. The oracle
  judges that Pod with the old ones bound: the kubelet (pinned) or the scheduler (unpinned). When it
  is refused, the rollout stalls there, and what nodename-lint says the Pod shows must be what the
  oracle answers.
- `no-surge`: maxSurge 0 and maxUnavailable 1, one replica: the old Pod is deleted first, and the new
  one meets the cluster without it.
- `recreate`: a Deployment with `strategy.type: Recreate` (`rolloutRecreate`): every old Pod is gone
  before the new ReplicaSet is scaled up, so R pinned new Pods reach the kubelet one after another
  (the oracle's `kubelet-replicas`), or one unpinned new Pod meets the scheduler.
- `statefulset`: one replica, `updateStatefulSet` deletes probe-0 and recreates it: the new Pod meets
  the cluster without the old one.
- `daemonset`: a pinned DaemonSet, default strategy (maxSurge 0): the old Pod is deleted first;
  `daemonset-surge` (maxSurge 1, maxUnavailable 0): the new Pod starts beside the old one. The Pod
  the oracle judges carries the tolerations the DaemonSet controller adds to every daemon Pod
  (`AddOrUpdateDaemonPodTolerations`), as the kubelet meets it. Before that, the controller creates
  the Pod at all only when the template fits the node's affinity and NoSchedule and NoExecute taints
  (`NodeShouldRunDaemonPod`); the real scheduler's filters answer that (`controller_request`), and
  when they refuse, nodename-lint must say no Pod is created instead of a kubelet verdict.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .generator import NAMESPACES, POD_NAME, Case, _stored, admitted, priority_class_object

KINDS = ("surge", "no-surge", "recreate", "statefulset", "daemonset", "daemonset-surge")
HASH = "6d4cf56db6"  # the old ReplicaSet's pod-template-hash (SafeEncodeString's alphabet)
REVISION = f"{POD_NAME}-7b9c5d8f4"  # the old ControllerRevision
UID = "00000000-0000-4000-8000-000000000022"

# What the DaemonSet controller adds to each daemon Pod (pkg/controller/daemon/util
# AddOrUpdateDaemonPodTolerations): the node-state taints, and network-unavailable for hostNetwork.
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


@dataclass
class RolloutCase:
    """A generated case as a workload of `replicas` old Pods on `case.node`, updated as `kind` says."""

    case: Case
    kind: str
    replicas: int

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def workload(self) -> str:
        return {"statefulset": "StatefulSet", "daemonset": "DaemonSet", "daemonset-surge": "DaemonSet"}.get(
            self.kind, "Deployment"
        )

    @property
    def pinned_only(self) -> bool:
        """The rules check a DaemonSet only when its template pins a node."""
        return self.workload == "DaemonSet"

    @property
    def old_stay(self) -> bool:
        """Whether the old Pods are still bound when the first new Pod is judged."""
        return self.kind in ("surge", "daemonset-surge")

    def _template(self, pinned: bool) -> dict[str, Any]:
        pod = self.case.manifest("kubelet" if pinned else "scheduler")
        return {"metadata": {"labels": dict(pod["metadata"]["labels"])}, "spec": pod["spec"]}

    def manifest(self, pinned: bool) -> dict[str, Any]:
        """The workload as the user writes it: the case's Pod as its new template."""
        spec: dict[str, Any] = {
            "selector": {"matchLabels": {"app": POD_NAME}},
            "template": self._template(pinned),
        }
        if self.workload != "DaemonSet":
            spec["replicas"] = self.replicas
        if self.kind == "no-surge":
            spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
        elif self.kind == "recreate":
            spec["strategy"] = {"type": "Recreate"}
        elif self.kind == "statefulset":
            spec["serviceName"] = POD_NAME
        elif self.kind == "daemonset-surge":
            spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
        return {
            "apiVersion": "apps/v1",
            "kind": self.workload,
            "metadata": {"name": POD_NAME, "namespace": "default"},
            "spec": spec,
        }

    def _old_template(self) -> dict[str, Any]:
        template = self._template(pinned=self.pinned_only)
        for container in template["spec"]["containers"]:
            container["image"] = f"{container.get('image', 'busybox')}-old"
        return template

    def _owner(self) -> tuple[str, str, dict[str, str]]:
        """(the controller's kind and name, the labels it gives its Pods) of the old Pods."""
        if self.workload == "Deployment":
            return "ReplicaSet", f"{POD_NAME}-{HASH}", {"pod-template-hash": HASH}
        return self.workload, POD_NAME, {"controller-revision-hash": REVISION.rsplit("-", 1)[1]}

    def old_pods(self) -> list[dict[str, Any]]:
        """The workload's running Pods, bound to the case's node, as the API stores them."""
        kind, name, extra = self._owner()
        template = self._old_template()
        pods = []
        for index in range(self.replicas):
            # as the API stored them: the Priority admission plugin resolved their class (an old template it
            # refuses could not have made them: they run at the priority 0 of no class)
            spec = admitted({"spec": copy.deepcopy(template["spec"])}, self.case.classes)["spec"]
            _stored(spec)
            spec["nodeName"] = self.case.node
            spec.setdefault("priority", 0)
            pod_name = f"{POD_NAME}-{index}" if self.workload == "StatefulSet" else f"{POD_NAME}-{HASH}-x{index}"
            reference = {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": UID, "controller": True}
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": pod_name,
                        "namespace": "default",
                        "labels": {**template["metadata"]["labels"], **extra},
                        "ownerReferences": [reference],
                    },
                    "spec": spec,
                    "status": {"phase": "Running"},
                }
            )
        return pods

    def _holder(self) -> dict[str, Any]:
        """The ReplicaSet or ControllerRevision that holds the old template."""
        template = self._old_template()
        reference = {"apiVersion": "apps/v1", "kind": self.workload, "name": POD_NAME, "uid": UID, "controller": True}
        if self.workload == "Deployment":
            labels = {**template["metadata"]["labels"], "pod-template-hash": HASH}
            template["metadata"]["labels"] = labels
            return {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": f"{POD_NAME}-{HASH}", "namespace": "default", "ownerReferences": [reference]},
                "spec": {"replicas": self.replicas, "selector": {"matchLabels": labels}, "template": template},
            }
        return {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": REVISION, "namespace": "default", "ownerReferences": [reference]},
            "data": {"spec": {"template": {**template, "$patch": "replace"}}},
            "revision": 1,
        }

    def cluster_dump(self) -> str:
        """The cluster as kubectl dumps it, with the workload's Pods and the holder of their template."""
        namespaces = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}
            for name in NAMESPACES
        ]
        classes = [priority_class_object(name, entry) for name, entry in self.case.classes.items()]
        items = [*self.case.nodes, *namespaces, *self.case.pods, *self.old_pods(), self._holder(), *classes]
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})

    def oracle_request(self, pinned: bool) -> dict[str, Any]:
        """What the oracle judges: the first new Pod as the API server stores it (the controller's
        additions included), beside the old Pods only when the strategy keeps them."""
        pod = admitted(self.case.manifest("kubelet" if pinned else "scheduler"), self.case.classes)
        if self.workload == "DaemonSet":
            tolerations = pod["spec"]["tolerations"]
            added = list(_DAEMON_TOLERATIONS)
            if pod["spec"].get("hostNetwork"):
                added.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
            for key, effect in added:  # AddOrUpdateTolerationInPodSpec: MatchToleration replaces, else appends
                toleration = {"key": key, "operator": "Exists", "effect": effect}
                same = [
                    i
                    for i, t in enumerate(tolerations)
                    if {"value": "", **t, "tolerationSeconds": 0} == {"value": "", **toleration, "tolerationSeconds": 0}
                ]
                for i in same:
                    tolerations[i] = toleration
                if not same:
                    tolerations.append(toleration)
        pods = [*self.case.pods, *(self.old_pods() if self.old_stay else [])]
        mode = ("kubelet-replicas" if self.kind == "recreate" else "kubelet") if pinned else "scheduler"
        request: dict[str, Any] = {
            "id": f"{self.id}/rollout-{'pinned' if pinned else 'unpinned'}",
            "mode": mode,
            "nodes": self.case.nodes,
            "pods": pods,
            "pod": pod,
        }
        if mode == "kubelet-replicas":
            request["replicas"] = self.replicas
        return request

    def controller_request(self) -> dict[str, Any]:
        """NodeShouldRunDaemonPod's checks asked of the real kube-scheduler: the DaemonSet controller creates
        a Pod on the pinned node only when the template, with the tolerations it adds, fits the node's
        nodeSelector, required node affinity and NoSchedule and NoExecute taints (pkg/controller/daemon
        `predicates`). The scheduler's filters run TaintToleration and then NodeAffinity before anything
        that counts Pods or room, and the daemon tolerations pass NodeUnschedulable: so the new Pod without
        nodeName, against the pinned node alone and no Pods, fails first on one of those two exactly when
        the controller creates no Pod there."""
        pod = copy.deepcopy(self.oracle_request(pinned=True)["pod"])
        pod["spec"].pop("nodeName", None)
        nodes = [node for node in self.case.nodes if node["metadata"]["name"] == self.case.node]
        return {"id": f"{self.id}/controller", "mode": "scheduler", "nodes": nodes, "pods": [], "pod": pod}

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "replicas": self.replicas, "case": json.loads(self.case.to_json())})


def rollout_case(case: Case, index: int) -> RolloutCase:
    """The case as one of the rollout kinds, in turn; replicas from the case where the kind allows them."""
    kind = KINDS[index % len(KINDS)]
    replicas = 1
    if kind in ("surge", "recreate"):  # surge: 1 to 3 replicas keep maxUnavailable 25% at 0
        replicas = min(case.replicas, 3)
    return RolloutCase(case, kind, replicas)
