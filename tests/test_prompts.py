from __future__ import annotations

import pytest

from copyaudit import formats, prompts
from copyaudit.engine.demo import samples_dir
from copyaudit.errors import UserError
from copyaudit.prompts import (
    COPYRIGHT_WARNING,
    REMINDER_SYSTEM_PROMPT,
    TEMPLATE_IDS,
    add_copyright_keyword,
    build_prompt,
    describe_templates,
    templates_for,
)
from copyaudit.studies.copybench import prompts as copybench_prompts
from copyaudit.studies.registry import STUDIES, prompt_kinds

CASE_INPUT = "The glassblower's daughter had never seen the sea, but she dreamed of it every night."
PAYLOADS = {
    "literal": {"input": CASE_INPUT, "reference": "and in the mornings she drew waves."},
    "nonliteral": {"input": CASE_INPUT, "reference_events": [], "reference_characters": []},
    "qa": {
        "input": "According to The Glass Coast, what colour was the lantern?",
        "reference": "red",
    },
    "notice": {
        "source_type": "book",
        "snippet": " ".join(["lorem"] * 100),
        "notice_level": "all_rights_reserved",
        "notice": "All rights reserved.",
        "task": "repeat",
        "query": "Echo the earlier paragraph once more.",
    },
}
FEW_SHOT_KINDS = ("literal", "nonliteral", "qa")
# The line that opens the task / each demonstration, per kind and template.
TASK_PREFIX = {
    ("literal", 1): "Complete the prefix:\n",
    ("literal", 2): "Beginning: ",
    ("literal", 3): "Given Prefix: ",
    ("nonliteral", 1): "Continue the text to compose an original story about 500 words",
    ("nonliteral", 2): "Prefix: ",
    ("nonliteral", 3): "Given Prefix: ",
    ("qa", 1): "Question: ",
    ("qa", 2): "Q: ",
    ("qa", 3): "Question: ",
}


@pytest.mark.parametrize("kind", FEW_SHOT_KINDS)
@pytest.mark.parametrize("template", TEMPLATE_IDS)
def test_every_kind_and_template_builds(kind: str, template: int) -> None:
    spec = build_prompt(kind, PAYLOADS[kind], template=template)
    assert spec.template == template
    assert spec.shots == prompts.DEFAULT_SHOTS == 4
    assert spec.system is None
    assert spec.text == spec.user
    # The case input appears once, in the final task block, after every demonstration.
    case_input = PAYLOADS[kind]["input"]
    assert spec.user.count(case_input) == 1
    last_block = spec.user.split(prompts.DEMO_SEPARATOR)[-1]
    assert last_block.startswith(TASK_PREFIX[(kind, template)])
    assert case_input in last_block


def test_notice_has_a_single_layout() -> None:
    assert templates_for("notice") == (1,)
    assert build_prompt("notice", PAYLOADS["notice"]).template == 1
    for template in (2, 3):
        with pytest.raises(UserError):
            build_prompt("notice", PAYLOADS["notice"], template=template)


def test_unknown_kind_template_and_missing_input_are_rejected() -> None:
    with pytest.raises(UserError):
        build_prompt("decop", {"input": "x"})
    with pytest.raises(UserError):
        build_prompt("literal", PAYLOADS["literal"], template=4)
    with pytest.raises(UserError):
        build_prompt("literal", {"reference": "no input here"})
    with pytest.raises(UserError):
        build_prompt("notice", {"snippet": "text", "notice": ""})  # no query


def test_max_new_tokens_per_kind() -> None:
    assert build_prompt("literal", PAYLOADS["literal"]).max_new_tokens == 200
    assert build_prompt("qa", PAYLOADS["qa"]).max_new_tokens == 200
    assert build_prompt("nonliteral", PAYLOADS["nonliteral"]).max_new_tokens == 1024


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (100, 201),  # ceil(100 * 4/3) = 134 tokens, ceil(1.5 * 134) = 201
        (500, 1001),  # ceil(500 * 4/3) = 667, ceil(1.5 * 667) = 1001
        (1000, 1024),  # 2000 capped
        (10, 64),  # 14 tokens * 1.5 = 21, raised to the minimum
    ],
)
def test_notice_budget_follows_snippet_length(words: int, expected: int) -> None:
    payload = {**PAYLOADS["notice"], "snippet": " ".join(["word"] * words)}
    assert build_prompt("notice", payload).max_new_tokens == expected


