"""Acting on a server: speculation profiles, systemd unit syntax, restart with verify and rollback.

Headless (never imports Textual). Pure where it can be:
- ``profiles``: the speculation profiles (built-ins and ``[profiles.NAME]``) and SGLang's own rules
  for them, checked before anything on a host is touched.
- ``systemd``: systemd's unit-file syntax: the effective ExecStart from ``systemctl cat``, argv
  split and rendered with systemd's quoting and escaping, the drop-in text.
- ``launch``: where the SGLang or vLLM launch command sits in an argv, and a profile applied to it.
- ``plan``: what an action will do (host, unit, commands, the flag diff, the expected downtime).
- ``verify``: the server's own words after a restart, judged against what was asked for.
- ``target``: a systemd unit over a runner (SSH or this machine), or the demo's simulator child.
- ``restart``: the state machine: lock, write, reload, restart, wait, verify, roll back.
- ``audit``: every action as a JSON line in the user's state directory.
"""
