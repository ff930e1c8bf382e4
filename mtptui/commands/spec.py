"""`mtptui spec HOST... [PROFILE]`: show a server's speculation settings, or change them safely.

A host runs its server as a systemd unit, a `docker run` container or a compose service. Without
PROFILE: the settings as its command has them and as the server last reported them. With
PROFILE: plan, print the preview, ask (unless --yes), then lock, write (a systemd drop-in; a new
container, the old one kept stopped until the new one is verified; mtptui's compose override
beside the user's files, which stay as they are), restart (`up -d SERVICE` for compose), wait for
ready and verify, rolling back without help when anything fails. Several hosts go
one at a time and stop at the first failure. Every action is in the audit log (`mtptui audit`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from mtptui.commands.live import add_host_args, container_target, quiet_asyncssh
from mtptui.config import Config, ConfigError, load_config, ranges, resolve_hosts
from mtptui.errors import UsageError
from mtptui.printable import printable

RED, RESET = "\x1b[31m", "\x1b[0m"
EPILOG = """\
PROFILE: off, mtp1, mtp2, mtp3 (NEXTN with topk 1), or a [profiles.NAME] of the config.
The last argument is taken as PROFILE when it names one (and no config host).

ctrl-c (or SIGTERM, SIGHUP) during an action stops it and puts the host back as it was, verified,
within the bound the preview states; a second ctrl-c says what stopping at once would leave and
asks (without a terminal it leaves it so at once).

