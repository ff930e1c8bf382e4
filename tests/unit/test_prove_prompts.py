"""The benchmark's prompts: the shipped set in its five categories, and the operator's file in
each of its three forms; a bad file is one line naming the line that is wrong."""

from __future__ import annotations

import json

import pytest

from mtptui.cli import main as cli_main
from mtptui.errors import UsageError
from mtptui.prove import prompts
from mtptui.prove.load import chat_body
from mtptui.sim.answers import arithmetic


def test_the_shipped_set_has_every_category_and_no_arithmetic():
    assert {p.category for p in prompts.PROMPTS} == set(prompts.CATEGORIES)
    assert all(arithmetic(p.messages[-1]["content"]) is None for p in prompts.PROMPTS)  # long answers
    assert prompts.draw(6, 3) == prompts.draw(6, 3) != prompts.draw(6, 4)


def test_jsonl_chat_requests_with_their_max_tokens_and_category(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"messages": [{"role": "system", "content": "Be terse."},
                                          {"role": "user", "content": "Write a haiku."}],
                             "max_tokens": 40, "category": "chat"}) + "\n\n"
                 + json.dumps({"messages": [{"role": "user", "content": "def f(x):"}]}) + "\n")
    got = prompts.read_file(f)
    assert [(len(p.messages), p.max_tokens, p.category) for p in got] == [(2, 40, "chat"), (1, None, None)]
    assert chat_body("m", got[0], 128)["max_tokens"] == 40 and chat_body("m", got[1], 128)["max_tokens"] == 128
    assert chat_body("m", got[0], 128)["messages"][1] == {"role": "user", "content": "Write a haiku."}


def test_sharegpt_json_sends_the_turns_up_to_the_first_human_one(tmp_path):
    f = tmp_path / "sg.json"
    f.write_text(json.dumps([
        {"id": "a", "conversations": [{"from": "human", "value": "Hello?"}, {"from": "gpt", "value": "Hi."}]},
        {"id": "b", "category": "code", "conversations": [{"from": "system", "value": "You code."},
                                                          {"from": "human", "value": "Sort a list."}]}], indent=1))
    got = prompts.read_file(f)
    assert got[0].messages == ({"role": "user", "content": "Hello?"},)
    assert [m["role"] for m in got[1].messages] == ["system", "user"] and got[1].category == "code"


def test_plain_text_is_a_prompt_a_line(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("# my traffic\nExplain TCP slow start.\n\n  Write a limerick.  \n")
    assert [p.messages[0]["content"] for p in prompts.read_file(f)] == ["Explain TCP slow start.", "Write a limerick."]


@pytest.mark.parametrize("name, text, message", [
    ("p.jsonl", '{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [}\n', "p.jsonl:2: not JSON"),
    ("p.jsonl", '{"messages": [{"role": "user", "content": "a"}]}\n\n{"prompt": "b"}\n', 'p.jsonl:3: no "messages" list'),
    ("p.jsonl", '{"messages": [{"role": "user", "content": "a"}], "max_tokens": 0}\n', "p.jsonl:1: \"max_tokens\" is not"),
    ("p.jsonl", '{"messages": [{"role": "user"}]}\n', "p.jsonl:1: a message without"),
    ("sg.json", '[\n {"conversations": [{"from": "human", "value": "a"}]},\n {"conversations": [{"from": "gpt",'
                ' "value": "b"}]}\n]\n', "sg.json:3: a conversation with no human turn"),
    ("sg.json", '[\n {"conversations": [{"from": "human", "value": "a"}]},\n {"conversations": [oops]}\n]\n',
     "sg.json:3: not JSON"),
    ("sg.json", '[\n {"x": 1}\n]\n', 'sg.json:2: an entry without a "conversations" list'),
    ("empty.txt", "\n# nothing\n", "empty.txt: no prompts in it"),
])
def test_a_bad_file_is_one_line_with_its_line_number(tmp_path, name, text, message):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(UsageError) as e:
        prompts.read_file(f)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_bench_says_a_bad_prompts_file_and_exits_2_before_connecting(tmp_path, capsys):
    f = tmp_path / "p.jsonl"
    f.write_text('{"messages": [{"role": "user", "content": "a"}]}\n{oops\n')
    assert cli_main(["bench", "gpu1", "--prompts", str(f), "--yes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "p.jsonl:2: not JSON" in err[0]
    assert cli_main(["bench", "gpu1", "--prompts", str(tmp_path / "none.txt")]) == 2
