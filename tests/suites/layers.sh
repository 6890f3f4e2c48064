#!/bin/sh
# layers.sh - the include-dependency check (tests/check_layers.sh) as a make-test suite.
exec sh "$(dirname "$0")/../check_layers.sh"
