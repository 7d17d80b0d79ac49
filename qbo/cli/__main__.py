import sys

from qbo.files import Interrupted, interruptible

try:
    with interruptible(final=True):  # from the start (an interrupt while the CLI loads prints one line too) to the end
        from qbo.cli.app import main

        main()
except Interrupted as exc:
    sys.stderr.write(exc.note + "\n")
    sys.exit(exc.exit_code)
