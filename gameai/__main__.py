import sys

from gameai.cli import main

sys.exit(main())
