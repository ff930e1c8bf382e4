"""systemd's unit-file syntax: ExecStart= split and rendered, the effective ExecStart of a unit and
its drop-ins, what `systemctl show` says. The expected values come from systemd 252 itself (the
integration test test_unit_syntax_systemd.py checks the same against a running systemd)."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mtptui.control.systemd import (
    DROPIN_NAME,
    ExecStart,
    Ref,
    UnitSyntaxError,
    agrees,
    dropin_dir,
    effective_exec_start,
    render_dropin,
    render_exec,
    service_name,
    show_exec_start,
    split_exec,
)

PY = '/usr/bin/python3 -c "import sys,json; print(json.dumps(sys.argv[1:]))"'


# --- split_exec, by value (each expectation is what systemd 252 gave the process) ---------------

@pytest.mark.parametrize("words,argv", [
    ('a"b c"d', ["ab cd"]),
    ("'x y'", ["x y"]),
    ("$$HOME", ["$HOME"]),
    ("%%", ["%"]),
    (r"\x41 \101 \u00e9 \U0001F600", ["A", "A", "é", "😀"]),
    (r'"\t" \a \b \f \r \v \s \x7f', ["\t", "\a", "\b", "\f", "\r", "\v", " ", "\x7f"]),
    (r"a\ b", ["a\\ b"]),  # an unknown escape is kept, and the escaped space joins the word
    (r'"q\"q" \' "\'" "it' + "'" + 's"', ['q"q', "'", "'", "it's"]),
    ("'say \"hi\"'", ['say "hi"']),
    (r'\; ";" x\;y', [";", ";", "x\\;y"]),
    ("'' \"\"", ["", ""]),
    (r"\\ x", ["\\", "x"]),
    (r"\e \q \/", ["\\e", "\\q", "\\/"]),
    (r"\U00110000 \x00 \000 \400 \x4g \u12", ["\\U00110000", "\\x00", "\\000", "\\400", "\\x4g", "\\u12"]),
    (r'\xc3\xa9 "\xff" \ud800', ["é", "\udcff", "\udced\udca0\udc80"]),  # bytes, as Python's argv has them
    ("a$$b $$$$ x$ ${FOO", ["a$b", "$$", "x$", "${FOO"]),
    ("a% b%", ["a%", "b%"]),  # a lone trailing % stays
])
def test_split_exec_gives_what_the_process_got(words, argv):
    prefix, got = split_exec(f"{PY} {words}")
    assert prefix == ""
    assert got[:3] == ["/usr/bin/python3", "-c", "import sys,json; print(json.dumps(sys.argv[1:]))"]
    assert got[3:] == argv


def test_references_stay_as_refs_with_their_unit_file_form():
    _, argv = split_exec("/bin/x %i $OPTS ${X} --a=%h/$$y \"%%n\" $$z")
    assert argv == ["/bin/x", "%i", "$OPTS", "${X}", "--a=%h/$y", "%n", "$z"]
    refs = {w: w.raw for w in argv if isinstance(w, Ref)}
    assert refs == {"%i": "%i", "$OPTS": "$OPTS", "${X}": "${X}", "--a=%h/$y": "--a=%h/$$y"}
    assert render_exec(argv) == "/bin/x %i $OPTS ${X} --a=%h/$$y %%n $$z"


@pytest.mark.parametrize("value,prefix,argv", [
    ('"-/usr/bin/python3" -c x', "-", ["/usr/bin/python3", "-c", "x"]),  # the prefix is read after unquoting
    ("@/usr/bin/python3 myname -c x", "@", ["/usr/bin/python3", "myname", "-c", "x"]),
    ("!!/bin/x", "!!", ["/bin/x"]),
    ("+-:@/bin/x name", "+-:@", ["/bin/x", "name"]),
    (":/bin/x $$a $b", ":", ["/bin/x", "$$a", "$b"]),  # ":" turns $ expansion off
    ("-/bin/x ;", "-", ["/bin/x"]),  # a trailing ";" starts no second command
    ("; /bin/x", "", ["/bin/x"]),
])
def test_prefixes(value, prefix, argv):
    assert split_exec(value) == (prefix, argv)


@pytest.mark.parametrize("value,message", [
    ('/bin/x "a b', "unbalanced quoting"),
    ("/bin/x 'a", "unbalanced quoting"),
    ('/bin/x "a\\', "unbalanced quoting"),
    ("/bin/a ; /bin/b", "holds 2 commands"),
    ("", "ExecStart= is empty"),
    ("@/bin/x", r"names no argv\[0\]"),
    ("bin/python", "neither an absolute path nor a plain name"),
    ("/usr/bin/", "is a directory"),
    (r'"/bin/a\"b"', "systemd refuses it"),
    ("-", "empty program path"),
])
def test_split_exec_refuses_what_systemd_refuses(value, message):
    with pytest.raises(UnitSyntaxError, match=message):
        split_exec(value)


# --- render_exec -------------------------------------------------------------------------------

def test_render_keeps_ordinary_words_bare():
    argv = ["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-122B-A10B",
            "--speculative-num-steps", "3"]
    assert render_exec(argv) == " ".join(argv)


@pytest.mark.parametrize("word,rendered", [
    ("a b", '"a b"'),
    ("", '""'),
    ("50%", "50%%"),
    ("$HOME", "$$HOME"),
    ("; touch /tmp/x", '"; touch /tmp/x"'),
    ("$(touch /tmp/x)", '"$$(touch /tmp/x)"'),
    ("`id`", "`id`"),
    ('say "hi"', '"say \\"hi\\""'),
    ("back\\slash", '"back\\\\slash"'),
    ("it's", '"it\'s"'),
    (";", '";"'),
    ("tab\there", '"tab\\there"'),
    ("bell\a", '"bell\\x07"'),
    ("ünïcödé", "ünïcödé"),
])
def test_render_word(word, rendered):
    assert render_exec(["/bin/x", word]) == f"/bin/x {rendered}"
    assert split_exec(render_exec(["/bin/x", word])) == ("", ["/bin/x", word])


@pytest.mark.parametrize("argv,message", [
    (["/bin/x", "a\nb"], "newline in argument 1: a unit-file line cannot hold one"),
    (["/bin/x", "a", "b\rc"], "carriage return in argument 2"),
    (["/bin/x", "\0"], "NUL in argument 1"),
    (["/bin/x", "\udcff"], "argument 1 is not valid UTF-8"),
    (["-bin"], "starts with '-': systemd would read it as a prefix"),
    (["@x"], "starts with '@'"),
    (["/bin/a$b"], "holds '\\$'"),
    (["/bin/a b\"c"], "systemd refuses it"),
    (["relative/path"], "neither an absolute path"),
    ([], "no command"),
])
def test_render_refuses(argv, message):
    with pytest.raises(UnitSyntaxError, match=message):
        render_exec(argv)


def test_render_prefix():
    assert render_exec(["/opt/my dir/python", "x"], prefix="-") == '-"/opt/my dir/python" x'
    assert split_exec('-"/opt/my dir/python" x') == ("-", ["/opt/my dir/python", "x"])
    assert render_exec(["/bin/x", "$a"], prefix=":") == ":/bin/x $a"
    with pytest.raises(UnitSyntaxError, match="not an ExecStart= prefix"):
        render_exec(["/bin/x"], prefix="--")
    with pytest.raises(UnitSyntaxError, match="needs the program and its argv"):
        render_exec(["/bin/x"], prefix="@")


REFUSED = "\0\n\r"
SPECIALS = list(" \t\"'\\%$;`{}()#@-:+!*?~&|<>=\a\x1b\x7fé€😀\u2028\u00a0")
words = st.text(st.one_of(st.sampled_from(SPECIALS), st.characters(blacklist_characters=REFUSED,
                                                                  blacklist_categories=("Cs",))))
programs = st.one_of(
    st.sampled_from(["/usr/bin/python3", "python3", "/opt/my dir/bin/python", "/opt/50%/python"]),
    st.text(st.characters(blacklist_characters="\"'\\/$\x7f", blacklist_categories=("Cs", "Cc")),
            min_size=1).map(lambda s: "/" + s))
prefixes = st.sampled_from(["", "-", "@", ":", "+", "!", "!!", "-@", ":-", "@-:+"])


@given(programs, st.lists(words, max_size=6), prefixes)
@example("/bin/x", ["-", "@", ";", "\\;", "%%", "$$", "\"'\"", "\\", "a\\"], "")
def test_split_inverts_render(program, args, prefix):
    argv = [program, *args]
    if "@" in prefix and not args:
        argv.append("name")
    assert split_exec(render_exec(argv, prefix=prefix)) == (prefix, argv)


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_render_refuses_exactly_the_unwritable(args):
    argv = ["/bin/x", *args]
    unwritable = any(c in REFUSED or "\ud800" <= c <= "\udfff" for a in args for c in a)
    try:
        text = render_exec(argv)
    except UnitSyntaxError:
        assert unwritable
    else:
        assert not unwritable and "\n" not in text and "\r" not in text
        assert split_exec(text) == ("", argv)


# --- effective_exec_start ----------------------------------------------------------------------

UNIT = """# /etc/systemd/system/sglang.service
[Unit]
Description=SGLang
ExecStart=/bin/not-in-service-section