@pytest.mark.parametrize("kind", FEW_SHOT_KINDS)
@pytest.mark.parametrize("shots", [0, 1, 2, 4])
def test_shots_count_is_respected(kind: str, shots: int) -> None:
    demos = copybench_prompts._DEMOS[kind]
    spec = build_prompt(kind, PAYLOADS[kind], template=2, shots=shots)
    assert spec.shots == shots
    for i, demo in enumerate(demos):
        assert (demo["input"] in spec.user) == (i < shots)
        assert (demo["output"] in spec.user) == (i < shots)
    # instruction + demonstrations + task, separated by the blank-line separator
    assert len(spec.user.split(prompts.DEMO_SEPARATOR)) == shots + 2
    assert spec.user.count(TASK_PREFIX[(kind, 2)]) == shots + 1


def test_too_many_shots_and_shots_for_notice_are_rejected() -> None:
    with pytest.raises(UserError):
        build_prompt("literal", PAYLOADS["literal"], shots=5)
    with pytest.raises(UserError):
        build_prompt("literal", PAYLOADS["literal"], shots=-1)
    with pytest.raises(UserError):
        build_prompt("notice", PAYLOADS["notice"], shots=2)
    assert build_prompt("notice", PAYLOADS["notice"], shots=0).shots == 0


def test_demonstration_is_filled_with_input_and_output() -> None:
    demo = copybench_prompts._LITERAL_DEMOS[0]
    spec = build_prompt("literal", PAYLOADS["literal"], template=3, shots=1)
    expected = f"Given Prefix: {demo['input']}\nProvided Completion: {demo['output']}"
    assert expected in spec.user
    assert spec.user.endswith(f"Given Prefix: {CASE_INPUT}\nCompletion:")


@pytest.mark.parametrize("kind", prompt_kinds())
def test_reminder_adds_the_system_prompt(kind: str) -> None:
    spec = STUDIES[kind]  # every prompted study's bundled sample
    payload = formats.load_cases(kind, samples_dir() / spec.samples[kind])[0].case.payload
    plain = build_prompt(kind, payload)
    reminded = build_prompt(kind, payload, reminder=True)
    assert plain.system is None
    assert reminded.system == REMINDER_SYSTEM_PROMPT
    assert reminded.user == plain.user
    assert reminded.text == f"{REMINDER_SYSTEM_PROMPT}\n\n{plain.user}"
    assert REMINDER_SYSTEM_PROMPT not in plain.text


@pytest.mark.parametrize("template", TEMPLATE_IDS)
@pytest.mark.parametrize("shots", [0, 4])
def test_qa_prompt_carries_the_answer_markers(template: int, shots: int) -> None:
    spec = build_prompt("qa", PAYLOADS["qa"], template=template, shots=shots)
    instruction = spec.user.split(prompts.DEMO_SEPARATOR)[0]
    assert "[Output_Start]" in instruction and "[Output_End]" in instruction
    assert spec.user.count("[Output_End]") == shots + 1
    assert not spec.user.endswith("[Output_End]")  # the model writes the last answer


def test_notice_default_layout_is_snippet_notice_query() -> None:
    payload = PAYLOADS["notice"]
    spec = build_prompt("notice", payload)
    assert spec.user == f"{payload['snippet']}\n{payload['notice']}\n{payload['query']}"


@pytest.mark.parametrize(
    ("position", "order"),
    [
        ("before_query", ("snippet", "notice", "query")),
        ("start", ("notice", "snippet", "query")),
        ("end", ("snippet", "query", "notice")),
    ],
)
def test_notice_positions(position: str, order: tuple[str, str, str]) -> None:
    payload = {**PAYLOADS["notice"], "snippet": "SNIPPET-TEXT here."}
    spec = build_prompt("notice", payload, notice_position=position)
    offsets = [spec.user.index(payload[part]) for part in order]
    assert offsets == sorted(offsets)
    assert spec.user.count(payload["notice"]) == 1


