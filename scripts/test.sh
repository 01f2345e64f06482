#!/usr/bin/env bash
# The one test command: venv, install (with the test extras), the browser the report test drives
# (Debian's chromium; Playwright is used only for its Python API and never downloads a browser), pytest.
# Extra arguments go to pytest (default: -n auto -q).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" update -q
  DEBIAN_FRONTEND=noninteractive "${apt_get[@]}" install -y -q chromium
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
if [ "$#" -eq 0 ]; then set -- -n auto -q; fi
exec .venv/bin/python -m pytest "$@"
