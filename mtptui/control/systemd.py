"""systemd's unit-file syntax, as far as mtptui reads and writes it.

Reading: the effective ExecStart= (and Environment=) of a service from `systemctl cat UNIT`, with
systemd's rules: files in the order `systemctl cat` prints them, only `[Service]`, `#`/`;` comment
lines, a trailing `\\` joining the next line (comment lines inside a continuation are skipped), an
empty `ExecStart=` resetting the list, then each value split into words the way
`config_parse_exec()` does: quotes, C escapes, `;` between commands, the `@-:+!` prefixes,
`%` specifiers and, when the service starts, `$` environment references.

Writing: an argv back in that syntax (`render_exec`), so that the process receives exactly the
strings given: `%` → `%%`, `$` → `$$`, and words with spaces, quotes, backslashes or control
characters double-quoted with C escapes. NUL, newline and carriage return are refused: a server flag
never needs one and a unit-file line cannot hold one as written. The drop-in that mtptui installs is
`render_dropin`.

References systemd fills in (`%i`, `%h`, `$OPTS`, `${X}`) cannot be resolved here. They stay in argv
as `Ref` strings that show their text literally and remember their unit-file form, so an argv read,
changed elsewhere and rendered again keeps them working. The behaviour is that of systemd 252
(Debian 12), checked against the real one in tests/integration/test_unit_syntax_systemd.py.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

WHITESPACE = " \t\n\r"
PREFIX_CHARS = "@-:+!"
DROPIN_NAME = "50-mtptui-spec.conf"

_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                   "\\": "\\", '"': '"', "'": "'", "s": " "}
_RENDER_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t"}
_REFUSED = {"\0": "NUL", "\n": "newline", "\r": "carriage return"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_UNIT_NAME = re.compile(r"[A-Za-z0-9:_.\\@-]{1,247}\Z")  # 255 with ".service"
_UNIT_TYPES = ("service", "socket", "device", "mount", "automount", "swap", "target", "path",
               "timer", "slice", "scope")
_HEADER = re.compile(r"# (/.*\.(?:service|conf))\Z")
_DROPIN = re.compile(r"\.d/[^/]+\.conf\Z")
_SHOW_BLOCK = re.compile(r"^(?:ExecStart(?:Ex)?=)?\{ path=", re.M)
_SHOW_ARGV = re.compile(r"argv\[\]=(.*) ; (?:ignore_errors|flags)=", re.S)


class UnitSyntaxError(ValueError):
    """Text systemd would refuse or read differently than meant, said in one line."""


class Ref(str):
    """An argv word holding something systemd fills in itself: a specifier (`%i`) when it loads
    the unit, an environment reference (`$OPTS`, `${X}`) when it starts it. The string is the
    word's text with the references shown literally; `raw` is its unit-file form (after quotes and
    escapes), which `render_exec` writes back unchanged."""

    raw: str

    def __new__(cls, text: str, raw: str) -> Ref:
        word = super().__new__(cls, text)
        word.raw = raw
        return word


@dataclass
class ExecStart:
    """The one command a service runs, as systemd assembles it from the unit and its drop-ins."""

    argv: list[str]  # with "@" in prefix, argv[0] is the program and argv[1] its argv[0]
    prefix: str = ""  # "@-:+!" characters before the program, as written
    source: str = ""  # the file whose ExecStart= set it (from `systemctl cat`'s "# /path" lines)
    environment: dict[str, str] = field(default_factory=dict)  # Environment=, later ones win

    @property
    def references(self) -> list[Ref]:
        """The words systemd fills in (specifiers, $VARIABLES): their values are unknown here."""
        return [w for w in self.argv if isinstance(w, Ref)]


# --- reading ---------------------------------------------------------------------------------

def _escape(s: str, i: int, out: bytearray) -> int:
    """The C escape at s[i] == "\\" (systemd's cunescape_one) appended to out; the index after it.
    An escape systemd does not know is kept as written, as systemd does (with a warning)."""
    c = s[i + 1]
    if c in _SIMPLE_ESCAPES:
        out += _SIMPLE_ESCAPES[c].encode()
        return i + 2
    value, width, raw_byte = None, 0, False
    if c == "x":
        width, raw_byte = 2, True
        digits = s[i + 2:i + 4]
        if len(digits) == 2 and all(d in string.hexdigits for d in digits):
            value = int(digits, 16)
    elif c in "uU":
        width = 4 if c == "u" else 8
        digits = s[i + 2:i + 2 + width]
        if len(digits) == width and all(d in string.hexdigits for d in digits):
            value = int(digits, 16)
            if c == "U" and not _unichar_is_valid(value):
                value = None
    elif c in "01234567":
        width, raw_byte = 2, True  # the escape is three octal digits, c being the first
        digits = s[i + 1:i + 4]
        if len(digits) == 3 and all(d in "01234567" for d in digits) and int(digits, 8) <= 255:
            value = int(digits, 8)
    if not value:  # unknown, malformed, or NUL: kept verbatim
        out += ("\\" + c).encode("utf-8", "surrogateescape")
        return i + 2
    if raw_byte:  # \xNN and \NNN are bytes, not characters: "\xc3\xa9" is "é"
        out.append(value)
    else:
        out += chr(value).encode("utf-8", "surrogatepass")
    return i + 2 + width


def _unichar_is_valid(cp: int) -> bool:
    return cp < 0x110000 and cp & 0xFFFFF800 != 0xD800 and not 0xFDD0 <= cp <= 0xFDEF \
        and cp & 0xFFFE != 0xFFFE


def _extract(s: str, i: int) -> tuple[str | None, int]:
    """The next word of s from i (systemd's extract_first_word with UNQUOTE|CUNESCAPE, relaxed
    the way extract_first_word_and_warn retries) and the index after it; None at the end."""
    n = len(s)
    while i < n and s[i] in WHITESPACE:
        i += 1
    if i == n:
        return None, n
    out = bytearray()
    quote = ""
    while i < n:
        c = s[i]
        if c == "\\":
            if i + 1 == n:
                if quote:
                    break
                out += b"\\"  # a trailing backslash outside quotes is kept
                i += 1
                continue
            i = _escape(s, i, out)
        elif quote:
            if c == quote:
                quote = ""
            else:
                out += c.encode("utf-8", "surrogateescape")
            i += 1
        elif c in "'\"":
            quote = c
            i += 1
        elif c in WHITESPACE:
            break
        else:
            out += c.encode("utf-8", "surrogateescape")
            i += 1
    if quote:
        raise UnitSyntaxError(f"unbalanced quoting in {s!r}: systemd ignores the whole line")
    return out.decode("utf-8", "surrogateescape"), i


def _resolve(word: str, env: bool) -> str:
    """What the process gets for a word: `%%` → `%` and (with env) `$$` → `$`. A word with any
    other `%X` or `$` is a Ref: systemd fills those in, and a lone trailing `%` stays itself."""
    out: list[str] = []
    ref = False
    i, n = 0, len(word)
    while i < n:
        c = word[i]
        if c == "%" and i + 1 < n:
            if word[i + 1] == "%":
                out.append("%")
            else:
                out.append(word[i:i + 2])
                ref = True
            i += 2
        elif c == "$" and env:
            if word.startswith("$$", i):
                i += 1
            else:
                ref = True
            out.append("$")
            i += 1
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    return Ref(text, word) if ref else text


def _split_prefix(first: str) -> tuple[str, str]:
    """(prefix, rest) of ExecStart's first word, with config_parse_exec's rules for which
    combinations count (`!!` is one flag; `+` excludes `!`)."""
    ignore = at = colon = plus = no_setuid = ambient = False
    k = 0
    for k, c in enumerate(first):  # noqa: B007 - k is used after the loop
        if c == "-" and not ignore:
            ignore = True
        elif c == "@" and not at:
            at = True
        elif c == ":" and not colon:
            colon = True
        elif c == "+" and not (plus or no_setuid or ambient):
            plus = True
        elif c == "!" and not (plus or no_setuid or ambient):
            no_setuid = True
        elif c == "!" and not (plus or ambient):
            no_setuid, ambient = False, True
        else:
            return first[:k], first[k:]
    return first, ""


def _check_program(path: str) -> None:
    """What config_parse_exec refuses in the program's path (whose specifiers, if any, systemd
    fills in first: then only the characters can be checked here)."""
    if not path:
        raise UnitSyntaxError("empty program path in ExecStart=")
    bad = [c for c in path if ord(c) < 32 or c in "\"'\\\x7f"]
    if bad:
        raise UnitSyntaxError(f"program path {path!r} holds {bad[0]!r}: systemd refuses it")
    if path.endswith("/"):
        raise UnitSyntaxError(f"program path {path!r} is a directory")
    if isinstance(path, Ref) and "%" in path.raw:
        return
    if not path.startswith("/") and ("/" in path or path in (".", "..") or len(path) > 255):
        raise UnitSyntaxError(f"program {path!r} is neither an absolute path nor a plain name")


def _commands(value: str) -> list[tuple[str, list[str]]]:
    """The commands of one ExecStart= value: [(prefix, argv)] (config_parse_exec)."""
    cmds: list[tuple[str, list[str]]] = []
    n = len(value)
    p = 0
    more = True
    while more:
        more = False
        first, p = _extract(value, p)
        if first is None:
            break
        if first == ";":
            more = True
            continue
        prefix, path = _split_prefix(first)
        env = ":" not in prefix
        # The program path is not expanded at start, but argv[0] (the same text, unless "@"
        # gives its own) is: a path with "$" is only ever a Ref, so rendering keeps it as is.
        program = _resolve(path, env and "@" not in prefix)
        if "$" in path and not isinstance(program, Ref):
            program = Ref(program, path)
        _check_program(program)
        argv: list[str] = [program]
        while True:
            while p < n and value[p] in WHITESPACE:
                p += 1
            if p == n:
                break
            if value[p] == ";" and (p + 1 == n or value[p + 1] in WHITESPACE):
                p += 1
                more = True
                break
            if value.startswith("\\;", p) and (p + 2 == n or value[p + 2] in WHITESPACE):
                p += 2
                argv.append(";")
                continue
            word, p = _extract(value, p)
            if word is None:
                break
            argv.append(_resolve(word, env))
        if "@" in prefix and len(argv) < 2:
            raise UnitSyntaxError("ExecStart=@… names no argv[0] after the program")
        cmds.append((prefix, argv))
    return cmds


def split_exec(value: str) -> tuple[str, list[str]]:
    """An ExecStart= value → (prefix, argv) as the process receives them (references kept as
    `Ref` words). With "@" in prefix, argv[0] is the program and argv[1] the name it is given.
    Raises UnitSyntaxError for unbalanced quotes, a bad program path, or a second command."""
    cmds = _commands(value)
    if not cmds:
        raise UnitSyntaxError("ExecStart= is empty")
    if len(cmds) > 1:
        raise UnitSyntaxError(f"ExecStart= holds {len(cmds)} commands separated by ';': "
                              "a service runs one")
    return cmds[0]


def _lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)  # systemd's read_line ends a line at any of these


def _assignments(text: str, section: str) -> Iterator[tuple[str, str]]:
    """(key, value) of one unit file's section, with systemd's comment and continuation rules."""
    current = None
    pending: str | None = None
    for raw in _lines(text):
        stripped = raw.lstrip(WHITESPACE)
        if stripped[:1] in ("#", ";"):
            continue  # a comment, also inside a continuation (and never continued itself)
        line = raw if pending is None else pending + raw
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending = line[:-1] + " "
            continue
        pending = None
        line = line.strip(WHITESPACE)
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise UnitSyntaxError(f"invalid section header {line!r}")
            current = line[1:-1]
            continue
        key, eq, value = line.partition("=")
        if eq and current == section:
            yield key.strip(WHITESPACE), value.strip(WHITESPACE)
    if pending is not None and current == section:
        key, eq, value = pending.strip(WHITESPACE).partition("=")
        if eq:
            yield key.strip(WHITESPACE), value.strip(WHITESPACE)


def _cat_files(cat_text: str) -> list[tuple[str, str]]:
    """[(path, text)] of `systemctl cat` output: each file follows a "# /path" line, and every
    file after the first is set off by an empty line (warnings may come before the first).
    Text without such a line is one file of unknown path."""
    files: list[tuple[str, list[str]]] = []
    prev = ""
    for line in cat_text.split("\n"):
        m = _HEADER.match(line)
        if m and (not files or prev == "" or _DROPIN.search(m.group(1))):
            if files and files[-1][1] and files[-1][1][-1] == "":
                files[-1][1].pop()  # the empty line systemctl printed before this header
            files.append((m.group(1), []))
        elif files:
            files[-1][1].append(line)
        prev = line
    if not files:
        return [("", cat_text)]
    return [(path, "\n".join(lines)) for path, lines in files]


def _environment(value: str) -> Iterator[tuple[str, str]]:
    """(name, value) pairs of one Environment= value (config_parse_environ): words with quotes
    and escapes, `%%` → `%`; `$` is not expanded. Malformed words are skipped, as systemd does."""
    p = 0
    while True:
        word, p = _extract(value, p)
        if word is None:
            return
        name, eq, val = word.partition("=")
        if eq and _ENV_NAME.match(name):
            yield name, str(_resolve(val, env=False))


def effective_exec_start(cat_text: str, *, ignore_dropin: str | None = None) -> ExecStart:
    """The service's ExecStart from `systemctl cat UNIT` output (or one unit file's text).
    `ignore_dropin` leaves out a drop-in by file name (mtptui's own, to see the unit as it would be
    without it). Raises UnitSyntaxError when no command or more than one remains (Type=oneshot
    may have several, but mtptui acts on servers only), or when systemd would refuse the value."""
    files = _cat_files(cat_text)
    commands: list[tuple[str, list[str], str]] = []
    env: dict[str, str] = {}
    for path, text in files:
        directory, _, name = path.rpartition("/")
        if ignore_dropin and name == ignore_dropin and directory.endswith(".d"):
            continue
        for key, value in _assignments(text, "Service"):
            if key == "ExecStart":
                if not value:
                    commands.clear()
                for prefix, argv in _commands(value):
                    commands.append((prefix, argv, path))
            elif key == "Environment":
                if not value:
                    env.clear()
                env.update(_environment(value))
    if not commands:
        raise UnitSyntaxError(f"no ExecStart= in [Service] of {files[0][0] or 'the unit'} or its drop-ins")
    if len(commands) > 1:
        sources = ", ".join(dict.fromkeys(c[2] for c in commands))
        raise UnitSyntaxError(f"{len(commands)} ExecStart= commands (from {sources}): mtptui "
                              "changes a service that runs exactly one")
    prefix, argv, source = commands[0]
    return ExecStart(argv=argv, prefix=prefix, source=source, environment=env)


# --- writing ---------------------------------------------------------------------------------

def _check_text(text: str, what: str) -> None:
    for c in text:
        if c in _REFUSED:
            raise UnitSyntaxError(f"{_REFUSED[c]} in {what}: a unit-file line cannot hold one")
        if "\ud800" <= c <= "\udfff":
            raise UnitSyntaxError(f"{what} is not valid UTF-8 text")


def _quote(body: str) -> str:
    """A unit-file word for body (which already has its `%%` and `$$`): bare when that reads the
    same, else double-quoted with C escapes."""
    if body and body != ";" and not any(c in " \t\"'\\" or ord(c) < 32 or c == "\x7f" for c in body):
        return body
    out = []
    for c in body:
        if c in _RENDER_ESCAPES:
            out.append(_RENDER_ESCAPES[c])
        elif ord(c) < 32 or c == "\x7f":
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _render_word(word: str, env: bool) -> str:
    if isinstance(word, Ref):
        return _quote(word.raw)
    body = word.replace("%", "%%")
    return _quote(body.replace("$", "$$") if env else body)


def render_exec(argv: list[str], *, prefix: str = "") -> str:
    """An ExecStart= value that gives the process exactly argv: split_exec(render_exec(a, prefix=p))
    == (p, a). Raises UnitSyntaxError for NUL/newline/CR anywhere, an unknown prefix, or a
    program path systemd would refuse or misread (one starting with a prefix character, or with
    quotes, backslashes, control characters or `$`)."""
    if not argv:
        raise UnitSyntaxError("no command to write")
    if _split_prefix(prefix + "/") != (prefix, "/"):
        raise UnitSyntaxError(f"{prefix!r} is not an ExecStart= prefix (combine {PREFIX_CHARS})")
    for i, word in enumerate(argv):
        _check_text(word.raw if isinstance(word, Ref) else word, f"argument {i}")
    program = argv[0]
    if program[:1] in PREFIX_CHARS:
        raise UnitSyntaxError(f"program {program!r} starts with {program[0]!r}: systemd would read "
                              "it as a prefix")
    if "$" in program and not isinstance(program, Ref):
        raise UnitSyntaxError(f"program path {program!r} holds '$'")
    _check_program(program)
    if "@" in prefix and len(argv) < 2:
        raise UnitSyntaxError("with the '@' prefix argv needs the program and its argv[0]")
    env = ":" not in prefix
    return prefix + " ".join(_render_word(w, env) for w in argv)


def _comment(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def service_name(unit: str) -> str:
    """The unit's full name as systemctl completes it ("sglang" → "sglang.service"); raises
    UnitSyntaxError for a name systemd would refuse or that is not a service."""
    if not _UNIT_NAME.match(unit) or unit.startswith("."):
        raise UnitSyntaxError(f"{unit!r} is not a systemd unit name")
    base, dot, suffix = unit.rpartition(".")
    if dot and suffix in _UNIT_TYPES:
        if suffix != "service":
            raise UnitSyntaxError(f"{unit} is a {suffix} unit: mtptui restarts services")
        return unit
    return unit + ".service"


def dropin_dir(unit: str) -> str:
    return f"/etc/systemd/system/{service_name(unit)}.d"


def render_dropin(argv: list[str], env: Mapping[str, str], *, profile: str, written_by: str,
                  prefix: str = "") -> str:
    """mtptui's drop-in: a header saying who wrote it for which profile, ExecStart= reset and set
    to argv, and one Environment= line per variable (systemd does not expand `$` there, so only
    `%` is doubled)."""
    lines = [f"# Written by mtptui for {_comment(written_by)}: speculation profile "
             f"{_comment(profile)}.",
             "# mtptui replaces this file on the next change and removes it on revert.",
             "[Service]",
             "ExecStart=",
             "ExecStart=" + render_exec(argv, prefix=prefix)]
    for name, value in env.items():
        if not _ENV_NAME.match(name):
            raise UnitSyntaxError(f"{name!r} is not an environment variable name")
        _check_text(value, f"the value of {name}")
        lines.append("Environment=" + _quote(f"{name}={value}".replace("%", "%%")))
    return "\n".join(lines) + "\n"


# --- what systemd loaded ---------------------------------------------------------------------

def show_exec_start(show_text: str) -> list[list[str]]:
    """The commands in `systemctl show -p ExecStart UNIT` output (with or without --value): each
    argv[] split on spaces. Lossy, since systemd joins the words with spaces; see `agrees`."""
    return [text.split(" ") for text in _show_argv_texts(show_text)]


def _show_argv_texts(show_text: str) -> list[str]:
    starts = [m.start() for m in _SHOW_BLOCK.finditer(show_text)] + [len(show_text)]
    texts = []
    for a, b in zip(starts, starts[1:]):
        m = _SHOW_ARGV.search(show_text, a, b)
        if m:
            texts.append(m.group(1))
    return texts


def _loaded_pattern(word: str, env: bool) -> str:
    """A regex for the word as systemd holds it once loaded: specifiers filled in (unknown here,
    so they match any text without a space), `$` still as written (it is expanded at start)."""
    if not isinstance(word, Ref):
        return re.escape(word.replace("$", "$$") if env else word)
    parts = re.split(r"(%.)", word.raw)
    return "".join(re.escape("%") if p == "%%" else "[^ ]*" if p.startswith("%") and len(p) == 2
                   else re.escape(p) for p in parts)


def agrees(argv: list[str], show_text: str, *, prefix: str = "") -> bool:
    """Whether argv (from `effective_exec_start`) is the one command systemd has loaded, per
    `systemctl show -p ExecStart`. False means a daemon-reload is pending or the file says
    something else to systemd than to this parser."""
    texts = _show_argv_texts(show_text)
    if len(texts) != 1:
        return False
    words = argv[1:] if "@" in prefix else argv
    env = ":" not in prefix
    pattern = " ".join(_loaded_pattern(w, env) for w in words)
    return re.fullmatch(pattern, texts[0], re.S) is not None
