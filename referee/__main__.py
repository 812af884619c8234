"""``python -m referee RED BLUE``: the course referee's habit, run as ``referee match``.

Only ``python -m referee`` runs this module; ``import referee`` and ``import referee.game``
(what course bots do) never do, so they stay free of the command machinery.
"""

import sys

from referee.commands._course import course_main

if __name__ == "__main__":  # a tool that imports every module must not start a match
    sys.exit(course_main(sys.argv[1:]))