exit codes: 0 applied and verified (or settings printed); 1 could not run (nothing changed);
2 bad arguments or an invalid profile; 3 failed and rolled back, old state verified;
4 rollback failed, another console took the lock mid-action, or left mid-action at a second
ctrl-c (the host needs a person: `--recover`); 5 settings printed of a unit that is failed or in a restart loop;
130 interrupted (ctrl-c, SIGTERM, SIGHUP), the host put back as it was, verified
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui spec", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    p.add_argument("--local", action="store_true",
                   help="this machine's unit, container or compose service (no SSH); needs --unit, --container, or --compose and --service")
    p.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    p.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    p.add_argument("--revert", action="store_true", help="remove mtptui's drop-in (back to the unit's own ExecStart)")
    p.add_argument("--restart", action="store_true", help="restart as is, then verify")
    p.add_argument("--recover", action="store_true",
                   help="put back the last settings an action verified (the audit log's drop-in), then verify")
    p.add_argument("--timeout", type=ranges.WAIT_TIMEOUT, metavar="S", help="wait this long for ready (default: [control] wait_timeout, 900)")
    p.add_argument("--break-lock", action="store_true", help="take the host's lock from a console you know is gone (a lock whose owner is provably gone is taken without it)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    config = load_config(args.config)
    from mtptui.control.profiles import ProfileError, resolve

    names = list(args.hosts)
    profile = None
    if names and not (args.revert or args.restart or args.recover) and config.host(names[-1]) is None:
        try:
            profile = resolve(names[-1], config.profiles)
            names = names[:-1]
        except ProfileError as e:
            if len(names) > 1:
                raise UsageError(str(e)) from None
    if sum((args.revert, args.restart, args.recover)) > 1:
        raise UsageError("--revert, --restart and --recover exclude each other")
    controls = build_controls(args, names, config, args.timeout)
    quiet_asyncssh()
    return asyncio.run(run(args, controls, profile))


def build_controls(args, names: list[str], config: Config, wait_timeout: float | None = None):
    """One HostControl per host named (config names or user@host[:port]), or this machine's unit
    with --local; args has the options of add_host_args and --local. Raises ConfigError."""
    from mtptui.control.session import HostControl, control_for, settings_from
    from mtptui.control.target import SystemdTarget

    settings = settings_from(config)
    if wait_timeout:
        settings.wait_timeout = wait_timeout
    if args.local:
        from mtptui.commands.local import local_container
        from mtptui.transport.local import LocalRunner

        if names:
            raise ConfigError("--local takes no HOST")
        h = local_container(args, config)
        if h is not None:
            return [_target(lambda: control_for(h, config, settings))]
        if not args.unit:
            raise ConfigError("--local needs --unit, --container, or --compose and --service")
        target = _target(lambda: SystemdTarget(LocalRunner(), args.unit, sudo=bool(args.sudo), host="local"))
        return [HostControl(target, host="local", settings=settings)]
    hosts = resolve_hosts(names, config, unit=args.unit, sudo=args.sudo, identity=args.identity,
                          target=container_target(args))
    return [_target(lambda h=h: control_for(h, config, settings)) for h in hosts]


def _target(make):
    from mtptui.control.errors import ControlError

    try:
        return make()
    except ControlError as e:
        raise ConfigError(str(e)) from None


async def run(args, controls, profile) -> int:
    results: list[dict] = []
    code = 0
    try:
        for hc in controls:
            out = sys.stderr if args.json else sys.stdout
            # a ControlError ends the command here (cli prints it; a BadProfile exits 2)
            cut_off = await hc.interrupted()  # an action here that a killed console left, or left unverified
            if cut_off:
                print(printable(cut_off, newlines=True), file=out, flush=True)
            if profile is None and not (args.revert or args.restart or args.recover):
                shown = await _show_host(hc, args, cut_off, results)
                code = code or shown
                continue
            try:
                acted = await _act_on_host(hc, args, profile, cut_off, results, out)
            except _NotApplied as e:
                return e.code
            if acted != 0:
                code = acted
                break
    finally:
        for hc in controls:
            await hc.close()
    if args.json:
        print(json.dumps({"hosts": results}, indent=2))
    return code


class _NotApplied(Exception):
    """The operator said no: the command ends here, with this code and no JSON."""

    def __init__(self, code: int) -> None:
        self.code = code


async def _show_host(hc, args, cut_off, results: list[dict]) -> int:
    """No profile: the host's settings shown; UNIT_FAILED where its server is failed or looping."""
    from mtptui.control.restart import UNIT_FAILED

    info = await show(hc, args.json)
    results.append({**info, "interrupted": cut_off})
    if info["active"] == "failed":
        print(f"mtptui spec: {hc.host}: {hc.unit} is failed: its server is not running"
              + ("" if cut_off else " (`systemctl status` tells why)"), file=sys.stderr)
        return UNIT_FAILED
    if (looping := await restart_loop(hc)) is not None:
        results[-1]["restarts"] = looping
        print(f"mtptui spec: {hc.host}: {hc.unit} is in a restart loop: its server failed and systemd "
              f"restarts it ({looping} restarts so far; `systemctl status` tells why)", file=sys.stderr)
        return UNIT_FAILED
    return 0


async def _act_on_host(hc, args, profile, cut_off, results: list[dict], out) -> int:
    """The plan previewed, confirmed and carried out on one host: its exit code (0: go on to the next)."""
    from mtptui.control.plan import APPLY, RESTART, REVERT
    from mtptui.control.restart import ROLLBACK_FAILED

    if args.recover:
        plan, said = await hc.recover_plan()
        print(printable(said), file=out)
    else:
        plan = await hc.plan(REVERT if args.revert else RESTART if args.restart else APPLY, profile)
    print(printable("\n".join(plan.preview_lines()), newlines=True), file=out)
    bound = hc.settings.put_back_s()
    print(f"ctrl-c:   stops and puts {hc.host} back as it is now, verified, within {-(-bound // 60):.0f} min "
          "at most (the wait limit, verification, retries); twice: asks to leave it as it stands", file=out)
    if args.dry_run:
        results.append({"host": hc.host, "unit": hc.unit, "dry_run": True, "plan": plan_json(plan)})
        return 0
    if not args.yes and not confirm(plan):
        print("mtptui spec: not applied", file=sys.stderr)
        raise _NotApplied(1 if sys.stdin.isatty() else 2)
    outcome = await execute(hc, plan, args.break_lock)
    if outcome is None:  # left mid-action at the operator's word: said by Interrupts
        results.append({"host": hc.host, "unit": hc.unit, "interrupted": cut_off, "result": "left",
                        "exit_code": ROLLBACK_FAILED})
        return ROLLBACK_FAILED
    said_outcome(hc, outcome, out)
    results.append({"host": hc.host, "unit": hc.unit, "interrupted": cut_off, "result": outcome.result,
                    "exit_code": outcome.exit_code, "message": outcome.message,
                    "phases": [p.to_json() for p in outcome.phases]})
    return outcome.exit_code


async def execute(hc, plan, break_lock: bool):
    """hc.execute with ctrl-c, SIGTERM and SIGHUP putting the host back (commands/interrupts.py);
    None when a second one left it where it stood."""
    from mtptui.commands.interrupts import Interrupts, say

    bound = -(-hc.settings.put_back_s() // 60)

    def stop(why: str) -> None:
        if not hc.interrupt(why):
            return
        if hc.finishing:
            say(f"\nmtptui spec: {why}: {hc.host}'s new settings are verified: kept; removing what was kept for "
                "a rollback, then done; ctrl-c again to leave it as it stands")
        else:
            say(f"\nmtptui spec: {why}: stopping; putting {hc.host} back as it was, verified (within {bound:.0f} min "
                "at most); ctrl-c again to leave it as it stands")

    task = asyncio.current_task()
    assert task is not None  # run() is asyncio.run's task

    def leave() -> None:
        hc.abandon()
        task.cancel()  # also before the action began or after it ended

    interrupts = Interrupts("spec", stop=stop, leaving=hc.leaving, leave=leave)
    try:
        with interrupts:
            return await hc.execute(plan, progress, break_lock=break_lock)
    except asyncio.CancelledError:
        if not interrupts.left:
            raise
        while task.uncancel():
            pass
        return None


async def restart_loop(hc) -> int | None:
    """How often systemd has restarted the unit, when it is between two of its automatic restarts
    now (SubState auto-restart: its server failed again and is down): a server that never stays up
    is as down as a failed unit. None otherwise, or when the host does not say."""
    from mtptui.control.errors import ControlError
    from mtptui.transport.errors import TransportError

    status = getattr(hc.target, "status", None)  # the demo's child has none
    if status is None:
        return None
    try:
        st = await status()
    except (ControlError, TransportError, OSError):
        return None
    if st.get("SubState") != "auto-restart":
        return None
    n = st.get("NRestarts", "")
    return int(n) if n.isdigit() else 0


def said_outcome(hc, outcome, out) -> None:
    from mtptui.control.restart import RESULT_NOT_RUN

    try:
        if outcome.result == RESULT_NOT_RUN:
            print(f"mtptui spec: {printable(outcome.message)}", file=sys.stderr)
        else:
            red = outcome.exit_code != 0 and out.isatty()
            print(f"{RED if red else ''}{hc.host}: {outcome.result}: {printable(outcome.message)}{RESET if red else ''}",
                  file=out, flush=True)
    except OSError:
        pass  # the terminal hung up (SIGHUP): the audit log has it


async def show(hc, as_json: bool) -> dict:
    st = await hc.state()
    from mtptui.control import launch

    try:
        engine = launch.find_launch(st.argv).engine
        flags = launch.spec_flags(st.argv)
    except launch.LaunchError as e:
        engine, flags = None, {"error": str(e)}
    reported = await hc.last_server_args()
    version, version_from = await hc.server_version(st.argv)
    info = {"host": hc.host, "unit": hc.unit, "engine": engine, "exec_start": flags,
            "server_args": reported, "mtptui_dropin": st.dropin is not None, "active": st.active,
            "last_start_s": st.last_start_s, "server_version": version, "version_from": version_from}
    if not as_json:
        # the unit's state, its ExecStart and its journal's settings line are the host's words
        print(printable(f"{hc.host} · {hc.unit} ({st.active or 'unknown'}){' · mtptui drop-in' if st.dropin else ''}"))
        print(printable(f"  version:     {version or 'unknown'} ({'from ' if version else ''}{version_from})"))
        line = "non-default args" if engine == "vllm" else "server_args"
        container = getattr(hc.target, "sel", None) is not None  # a container's or a service's command
        print(f"  {'command:' if container else 'ExecStart:':<12} {printable(describe(flags, engine))}")
        print(f"  {line + ':':<12} {printable(describe(reported, engine)) if reported else 'not in the log' if container else 'not in the journal'}")
    return info


# vLLM's words for the settings mtptui holds under SGLang's names (its speculative_config keys)
_VLLM_WORDS = {"num_steps": "num_speculative_tokens", "draft_model_path": "model"}


def describe(s: dict | None, engine: str | None = None) -> str:
    """The speculation settings in the engine's own words: SGLang's `EAGLE num_steps=3 topk=1`,
    vLLM's `ngram num_speculative_tokens=3`."""
    if not s:
        return "speculation off"
    if s.get("error"):
        return s["error"]
    if not s.get("algorithm"):
        return "speculation off"
    if engine == "vllm":
        from mtptui.control.profiles import VLLM_METHODS

        alg = str(s["algorithm"])  # a method as the line gave it (ngram), or mtptui's name (NGRAM)
        method = alg if alg.islower() else VLLM_METHODS.get(alg, alg.lower())
        keys = ("num_steps", "draft_model_path")
        return " ".join([method] + [f"{_VLLM_WORDS[k]}={s[k]}" for k in keys if s.get(k) is not None])
    parts = [s["algorithm"]] + [f"{k}={s[k]}" for k in ("num_steps", "topk", "num_draft_tokens") if s.get(k) is not None]
    return " ".join(parts)


def plan_json(plan) -> dict:
    return {"action": plan.action, "profile": plan.profile.name if plan.profile else None,
            "commands": plan.commands, "old_argv": plan.old_argv, "new_argv": plan.new_argv,
            "new_dropin": plan.new_dropin, "last_start_s": plan.last_start_s}


def confirm(plan) -> bool:
    if not sys.stdin.isatty():
        print("mtptui spec: stdin is not a terminal: add --yes to apply without asking", file=sys.stderr)
        return False
    try:
        if plan.prod:
            typed = input(f"{plan.host} is tagged prod: type its name to apply: ")
            return typed.strip() == plan.host
        return input("apply? [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return False


def progress(ev) -> None:
    if ev.state == "progress" or ev.state == "fail" or ev.phase.endswith(("wait", "verify")) or ev.state == "start":
        from mtptui.commands.interrupts import say

        mins, secs = divmod(int(ev.elapsed_s), 60)
        # said through `say`: a terminal that hung up never stops the action (or its put-back)
        say(f"  [{mins}:{secs:02d}] {ev.phase} {ev.state}{': ' + printable(ev.detail) if ev.detail else ''}")
