"""`python3 -m netlab ...` is the lab's command line (netlab.lab): up, down, plan, exec, status, ping."""

import sys

from netlab.lab import main

sys.exit(main())
