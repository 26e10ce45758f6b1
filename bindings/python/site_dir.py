"""Prints where to install a package under an install prefix, relative to
it, so that this Python finds it: a site-packages directory of its own under
that prefix when it has one (Debian: /usr/local/lib/python3.11/dist-packages),
else lib/pythonX.Y/site-packages (then set PYTHONPATH to it)."""

import os
import site
import sys

prefix = os.path.abspath(sys.argv[1])
for directory in site.getsitepackages():
    if directory.startswith(prefix + os.sep):
        print(os.path.relpath(directory, prefix))
        break
else:
    print(os.path.join("lib", "python%d.%d" % sys.version_info[:2],
                       "site-packages"))