[Service]
Environment="HF_HOME=/data/hf" CUDA_VISIBLE_DEVICES=0,1
ExecStart=/usr/bin/python3 -m sglang.launch_server \\
# a comment inside the continuation is skipped
  ; and so is this one
    --model-path Qwen/Qwen3-8B \\
    --tp 2
Restart=on-failure
"""


def cat(*files: tuple[str, str]) -> str:
    return UNIT + "".join(f"\n# {path}\n{text}" for path, text in files)


def test_unit_file_with_continuations_and_comments():
    e = effective_exec_start(UNIT)
    assert e == ExecStart(argv=["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path",
                                "Qwen/Qwen3-8B", "--tp", "2"],
                          prefix="", source="/etc/systemd/system/sglang.service",
                          environment={"HF_HOME": "/data/hf", "CUDA_VISIBLE_DEVICES": "0,1"})


def test_dropin_resets_and_replaces():
    e = effective_exec_start(cat(
        ("/etc/systemd/system/sglang.service.d/10-env.conf", "[Service]\nEnvironment=HF_HOME=/x A=1\n"),
        ("/etc/systemd/system/sglang.service.d/50-mtptui-spec.conf",
         "[Service]\nExecStart=\nExecStart=-/usr/bin/python3 -m sglang.launch_server --tp 4\n")))
    assert (e.prefix, e.argv) == ("-", ["/usr/bin/python3", "-m", "sglang.launch_server", "--tp", "4"])
    assert e.source == "/etc/systemd/system/sglang.service.d/50-mtptui-spec.conf"
    assert e.environment == {"HF_HOME": "/x", "CUDA_VISIBLE_DEVICES": "0,1", "A": "1"}
    base = effective_exec_start(cat(
        ("/etc/systemd/system/sglang.service.d/50-mtptui-spec.conf",
         "[Service]\nExecStart=\nExecStart=/bin/other\n")), ignore_dropin=DROPIN_NAME)
    assert base.argv[-2:] == ["--tp", "2"] and base.source.endswith("sglang.service")


def test_environment_rules():
    e = effective_exec_start(cat(("/run/systemd/system/sglang.service.d/x.conf",
                                  "[Service]\nEnvironment=\nEnvironment=A=1 \"B=2 3\" C=$X D=%% "
                                  "E=$$F \"G=a\\\"b\\\\c\" 'H=x y' I=\\x41 NOEQ J= K=z 9X=no\n"
                                  "Environment=A=overridden\n")))
    assert e.environment == {"A": "overridden", "B": "2 3", "C": "$X", "D": "%", "E": "$$F",
                             "G": 'a"b\\c', "H": "x y", "I": "A", "J": "", "K": "z"}


def test_continuation_edges_as_systemd_252_reads_them():
    text = ("# /etc/systemd/system/t.service\n[Service]\nType=oneshot\n"
            "# comment \\\nExecStart=/bin/echo a \\\n\n   b \\\n\t\n  c\n"  # an empty line ends it
            "ExecStart=/bin/echo u \\\n#c \\\n v\n"  # a comment inside does not, even with a \
            "ExecStart=/bin/echo odd \\\\\\\n  next\n"
            "ExecStart=/bin/echo tail\\\\\n")
    with pytest.raises(UnitSyntaxError, match="4 ExecStart= commands"):
        effective_exec_start(text)
    lines = text.split("\n")
    argvs = []  # each ExecStart= alone (the others renamed)
    for start in ("ExecStart=/bin/echo a", "ExecStart=/bin/echo u", "ExecStart=/bin/echo odd",
                  "ExecStart=/bin/echo tail"):
        one = "\n".join(x if not x.startswith("ExecStart=") or x.startswith(start) else "X=" for x in lines)
        argvs.append(effective_exec_start(one).argv)
    assert argvs == [["/bin/echo", "a"], ["/bin/echo", "u", "v"], ["/bin/echo", "odd", "\\", "next"],
                     ["/bin/echo", "tail\\"]]


@pytest.mark.parametrize("text,message", [
    ("", "no ExecStart= in \\[Service\\] of the unit"),
    ("# /etc/systemd/system/x.service\n[Service]\nType=simple\n", "no ExecStart= in \\[Service\\]"),
    ("# /etc/systemd/system/x.service\n[Service]\nExecStart=/bin/a\nExecStart=/bin/b\n",
     "2 ExecStart= commands \\(from /etc/systemd/system/x.service\\)"),
    ("# /etc/systemd/system/x.service\n[Service]\nExecStart=/bin/a\nExecStart=\n", "no ExecStart="),
    ("# /etc/systemd/system/x.service\n[Service\nExecStart=/bin/a\n", "invalid section header"),
])
def test_effective_exec_start_errors(text, message):
    with pytest.raises(UnitSyntaxError, match=message):
        effective_exec_start(text)


def test_one_unit_text_without_cat_headers():
    e = effective_exec_start("[Service]\nExecStart=/bin/x\n# drop-in\n[Service]\nExecStart=\nExecStart=/bin/y a\n")
    assert (e.argv, e.source) == (["/bin/y", "a"], "")


def test_warnings_before_the_first_file_and_files_without_final_newline():
    text = ("# Warning: x.service changed on disk, the version systemd has loaded is outdated.\n"
            "# This output shows the current version of the unit's original fragment and drop-in files.\n"
            "# /etc/systemd/system/x.service\n[Service]\nExecStart=/bin/a\n"
            "# /etc/systemd/system/x.service.d/over.conf\n[Service]\nExecStart=\nExecStart=/bin/b")
    e = effective_exec_start(text)
    assert e.argv == ["/bin/b"] and e.source == "/etc/systemd/system/x.service.d/over.conf"


# --- the drop-in -------------------------------------------------------------------------------

def test_dropin_text():
    text = render_dropin(["/usr/bin/python3", "-m", "sglang.launch_server", "--served-model-name", "q 8b"],
                         {"SGLANG_X": "50% $HOME \"q\"", "B": ""}, profile="mtp3", written_by="ops@laptop")
    assert text == (
        "# Written by mtptui for ops@laptop: speculation profile mtp3.\n"
        "# mtptui replaces this file on the next change and removes it on revert.\n"
        "[Service]\n"
        "ExecStart=\n"
        'ExecStart=/usr/bin/python3 -m sglang.launch_server --served-model-name "q 8b"\n'
        'Environment="SGLANG_X=50%% $HOME \\"q\\""\n'
        "Environment=B=\n")


def test_dropin_header_cannot_break_out_of_its_comment():
    text = render_dropin(["/bin/x"], {}, profile="evil\n[Service]\nExecStart=/bin/pwn \\",
                         written_by="me\\\n")
    assert text.count("\n") == 5
    assert effective_exec_start(f"# /etc/systemd/system/u.service.d/{DROPIN_NAME}\n{text}").argv == ["/bin/x"]


@pytest.mark.parametrize("env,message", [
    ({"1X": "a"}, "not an environment variable name"),
    ({"A-B": "a"}, "not an environment variable name"),
    ({"A": "x\ny"}, "newline in the value of A"),
])
def test_dropin_refuses(env, message):
    with pytest.raises(UnitSyntaxError, match=message):
        render_dropin(["/bin/x"], env, profile="p", written_by="w")


env_values = st.text(st.one_of(st.sampled_from(SPECIALS), st.characters(blacklist_characters=REFUSED,
                                                                       blacklist_categories=("Cs",))))


@given(programs, st.lists(words, max_size=5), prefixes,
       st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), env_values, max_size=4),
       st.text(), st.text())
def test_dropin_round_trips_through_effective_exec_start(program, args, prefix, env, profile, who):
    argv = [program, *args] + (["name"] if "@" in prefix and not args else [])
    text = render_dropin(argv, env, profile=profile, written_by=who, prefix=prefix)
    path = f"/etc/systemd/system/sglang.service.d/{DROPIN_NAME}"
    e = effective_exec_start(f"{UNIT}\n# {path}\n{text}")
    assert (e.prefix, e.argv, e.source) == (prefix, argv, path)
    assert e.environment == {"HF_HOME": "/data/hf", "CUDA_VISIBLE_DEVICES": "0,1", **env}
    assert effective_exec_start(f"{UNIT}\n# {path}\n{text}", ignore_dropin=DROPIN_NAME).argv[-1] == "2"


def test_dropin_dir_and_service_name():
    assert dropin_dir("sglang") == "/etc/systemd/system/sglang.service.d"
    assert dropin_dir("sglang-qwen.service") == "/etc/systemd/system/sglang-qwen.service.d"
    assert dropin_dir("sglang@gpu0") == "/etc/systemd/system/sglang@gpu0.service.d"
    assert service_name("a.b") == "a.b.service"
    for bad in ("../etc", "a/b", "", ".hidden", "a b", "x;y"):
        with pytest.raises(UnitSyntaxError, match="not a systemd unit name"):
            service_name(bad)
    with pytest.raises(UnitSyntaxError, match="socket unit"):
        dropin_dir("sglang.socket")


# --- what systemd loaded (`systemctl show` output captured from systemd 252) -------------------

SHOW_ONE = ("ExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -c import sys,json; "
            "print(json.dumps(sys.argv[1:])) ab cd x y $$HOME $FOO % t1.service \"q ; ignore_errors=z\" ; "
            "ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n")
SHOW_TWO = ("{ path=/usr/bin/python3 ; argv[]=myname -c print(1) ; ignore_errors=no ; start_time=[n/a] ; "
            "stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n"
            "{ path=/bin/true ; argv[]=/bin/true x\\;y ; ignore_errors=no ; start_time=[n/a] ; "
            "stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n")


def test_show_exec_start():
    assert show_exec_start(SHOW_TWO) == [["myname", "-c", "print(1)"], ["/bin/true", "x\\;y"]]
    assert show_exec_start(SHOW_ONE)[0][-3:] == ['"q', ";", 'ignore_errors=z"']
    assert show_exec_start("ExecStart=\n") == []
    ex = ("ExecStartEx={ path=/bin/x ; argv[]=/bin/x a b ; flags=ignore-failure ; start_time=[n/a] ; "
          "stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }")
    assert show_exec_start(ex) == [["/bin/x", "a", "b"]]


def test_agrees():
    _, argv = split_exec(f"{PY} 'ab cd' \"x y\" $$HOME $FOO %% %n '\"q ; ignore_errors=z\"'")
    assert agrees(argv, SHOW_ONE)
    assert not agrees(argv[:-1], SHOW_ONE)
    assert not agrees(argv, SHOW_TWO)  # two commands: never the one argv
    assert agrees(["/usr/bin/python3", "myname", "-c", "print(1)"], SHOW_TWO.split("\n")[0], prefix="@")
    assert not agrees(["/usr/bin/python3", "-c", "print(1)"], SHOW_TWO.split("\n")[0])
    show = ("ExecStart={ path=/bin/x ; argv[]=/bin/x $a 50% ; ignore_errors=no ; start_time=[n/a] ; "
            "stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }")
    assert agrees(["/bin/x", "$a", "50%"], show, prefix=":")
    assert not agrees(["/bin/x", "$a", "50%"], show)  # without ":" systemd would hold $$a
