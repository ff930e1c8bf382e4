"""`mtptui audit`: every action mtptui took on a host (the audit log, newest last)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from mtptui.config import ranges


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="mtptui audit", description=__doc__)
    p.add_argument("--json", action="store_true", help="one JSON object per action")
    p.add_argument("--host", help="only this host")
    p.add_argument("-n", "--last", type=ranges.LAST, metavar="N", help="only the last N actions")
    p.add_argument("--phases", action="store_true", help="also each phase with its time")
    args = p.parse_args(argv)
    from mtptui.control.audit import audit_path, read_audit
    from mtptui.printable import printable_values

    read = read_audit()
    entries = [e for e in read if not args.host or e.get("host") == args.host]
    if args.last:
        entries = entries[-args.last:]
    if not args.json:  # a message quotes a server's journal line: nothing of it reaches the terminal raw
        entries = [printable_values(e) for e in entries]
    show(entries, args, audit_path())
    if read.bad_note():  # said last, where it is seen after the entries
        print(f"mtptui audit: {read.bad_note()} in {audit_path()}", file=sys.stderr)
    return 0


def show(entries: list[dict], args, path) -> None:
    from mtptui.printable import printable_json

    if not entries:  # said on stderr with --json too: no line is not no word (hostile tier)
        print(f"no actions yet (the audit log is {path})", file=sys.stderr)
        return
    if args.json:
        for e in entries:
            print(printable_json(json.dumps(e, ensure_ascii=False)))
        return
    for e in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.get("time") or 0))
        what = e.get("profile") or e.get("action")
        # the machine a host name meant (one log serves every job of the account, and their configs)
        host = e.get("host")
        where = e.get("where")
        host = f"{host} ({where})" if where and where != host else host
        print(f"{when}  {e.get('user', '?')}  {host}  {e.get('unit')}  {what}  "
              f"{e.get('result')}  {e.get('message') or ''}")
        if args.phases:
            for ph in e.get("phases") or []:
                print(f"    {ph.get('elapsed_s') or 0:8.2f} s  {ph.get('phase')} {ph.get('state')}  "
                      f"{ph.get('detail') or ''}")
