import sys

from mtptui.cli import main

sys.exit(main())
