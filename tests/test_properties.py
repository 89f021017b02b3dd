"""Property-based tests: generated manifests never crash the engine, output is deterministic
(run to run and whatever the worker count), and the quantity parser agrees with a straightforward
reference implementation of apimachinery's rules.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nodename_lint.cluster.from_file import load_state_text
from nodename_lint.engine import Linter
from nodename_lint.parallel import lint_files
from nodename_lint.quantity import QuantityError, milli_value, parse_quantity, value
from nodename_lint.registry import all_rules
from nodename_lint.rule import Context, Severity
from nodename_lint.sources import Source

from .conftest import ROOT

STATE = ROOT / "examples" / "cluster" / "state.yaml"
CATALOGUE = all_rules()
SEVERITIES: dict[str, Severity | None] = dict.fromkeys(CATALOGUE)  # every rule at its own severity
CLUSTER = load_state_text(STATE.read_text(), source=str(STATE))
LINTERS = [Linter(SEVERITIES, Context()), Linter(SEVERITIES, Context(cluster=CLUSTER))]
PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- generated manifests ------------------------------------------------------------------------
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
)
quantities = st.one_of(
    st.sampled_from(
        [
            "100m",
            "1",
            "1.5",
            "1Gi",
            "512Mi",
            "10 Gi",
            "1.5.3",
            "-1",
            "1e400",
            "0.001m",
            "1e-20",
            "9Ei",
            "",
            "abc",
            "1E3",
            "+2k",
            "0x10",
            "  3  ",
        ]
    ),
    st.integers(-10, 10**13),
    st.floats(allow_nan=False, allow_infinity=False),
    junk,
)
node_names = st.one_of(
    st.sampled_from(
        [
            "kind-worker",
            "kind-worker2",
            "kind-control-plane",
            "Kind_Worker",
            "ghost",
            "",
            "x" * 300,
            "worker-1.example.com",
        ]
    ),
    junk,
)
resource_names = st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi"])
resource_lists = st.one_of(st.dictionaries(resource_names, quantities, max_size=3), junk)
containers = st.one_of(
    st.fixed_dictionaries(
        {"name": st.text(max_size=5)},
        optional={
            "image": st.text(max_size=8),
            "resources": st.one_of(
                st.fixed_dictionaries({}, optional={"requests": resource_lists, "limits": resource_lists}), junk
            ),
            "ports": st.one_of(
                st.lists(
                    st.fixed_dictionaries({"containerPort": st.integers(0, 70000)}, optional={"hostPort": junk}),
                    max_size=2,
                ),
                junk,
            ),
        },
    ),
    junk,
)
labels = st.dictionaries(
    st.sampled_from(["kubernetes.io/hostname", "disk", "zone", "app"]),
    st.one_of(st.sampled_from(["kind-worker", "ssd", "a"]), junk),
    max_size=3,
)
tolerations = st.one_of(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "key": st.one_of(st.sampled_from(["node-role.kubernetes.io/control-plane", "dedicated"]), junk),
                "operator": st.one_of(st.sampled_from(["Exists", "Equal"]), junk),
                "effect": st.one_of(st.sampled_from(["NoSchedule", "NoExecute", ""]), junk),
                "value": junk,
            },
        ),
        max_size=2,
    ),
    junk,
)
pod_specs = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "nodeName": node_names,
            "containers": st.one_of(st.lists(containers, max_size=3), junk),
            "initContainers": st.one_of(st.lists(containers, max_size=2), junk),
            "nodeSelector": st.one_of(labels, junk),
            "tolerations": tolerations,
            "affinity": st.one_of(
                st.fixed_dictionaries(
                    {
                        "nodeAffinity": st.one_of(
                            st.fixed_dictionaries(
                                {
                                    "requiredDuringSchedulingIgnoredDuringExecution": st.one_of(
                                        st.fixed_dictionaries(
                                            {
                                                "nodeSelectorTerms": st.one_of(
                                                    st.lists(
                                                        st.fixed_dictionaries(
                                                            {
                                                                "matchExpressions": st.one_of(
                                                                    st.lists(
                                                                        st.fixed_dictionaries(
                                                                            {
                                                                                "key": st.text(max_size=6),
                                                                                "operator": st.sampled_from(
                                                                                    [
                                                                                        "In",
                                                                                        "NotIn",
                                                                                        "Exists",
                                                                                        "DoesNotExist",
                                                                                        "Gt",
                                                                                        "Lt",
                                                                                        "Bogus",
                                                                                    ]
                                                                                ),
                                                                                "values": st.one_of(
                                                                                    st.lists(
                                                                                        st.text(max_size=4), max_size=2
                                                                                    ),
                                                                                    junk,
                                                                                ),
                                                                            }
                                                                        ),
                                                                        max_size=2,
                                                                    ),
                                                                    junk,
                                                                )
                                                            }
                                                        ),
                                                        max_size=2,
                                                    ),
                                                    junk,
                                                )
                                            }
                                        ),
                                        junk,
                                    )
                                }
                            ),
                            junk,
                        )
                    }
                ),
                junk,
            ),
            "schedulingGates": st.one_of(
                st.lists(st.fixed_dictionaries({"name": st.text(max_size=4)}), max_size=2), junk
            ),
            "overhead": resource_lists,
            "priority": junk,
            # read by rules added after this generator: each also as junk, where the API server refuses it
            "priorityClassName": st.one_of(st.sampled_from(["system-node-critical", "batch-high", ""]), junk),
            "preemptionPolicy": st.one_of(st.sampled_from(["Never", "PreemptLowerPriority"]), junk),
            "hostNetwork": junk,
            "runtimeClassName": st.one_of(st.sampled_from(["gvisor", "runc"]), junk),
            "os": st.one_of(
                st.fixed_dictionaries({"name": st.one_of(st.sampled_from(["linux", "windows"]), junk)}), junk
            ),
            "resources": st.one_of(
                st.fixed_dictionaries({}, optional={"requests": resource_lists, "limits": resource_lists}), junk
            ),
            "volumes": st.one_of(st.lists(st.fixed_dictionaries({"name": st.text(max_size=4)}), max_size=2), junk),
        },
    ),
    junk,
)
metadata = st.one_of(
    st.fixed_dictionaries(
        {"name": st.one_of(st.text(max_size=8), junk)},
        optional={
            "namespace": st.one_of(st.sampled_from(["default", "kube-system", "missing-ns"]), junk),
            "annotations": st.one_of(
                st.dictionaries(
                    st.sampled_from(["nodename-lint.io/ignore", "kubernetes.io/config.mirror", "note"]),
                    st.one_of(st.text(max_size=20), junk),
                    max_size=2,
                ),
                junk,
            ),
            "ownerReferences": st.one_of(
                st.lists(
                    st.fixed_dictionaries({"kind": st.sampled_from(["Node", "ReplicaSet"]), "name": node_names}),
                    max_size=1,
                ),
                junk,
            ),
            "labels": st.one_of(labels, junk),
        },
    ),
    junk,
)


def wrap(kind: str, spec, meta) -> dict:
    """An object of `kind` whose Pod spec is `spec`, placed where that kind keeps it."""
    template = {"metadata": meta, "spec": spec}
    shapes = {
        "Pod": ("v1", {"spec": spec}),
        "Deployment": ("apps/v1", {"spec": {"replicas": 2, "template": template}}),
        "DaemonSet": ("apps/v1", {"spec": {"template": template}}),
        "CronJob": ("batch/v1", {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
        "PodTemplate": ("v1", {"template": template}),
        "Node": ("v1", {"spec": spec}),
    }
    api_version, body = shapes[kind]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


objects = st.builds(
    wrap,
    st.sampled_from(["Pod", "Pod", "Deployment", "DaemonSet", "CronJob", "PodTemplate", "Node"]),
    pod_specs,
    metadata,
)


@st.composite
def manifests(draw) -> str:
    """A YAML stream: objects (maybe in a List), as YAML or JSON, sometimes with a key written twice."""
    items = draw(st.lists(objects, min_size=1, max_size=3))
    if draw(st.booleans()):
        items = [{"apiVersion": "v1", "kind": "List", "items": items}]
    if draw(st.booleans()):
        text = "\n---\n".join(json.dumps(item, indent=draw(st.sampled_from([None, 2]))) for item in items)
    else:
        text = "---\n".join(yaml.safe_dump(item, sort_keys=False) for item in items)
    if draw(st.booleans()) and "\nspec:\n" in text:
        text = text.replace(
            "\nspec:\n", f"\nspec:\n  nodeName: {draw(st.sampled_from(['kind-worker', '12', 'null']))}\n", 1
        )
    return text


def lint(linter: Linter, text: str, static: bool) -> list[dict]:
    result = linter.lint_text(text, display="generated.yaml", is_static_pod=static)
    assert result.internal_errors == [], result.internal_errors
    return [finding.to_json() for finding in linter.collect([result]).findings]


@PROPERTY_SETTINGS
@given(manifests(), st.booleans())
def test_generated_manifests_never_crash_and_findings_are_well_formed(text, static):
    for linter in LINTERS:
        for finding in lint(linter, text, static):
            assert finding["rule"] in CATALOGUE
            assert finding["line"] >= 1 and finding["column"] >= 1
            assert finding["line"] <= text.count("\n") + 1
            assert finding["message"] and finding["file"] == "generated.yaml"


@PROPERTY_SETTINGS
@given(manifests(), st.booleans())
def test_the_same_input_gives_the_same_findings_in_the_same_order(text, static):
    linter = LINTERS[1]
    first = lint(linter, text, static)
    assert lint(linter, text, static) == first
    assert lint(Linter(SEVERITIES, Context(cluster=CLUSTER)), text, static) == first  # a fresh linter too


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(manifests(), min_size=3, max_size=6))
def test_findings_do_not_depend_on_the_worker_count(tmp_path_factory, texts):
    folder = tmp_path_factory.mktemp("generated")
    sources = []
    for index, text in enumerate(texts):
        path = folder / f"m{index}.yaml"
        path.write_text(text)
        sources.append(Source(str(path)))
    linter = LINTERS[1]
    runs = [lint_files(linter, sources, jobs) for jobs in (1, 2, 3)]
    as_json = [[finding.to_json() for finding in run.findings] for run in runs]
    assert as_json[0] == as_json[1] == as_json[2]
    assert runs[0].objects == runs[1].objects == runs[2].objects


# --- quantities ---------------------------------------------------------------------------------
# A straightforward reading of apimachinery's resource.ParseQuantity (quantity.go, suffix.go):
# sign, digits with at most one point (no digits at all is zero), then a suffix: a decimal SI
# prefix, a binary one, or an exponent e/E followed by an integer. The value is exact; a non-zero value is
# rounded up (away from zero) to a whole number of nano units; a binary-suffixed value is capped at 2^63-1.
REFERENCE_FORM = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*)([+-]?[0-9]*)")
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def reference_quantity(text: str) -> Fraction | None:
    """The exact value apimachinery gives `text`, or None when it refuses it."""
    text = text.strip()
    match = REFERENCE_FORM.fullmatch(text)
    if not text or match is None:
        return None
    sign, whole, fraction, letters, signed_digits = match.groups()
    fraction = fraction or ""  # no digits at all is zero: "if we stripped all numerator positions, always return 0"
    suffix = letters + signed_digits
    if suffix in DECIMAL:
        scale, binary = Fraction(10) ** DECIMAL[suffix], False
    elif suffix in BINARY:
        scale, binary = Fraction(2) ** BINARY[suffix], True
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        scale, binary = Fraction(10) ** int(suffix[1:]), False
    else:
        return None
    amount = Fraction(int(whole + fraction or "0"), 10 ** len(fraction)) * scale
    nanos = amount * 10**9
    if nanos.denominator != 1:
        amount = Fraction(math.ceil(nanos), 10**9)  # amount >= 0 here: rounding up is away from zero
    if binary and amount > 2**63 - 1:
        amount = Fraction(2**63 - 1)
    return -amount if sign == "-" else amount


digits = st.text(alphabet="0123456789", max_size=7)
suffixes = st.one_of(
    st.sampled_from(list(DECIMAL) + list(BINARY)),
    st.builds(
        lambda e, sign, n: f"{e}{sign}{n}", st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), st.integers(0, 24)
    ),
    st.sampled_from(["e", "E+", "Ki3", "mm", "Gi ", " Gi", "x", "1.5", ".", "iK", "KiB"]),
)
quantity_texts = st.builds(
    lambda sign, whole, point, fraction, suffix: f"{sign}{whole}{point}{fraction}{suffix}",
    st.sampled_from(["", "+", "-"]),
    digits,
    st.sampled_from(["", ".", ".", "..", " "]),
    digits,
    suffixes,
)


@settings(max_examples=3000, deadline=None)
@given(quantity_texts)
def test_quantity_parser_agrees_with_the_reference(text):
    expected = reference_quantity(text)
    if expected is None:
        with pytest.raises(QuantityError):
            parse_quantity(text)
        return
    assume(abs(expected) < 10**30)  # beyond that nodename-lint refuses what no int64 can hold
    got = parse_quantity(text)
    assert got == expected, text
    assert milli_value(got) == math.ceil(expected * 1000)  # MilliValue: how cpu is counted
    assert value(got) == math.ceil(expected)  # Value: how memory and counts are counted


@pytest.mark.parametrize(
    "text, milli",
    [
        ("100m", 100),
        ("0.1", 100),
        ("1", 1000),
        ("1.5", 1500),
        ("0.0001", 1),
        ("1n", 1),
        ("1e-10", 1),
        ("1Ki", 1024000),
        ("1e3", 1000000),
        ("-0.0001", 0),
    ],
)
def test_quantity_reference_examples(text, milli):
    """The rounding that matters for admission: up to whole millicores, never down to zero."""
    assert milli_value(parse_quantity(text)) == milli
    assert milli_value(reference_quantity(text)) == milli
