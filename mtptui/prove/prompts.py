"""The benchmark's prompts: the set shipped with mtptui (short chat requests in five categories:
code, maths, chat, summarisation, structured output), or the operator's own from a file, read on
this machine. Drawn by seed, so that two runs send the same requests in the same order.

A prompts file is one of three forms, told from its first character that is not blank:
- JSONL (a line starting ``{``): an OpenAI chat request a line, ``{"messages": [...]}``, with an
  optional ``max_tokens`` (else ``--max-tokens``) and an optional ``category``;
- ShareGPT JSON (``[``): a list of ``{"conversations": [{"from": "human", "value": ...}, ...]}``;
  the turns up to the first human one are the request, as SGLang's bench_serving sends them;
  an entry's optional ``category`` is kept;
- plain text: a prompt a line (blank lines and lines starting ``#`` skipped).
A file that cannot be read is a UsageError of one line naming the file and the line.

The shipped prompts hold no arithmetic (the simulator answers that in a word, and a benchmark
wants long answers).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mtptui.errors import UsageError
from mtptui.files import MIB, TooLarge, read_bounded

CODE, MATHS, CHAT, SUMMARISATION, STRUCTURED = "code", "maths", "chat", "summarisation", "structured output"
CATEGORIES = (CODE, MATHS, CHAT, SUMMARISATION, STRUCTURED)
ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant",
         "system": "system", "bard": "assistant", "bing": "assistant"}


@dataclass(frozen=True)
class Prompt:
    """One request: its chat messages, its own max_tokens (None: the benchmark's) and category."""

    messages: tuple[dict[str, str], ...]
    max_tokens: int | None = None
    category: str | None = None

    @classmethod
    def text(cls, content: str, category: str | None = None) -> Prompt:
        return cls(({"role": "user", "content": content},), None, category)


def _shipped(category: str, *texts: str) -> tuple[Prompt, ...]:
    return tuple(Prompt.text(t, category) for t in texts)


PROMPTS = (
    *_shipped(CODE,
              "Write a Python function that merges two sorted lists into one sorted list, with tests.",
              "Explain what a hash table is and how collisions are handled, with a short code example.",
              "Write a SQL query that finds each customer's most recent order, and explain it.",
              "Refactor a long if-elif chain that maps status names to handlers into a dictionary lookup.",
              "Write a bash script that rotates log files in a directory, keeping the newest five."),
    *_shipped(MATHS,
              "Explain step by step how to solve a quadratic equation by completing the square.",
              "Prove that the square root of two is irrational, explaining each step.",
              "What is a derivative? Explain it with the slope of a curve and a worked example.",
              "Explain Bayes' theorem with an example about a medical test.",
              "Why does the sum of the angles of a triangle equal a straight angle? Give a proof."),
    *_shipped(CHAT,
              "Write a short story about a lighthouse keeper who finds a message in a bottle.",
              "Give advice to someone preparing for their first marathon.",
              "Describe a walk through an autumn forest, as vividly as you can.",
              "Write a dialogue between a customer and a barista about a new seasonal drink.",
              "What are the benefits and risks of working from home for a small company?"),
    *_shipped(SUMMARISATION,
              "Summarise the causes of the French Revolution for a high-school student.",
              "Summarise how speculative decoding speeds up text generation, in plain words.",
              "Summarise the trade-offs between tensor parallelism and pipeline parallelism.",
              "Summarise the life cycle of a star like the Sun in a few paragraphs.",
              "Summarise how a bill becomes a law in a parliamentary democracy."),
    *_shipped(STRUCTURED,
              "Return a JSON object describing a fictional book: title, author, year, genres, and a summary.",
              "List the steps to bake a loaf of sourdough bread as a JSON array of objects with step and why.",
              "Write a YAML config for a web service with three environments, each with its own database.",
              "Give a Markdown table comparing Python lists, tuples and sets on mutability, order and speed.",
              "Describe a deployment checklist as JSON: an array of items, each with name, owner and done."),
)


def draw(n: int, seed: int = 0, pool: tuple[Prompt, ...] | list[Prompt] = PROMPTS) -> list[Prompt]:
    """n prompts from the pool (the shipped set unless given), the same ones for the same seed."""
    rng = random.Random(seed)
    return [rng.choice(pool) for _ in range(n)]


# --- the operator's file ---------------------------------------------------------------------------


PROMPTS_LIMIT = 64 * MIB  # a prompts file (--prompts): past it, refused


def read_file(path: str | Path) -> list[Prompt]:
    """The prompts of a file (JSONL, ShareGPT JSON or plain text). Raises UsageError, one line:
    `FILE:LINE: what is wrong`."""
    p = Path(path)
    try:
        raw = read_bounded(p, PROMPTS_LIMIT, "a prompts file")
        text = raw.decode("utf-8")
    except TooLarge as e:
        raise UsageError(f"--prompts {e}") from None
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise UsageError(f"--prompts {p}:{line}: not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"--prompts {p}: {e.strerror or e}") from None
    head = text.lstrip()[:1]
    out = _jsonl(text, p) if head == "{" else _sharegpt(text, p) if head == "[" else _plain(text)
    if not out:
        raise UsageError(f"--prompts {p}: no prompts in it")
    return out


def _jsonl(text: str, path: Path) -> list[Prompt]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise UsageError(f"--prompts {path}:{n}: not JSON ({e.msg}, column {e.colno})") from None
        out.append(_chat_request(obj, f"{path}:{n}"))
    return out


def _chat_request(obj: Any, where: str) -> Prompt:
    if not isinstance(obj, dict):
        raise UsageError(f"--prompts {where}: not a JSON object")
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UsageError(f"--prompts {where}: no \"messages\" list")
    for m in messages:
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
            raise UsageError(f"--prompts {where}: a message without a text \"role\" and \"content\"")
    max_tokens = obj.get("max_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise UsageError(f"--prompts {where}: \"max_tokens\" is not a whole number of 1 or more")
    return Prompt(tuple({"role": m["role"], "content": m["content"]} for m in messages), max_tokens,
                  _category(obj, where))


def _category(obj: dict, where: str) -> str | None:
    category = obj.get("category")
    if category is not None and not isinstance(category, str):
        raise UsageError(f"--prompts {where}: \"category\" is not text")
    return category or None


def _sharegpt(text: str, path: Path) -> list[Prompt]:
    """Entry by entry (raw_decode), so that a bad entry is told by the line it starts on."""
    dec = json.JSONDecoder()

    def line_at(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        return pos

    pos = skip(text.index("[") + 1)
    out = []
    while True:
        if pos < len(text) and text[pos] == "]":
            break
        try:
            entry, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise UsageError(f"--prompts {path}:{e.lineno}: not JSON ({e.msg}, column {e.colno})") from None
        out.append(_conversation(entry, f"{path}:{line_at(pos)}"))
        pos = skip(end)
        if pos < len(text) and text[pos] == ",":
            pos = skip(pos + 1)
        elif pos >= len(text) or text[pos] != "]":
            raise UsageError(f"--prompts {path}:{line_at(pos)}: expected ',' or ']' after an entry")
    if text[pos + 1:].strip():
        raise UsageError(f"--prompts {path}:{line_at(pos + 1)}: more after the list's end")
    return out


def _conversation(entry: Any, where: str) -> Prompt:
    turns = entry.get("conversations") if isinstance(entry, dict) else None
    if not isinstance(turns, list):
        raise UsageError(f"--prompts {where}: an entry without a \"conversations\" list")
    messages = []
    for t in turns:
        role = ROLES.get(t.get("from", "")) if isinstance(t, dict) else None
        if role is None or not isinstance(t.get("value"), str):
            raise UsageError(f"--prompts {where}: a turn without a known \"from\" and a text \"value\"")
        messages.append({"role": role, "content": t["value"]})
        if role == "user":
            return Prompt(tuple(messages), None, _category(entry, where))
    raise UsageError(f"--prompts {where}: a conversation with no human turn")


def _plain(text: str) -> list[Prompt]:
    return [Prompt.text(line.strip()) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
