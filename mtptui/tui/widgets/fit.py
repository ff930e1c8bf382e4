"""Lines made of parts that fit a width: what matters least is shortened, then left out, so no
part is ever cut in the middle of a number (as an ellipsis at the edge of the screen would)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content


@dataclass(frozen=True)
class Part:
    rank: int  # 0 matters most; the highest rank is shortened or left out first
    forms: tuple[Content, ...]  # the longest first; each form brings its own separator

    @classmethod
    def of(cls, rank: int, *forms) -> Part:
        """forms: each a Content, a str, or a (text, style) pair, or a list of those (assembled)."""
        return cls(rank, tuple(f if isinstance(f, Content) else
                               Content.assemble(*(f if isinstance(f, list) else [f])) for f in forms))


def fit(parts: list[Part], width: int) -> Content:
    """The parts in their order, each in the longest form that lets the line fit `width` cells,
    shortening and then leaving out the least important ones first."""
    chosen = {i: 0 for i in range(len(parts))}

    def length() -> int:
        return sum(parts[i].forms[f].cell_length for i, f in chosen.items())

    for i in sorted(range(len(parts)), key=lambda i: (-parts[i].rank, -i)):
        if length() <= width:
            break
        while chosen[i] + 1 < len(parts[i].forms) and length() > width:
            chosen[i] += 1
        if length() > width and parts[i].rank > 0:  # what matters most stays, if need be cut at the edge
            del chosen[i]
    return Content.assemble(*(parts[i].forms[f] for i, f in sorted(chosen.items())))
