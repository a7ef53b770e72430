"""``python -m rnnbench``: the ``rnnbench`` command (rnnbench.commands)."""
import sys

from rnnbench.commands import main

sys.exit(main())
