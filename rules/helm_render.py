"""
## What it does
Reports a Helm chart (a folder with `Chart.yaml`) that Helm cannot render with the values of the
run: a template error (`nil pointer evaluating`, a missing `include`), a values file that is not
YAML, a values schema violation, or a `required` or `fail` call that stops the values the run
gives. The finding is at the template file and the line Helm names (else at the chart's
`Chart.yaml`); the other charts and files of the run are still linted.

A chart whose own `required` or `fail` stops it when rendered with its values.yaml alone (no
`--helm-values`, no values in the config) asks for values rather than being broken (grafana's
`loki-canary`: `'lokiAddress' must be set`): a **warning** at that line that says the chart was
not checked and how to give it values.

Also at `Chart.yaml`: a chart that does not render within nodename-lint's budget per chart (30 s
of CPU time, 2 GiB of memory, 60 s of wall time, 64 MiB of output: a `range until` loop or a
recursive `tpl` without end), an error; and, as a warning that says the chart was not checked,
dependencies declared in `Chart.yaml` but missing in `charts/` (`helm dependency build` fetches
them), a chart git does not track, or one too big to copy (over 64 MiB or 20,000 files).

A chart that cannot be rendered because no Helm engine is installed (neither helm-python-sdk nor
a `helm` binary) is a `helm-render` **warning** at its `Chart.yaml`: nothing it installs was
checked, and a run never passes over a chart in silence (the GitHub Action and the pre-commit hook
install the engine). A severity set for the rule in the config applies to both.

## Why is this bad?
`helm install`, `helm upgrade` and `helm template` stop at the first template that fails
(Helm's `engine.Render` returns the error, `action.Install` creates nothing), so no object of the
chart reaches the cluster, and nodename-lint cannot check what the chart would create.

## How to fix
Fix the template at the reported line, or give the values it needs: `--helm-values FILE`
(repeatable, like `helm template -f`), or per chart in `.nodename-lint.yaml`
(`helm: {charts/web: {values: [values-prod.yaml]}}`). Run `helm dependency build CHART` (or
vendor the subcharts in `charts/`) before linting a chart with dependencies. See
docs/helm-and-kustomize.md.
"""

from nodename_lint.rule import Example, Rule

# The engine reports this rule itself, from the Helm engine's error; the module holds its documentation.
# The examples are the template `templates/example.yaml` of a chart rendered with its values.yaml.
RULE = Rule(
    id="helm-render",
    severity="error",
    summary="A Helm chart fails to render: helm install would create none of its objects.",
    doc=__doc__,
    not_audited="it is about Helm charts, and the API holds what they rendered",
    examples=(
        Example(
            "a template that reads a value the values do not set",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: debug
            spec:
              nodeName: {{ .Values.node.name }}
              containers:
                - name: debug
                  image: busybox
            """,
            fails=True,
            helm_chart=True,
        ),
        Example(
            "a template that renders",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: {{ .Release.Name }}-debug
            spec:
              containers:
                - name: debug
                  image: {{ .Values.image | default "busybox" }}
            """,
            fails=False,
            helm_chart=True,
        ),
    ),
)
