#!/bin/sh
# citations.sh - every "docs/....md §N" / "rm.md §N" / "STYLE N.M" / "ARCHITECTURE §N" citation in
# the tree resolves to a file and a section heading inside the repository (tests/check_citations.sh).
exec sh "$(dirname "$0")/../check_citations.sh"
