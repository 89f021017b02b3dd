"""JSON text for the machine-readable reports (`--format json`, `sarif`): indented, UTF-8, stable."""

from __future__ import annotations

import json
from typing import Any

from ..safe_text import json_escaped

# Below this many findings the standard library's encoder is the faster choice: importing msgspec
# (about 10 ms) costs more than json's Python encoder spends on an indented report. Above it,
# msgspec writes the same text eight times faster (2,000 findings: 40 ms -> 5 ms).
_MSGSPEC_FROM_FINDINGS = 500


def indented_json(document: Any, findings: int) -> str:
    """`document` as json.dumps(indent=2, ensure_ascii=False, default=str) writes it, plus a newline,
    with the control and bidi characters it leaves raw escaped (safe_text.json_escaped).

    (Floats aside: msgspec writes 1e300 where json writes 1e+300; reports hold none.)"""
    if findings >= _MSGSPEC_FROM_FINDINGS:
        import msgspec  # startup: only for big reports (see above)

        encoded = msgspec.json.format(msgspec.json.encode(document, enc_hook=str), indent=2).decode()
    else:
        encoded = json.dumps(document, indent=2, ensure_ascii=False, default=str)
    return json_escaped(encoded) + "\n"
