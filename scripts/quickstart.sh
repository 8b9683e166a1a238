#!/usr/bin/env bash
# The README's first command: install everything on a fresh machine, then start Baton on the
# embedded default (the local engine on 127.0.0.1:8787 with its state under ./data).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh
npm ci --no-audit --no-fund
NEXT_TELEMETRY_DISABLED=1 npm run build
exec npm start
