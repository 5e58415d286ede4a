"""JSON: the canonical form of the report (shared/report-contract.md plus the rest of the model)."""

from __future__ import annotations

import json

from nccllens.report.model import Report


def render(report: Report, **_: object) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n"
