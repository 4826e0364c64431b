"""``python -m wikiorigin.cli``: the ``wikiorigin`` command."""

import sys

from . import main

sys.exit(main())
