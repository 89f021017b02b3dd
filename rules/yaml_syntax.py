"""
## What it does
Reports a document or a file that cannot be read as YAML (or JSON), or that kubectl cannot
convert to JSON: a syntax error, an unrendered template, text that is not UTF-8 or UTF-16, a
file that cannot be opened (or a device, which is never read), a mapping key that is a list, a
mapping or null, `.nan`/`.inf`, a value that does not fit its explicit tag (`!!int abc`), a merge
key without a mapping, an alias inside its own anchor, aliases that expand to more than a million
nodes (an alias bomb), a document over 3 MiB, or nesting deeper than the limits (10,000 flow
levels, lines indented 5,000 columns). The finding points at the line and column where the
parser stopped; every other document of the file, and every other file, is still checked.

A file that does not parse and names no `kind` and no Kubernetes `apiVersion` (`v1`, `apps/v1`)
anywhere (JSON with comments, JSON Lines, a dashboard with a comment header, a Jinja template, an
Azure Resource Manager template, an `openssl` dump saved as `.yml`) is not a manifest: it is
skipped with a note that gives the parser's line, not reported.

## Why is this bad?
kubectl cannot convert the document to JSON, so `kubectl apply` fails before anything reaches
the cluster; a static Pod file with a syntax error is skipped by the kubelet ("Could not process
manifest file") and its Pod never starts. An unrendered Helm template (`{{ .Values.x }}`) is not
a manifest at all until it is rendered. The API server refuses request bodies over 3 MiB.

## How to fix
Fix the YAML at the reported position. For a Helm chart, lint the rendered output:
`helm template . | nodename-lint -`.
"""

from nodename_lint.rule import Example, Rule

# The engine reports this rule itself, from the parser; the module holds its documentation.
RULE = Rule(
    id="yaml-syntax",
    severity="error",
    summary="A document cannot be parsed as YAML: kubectl cannot apply it and the kubelet skips it.",
    doc=__doc__,
    not_audited="it is about a file's text, and an object read from the API has none",
    examples=(
        Example(
            "an unrendered Helm template",
            """
            apiVersion: v1
            kind: Pod
            metadata:
              name: {{ .Release.Name }}-debug
            spec:
              nodeName: {{ .Values.node }}
            """,
            fails=True,
        ),
        Example(
            "a broken flow mapping",
            """
            apiVersion: v1
            kind: Pod
            metadata: {name: debug
            spec: {}
            """,
            fails=True,
        ),
        Example(
            "plain scalars that PyYAML refuses but Kubernetes reads as strings",
            """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: operators
            data:
              equals: =
              date: 2024-01-02
            """,
            fails=False,
        ),
    ),
)
