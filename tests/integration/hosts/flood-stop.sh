#!/bin/sh
# ExecStop of a unit whose stop floods the journal past the unit's rate limit, says one line more
# after the limit's interval (journald then writes its own `Suppressed N messages from UNIT` line,
# stamped with journald's run), and fails: systemd says `Failed with result 'exit-code'` about the
# run being stopped.
i=0
while [ "$i" -lt 5000 ]; do echo "stopping: flushing $i"; i=$((i + 1)); done
sleep 2.5
echo "stopping: done"
exit 1
