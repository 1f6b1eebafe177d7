#!/bin/sh
# The official openai Python client against a running swa-server: sh tests/server_openai.sh PORT.
# It makes a venv in build/venv-openai (once) and installs openai from PyPI into it. Exit 77, with
# the reason, when that cannot be done here (no python3, no venv module, no PyPI): the caller
# (tests/test_server.c) reports the test as skipped.
set -u
PORT=$1
VENV=${SWA_OPENAI_VENV:-build/venv-openai}
if ! command -v python3 >/dev/null 2>&1; then
    echo "server_openai: skipped: python3 is not installed"; exit 77
fi
if [ ! -x "$VENV/bin/python" ]; then
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
        rm -rf "$VENV"
        echo "server_openai: skipped: python3 -m venv failed (apt-get install python3-venv)"; exit 77
    fi
fi
if ! "$VENV/bin/python" -c 'import openai' 2>/dev/null; then
    if ! "$VENV/bin/python" -m pip install -q openai >/dev/null 2>&1; then
        echo "server_openai: skipped: pip install openai failed (is PyPI reachable?)"; exit 77
    fi
fi
exec "$VENV/bin/python" tests/server_openai.py "$PORT"