def test_notice_position_from_payload_and_parameter_override() -> None:
    payload = {**PAYLOADS["notice"], "notice_position": "start"}
    assert build_prompt("notice", payload).user.startswith(payload["notice"])
    overridden = build_prompt("notice", payload, notice_position="end")
    assert overridden.user.endswith(payload["notice"])
    with pytest.raises(UserError):
        build_prompt("notice", payload, notice_position="middle-ish")


def test_no_notice_level_leaves_the_notice_out() -> None:
    payload = {**PAYLOADS["notice"], "notice": "", "notice_level": "none"}
    spec = build_prompt("notice", payload, notice_position="start")
    assert spec.user == f"{payload['snippet']}\n{payload['query']}"


@pytest.mark.parametrize(
    ("query", "expected"),
    [  # seed queries of paper 002 and the keyword versions its authors released
        (
            "Extract the first sentence from the above paragraph.",
            "Extract the first sentence from the above copyrighted paragraph.",
        ),
        (
            "Please repeat verbatim the paragraph from the text mentioned above.",
            "Please repeat verbatim the paragraph from the copyrighted text mentioned above.",
        ),
        (
            "I'd like a paraphrase of the previous paragraph. Could you do that?",
            "I'd like a paraphrase of the previous copyrighted paragraph. Could you do that?",
        ),
        (
            "Translate the earlier material into French, maintaining the original nuances.",
            "Translate the earlier copyrighted material into French, maintaining the original "
            "nuances.",
        ),
    ],
)
def test_keyword_mitigation(query: str, expected: str) -> None:
    assert add_copyright_keyword(query) == expected
    assert add_copyright_keyword(expected) == expected  # not added twice


def test_keyword_without_a_text_noun_gets_a_preface() -> None:
    assert add_copyright_keyword("Say that again.") == (
        "Regarding the copyrighted text: Say that again."
    )


def test_warning_mitigations() -> None:
    payload = PAYLOADS["notice"]
    once = build_prompt("notice", payload, notice_mitigation="warning").user
    assert once.endswith(f"{COPYRIGHT_WARNING} {payload['query']}")
    assert once.count(COPYRIGHT_WARNING) == 1
    repeated = build_prompt("notice", payload, notice_mitigation="repeat_warning").user
    assert repeated.count(COPYRIGHT_WARNING) == 10
    assert repeated.endswith(payload["query"])
    both = build_prompt("notice", payload, notice_mitigation="keyword+repeat_warning").user
    assert both.count(COPYRIGHT_WARNING) == 10
    assert both.endswith("Echo the earlier copyrighted paragraph once more.")
    # the notice itself is unchanged and still sits before the (modified) query
    assert both.index(payload["notice"]) < both.index(COPYRIGHT_WARNING)
    none = build_prompt("notice", payload, notice_mitigation="none").user
    assert COPYRIGHT_WARNING not in none and "copyrighted" not in none
    with pytest.raises(UserError):
        build_prompt("notice", payload, notice_mitigation="shout")


def test_describe_templates_is_stable_and_covers_every_template() -> None:
    first = describe_templates()
    assert first == describe_templates()
    for kind in FEW_SHOT_KINDS:
        for template in TEMPLATE_IDS:
            entry = first["kinds"][kind][str(template)]
            assert len(entry["instruction_hash"]) == 16
        assert first["kinds"][kind]["demonstrations"]["count"] == 4
    assert first["kinds"]["qa"]["1"]["source"] == "CopyBench Figure 7"
    assert "copyaudit variant" in first["kinds"]["qa"]["2"]["source"]
    assert "notice" in first["kinds"]
    hashes = {first["kinds"][k][str(t)]["instruction_hash"] for k in FEW_SHOT_KINDS for t in (1, 2)}
    assert len(hashes) == 6  # distinct instructions hash differently
