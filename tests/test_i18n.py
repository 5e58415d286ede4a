"""Language choice: --lang, then configuration, then LANGUAGE / LC_ALL / LC_MESSAGES / LANG."""

from __future__ import annotations

import pytest

from nccllens.i18n import STRINGS, choose_language, t


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANGUAGE": "zh_CN:en_US", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LANGUAGE": "en_US:zh_CN", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANGUAGE": "", "LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LC_ALL": "", "LC_MESSAGES": "zh_CN.GB18030", "LANG": "en_US.UTF-8"}, "zh"),
        ({"LC_ALL": "POSIX", "LANG": "zh_CN.UTF-8"}, "en"),
    ],
)
def test_language_from_environment(env, expected):
    assert choose_language(None, env=env) == expected


def test_explicit_lang_wins_then_configuration():
    env = {"LANG": "zh_CN.UTF-8"}
    assert choose_language("en", "zh", env=env) == "en"
    assert choose_language(None, "en", env=env) == "en"
    assert choose_language("zh", env={"LANG": "en_US.UTF-8"}) == "zh"
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        choose_language("fr", env=env)


def test_interface_strings_exist_in_both_languages():
    assert t("verdict", "en") == "Verdict" and t("verdict", "zh") == "结论"
    assert t("evidence", "zh") == "证据" and t("remediation", "zh") == "处理建议"
    assert all(set(v) == {"en", "zh"} and all(v.values()) for v in STRINGS.values())
    assert t("not-a-key", "zh") == "not-a-key"
