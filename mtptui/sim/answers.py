"""What the simulated model says: the right answer to simple arithmetic (so a smoke test can pass
or fail for real: "What is 15*23? Answer with the number only." gets "345"), and an honest
placeholder otherwise. Tokens are words with their spaces,
about what a tokenizer would give for English.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_WORDS = [(re.compile(r"\b(times|multiplied by)\b", re.IGNORECASE), "*"), (re.compile(r"\bplus\b", re.IGNORECASE), "+"),
          (re.compile(r"\bminus\b", re.IGNORECASE), "-"), (re.compile(r"\bdivided by\b", re.IGNORECASE), "/"),
          (re.compile(r"(?<=\d)\s*[x×]\s*(?=\d)"), "*"), (re.compile(r"÷"), "/")]
# "Answer with the number only": a model that follows it says the value and nothing else.
_VALUE_ONLY = re.compile(r"\b(?:numbers? only|only the (?:number|value|result|answer)|just the (?:number|value|result))\b",
                         re.IGNORECASE)
# The longest run of numbers, operators, brackets and spaces that holds an operator.
_EXPR = re.compile(r"[\d(][\d\s.+\-*/%^()]*[\d)]")

PLACEHOLDER = ("This reply comes from the mtptui SGLang simulator, which serves no model. It streams "
               "placeholder words at the pace that the simulated speculative decoding settings "
               "imply, so that dashboards, benchmarks and tests have something real to measure. ")


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    raise ValueError("not arithmetic")


def arithmetic(prompt: str) -> str | None:
    """'What is 15*23?' -> '15*23 = 345'. None when the prompt holds no arithmetic."""
    text = prompt
    for rx, sym in _WORDS:
        text = rx.sub(sym, text)
    best = None
    for m in _EXPR.finditer(text):
        expr = m.group(0).strip()
        if not re.search(r"\d\s*[-+*/%^]\s*[\d(]", expr):
            continue
        if best is None or len(expr) > len(best):
            best = expr
    if best is None or len(best) > 200:
        return None
    try:
        value = _eval(ast.parse(best.replace("^", "**"), mode="eval"))
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else round(value, 6)
    return f"{' '.join(best.split())} = {value}"


def tokens_of(text: str) -> list[str]:
    """Words with their leading space, like a BPE tokenizer's pieces for plain English."""
    return re.findall(r"\s*\S+", text)


def reply(prompt: str, max_tokens: int | None) -> tuple[list[str], str]:
    """(tokens, finish_reason) for a prompt."""
    answer = arithmetic(prompt)
    if answer is None:
        text = PLACEHOLDER.strip()
    elif _VALUE_ONLY.search(prompt):
        text = answer.rsplit(" = ", 1)[1]
    else:
        text = f"{answer}."
    toks = tokens_of(text)
    if max_tokens is None:
        return toks, "stop"
    limit = max(1, max_tokens)
    if len(toks) <= limit and answer is not None:
        return toks, "stop"
    # Asked for more than the placeholder: keep talking, as a model without EOS would.
    words = tokens_of(" " + PLACEHOLDER.strip())
    while len(toks) < limit:
        toks.extend(words)
    if len(toks) == limit:
        return toks, "length"
    return toks[:limit], "length"


def count_prompt_tokens(text: str) -> int:
    """About 4 characters a token, plus a chat template's few."""
    return max(1, len(text) // 4 + 8)
