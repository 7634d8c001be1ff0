#!/usr/bin/env bash
# Draw the terminal UI's golden views (internal/tui/testdata/*.golden) as
# the docs' SVG pictures (docs/images/*.svg). Run after a golden changes;
# the docs' tests fail while a picture is not the current golden's.
set -euo pipefail
cd "$(dirname "$0")/.."
go run scripts/goldensvg.go "$@"
