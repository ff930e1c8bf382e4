from mtptui.cli import run

run()
