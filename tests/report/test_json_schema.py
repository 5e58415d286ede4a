"""docs/report.schema.json describes Report.to_dict(): built reports (and a real fixture) conform."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_builders import big_report, healthy_report, unknown_report, xid_report
from schema_check import problems

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))


def test_schema_is_draft_2020_12_and_versioned():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "schema_version" in SCHEMA["required"]


@pytest.mark.parametrize("build", [xid_report, healthy_report, unknown_report, big_report])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_built_reports_conform(build, lang):
    data = json.loads(build(lang).to_json())
    assert problems(data, SCHEMA) == []
    assert data["schema_version"] == 1


def test_checker_catches_what_breaks_the_contract():
    data = json.loads(xid_report().to_json())
    data["findings"][0]["severity"] = "fatal"
    del data["verdict"]["category"]
    data["ranks"][0]["rank"] = "0"
    found = problems(data, SCHEMA)
    assert any("findings[0].severity" in p and "fatal" in p for p in found)
    assert any(p.startswith("$.verdict: missing 'category'") for p in found)
    assert any(p.startswith("$.ranks[0].rank") for p in found)


def test_contract_fields_in_json():
    data = json.loads(xid_report().to_json())
    top = data["findings"][0]
    assert data["verdict"]["category"] == "gpu_hardware"
    assert top["hosts"] == ["gpu-node-07"] and top["ranks"] == [61]
    assert top["evidence"][0]["file"] == "gpu-node-07/dmesg.txt" and top["evidence"][0]["line"] == 4412
    assert top["explains"] == ["F2"]
    assert top["texts"]["zh"]["title"].startswith("Xid 79：")
    assert data["inputs"]["files"][-1]["skipped"] == "not a log: configuration"


def test_real_fixture_conforms():
    fixture = ROOT / "fixtures" / "exception_one_rank"
    if not fixture.is_dir():
        pytest.skip("fixture exception_one_rank not present")
    import nccllens

    report = nccllens.analyze([str(fixture)])
    assert problems(json.loads(report.to_json()), SCHEMA) == []


@pytest.mark.parametrize("build", [xid_report, healthy_report, unknown_report, big_report])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("hostile", [False, True])
def test_json_text_is_the_dictionary_dumped_with_indent_2(build, lang, hostile):
    """The renderer builds the text a list item at a time (memory); the bytes are json.dumps' own."""
    report = xid_report(lang, hostile=True) if hostile else build(lang)
    if hostile:  # newlines, U+2028 and quotes in log text must not upset the indentation
        report.findings[0].evidence[0].text = 'a\nb\u2028c "d"\r\n'
    assert report.to_json() == json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n"


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    | st.dictionaries(st.integers(), inner, max_size=2),  # non-text keys: the standard encoder's job
    max_leaves=20)


@given(_JSON_VALUES, st.integers(0, 3))
def test_values_are_written_as_json_dumps_writes_them(value, level):
    from nccllens.report.json_out import _value

    expected = json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * level)
    assert _value(value, level) == expected
