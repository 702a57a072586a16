#!/usr/bin/env python3
"""Prints the code of one marked snippet (<!-- snippet:NAME --> ... <!-- /snippet -->) of a README.

    python3 tests/dist/snippet.py FILE NAME
"""

import re
import sys

path, name = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
start = f"<!-- snippet:{name} -->"
if text.count(start) != 1:
    sys.exit(f"{path}: expected exactly one {start}")
body = text.split(start, 1)[1].split("<!-- /snippet -->", 1)[0]
m = re.fullmatch(r"\s*```\w+\n(.*?)```\s*", body, re.S)
if not m:
    sys.exit(f"{path}: snippet {name} is not one fenced block")
sys.stdout.write(m.group(1))
