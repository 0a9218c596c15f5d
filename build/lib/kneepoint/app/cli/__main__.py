"""`python -m kneepoint.app.cli`: the kneepoint command."""

import sys

from kneepoint.app.cli.main import main

sys.exit(main())
