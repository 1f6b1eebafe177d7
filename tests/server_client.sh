#!/bin/sh
# An official Python client against a running swa-server: sh tests/server_client.sh CLIENT PORT,
# where CLIENT is openai or ollama and tests/server_CLIENT.py holds its checks. It makes a venv in
# build/venv-clients (once) and installs the client from PyPI into it. Exit 77, with the reason,
# when that cannot be done here (no python3, no venv module, no PyPI): the caller
# (tests/test_server.c) reports the test as skipped.
set -u
CLIENT=$1 PORT=$2
VENV=${SWA_CLIENTS_VENV:-build/venv-clients}
if ! command -v python3 >/dev/null 2>&1; then
    echo "server_$CLIENT: skipped: python3 is not installed"; exit 77
fi
if [ ! -x "$VENV/bin/python" ]; then
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
        rm -rf "$VENV"
        echo "server_$CLIENT: skipped: python3 -m venv failed (apt-get install python3-venv)"; exit 77
    fi
fi
if ! "$VENV/bin/python" -c "import $CLIENT" 2>/dev/null; then
    if ! "$VENV/bin/python" -m pip install -q "$CLIENT" >/dev/null 2>&1; then
        echo "server_$CLIENT: skipped: pip install $CLIENT failed (is PyPI reachable?)"; exit 77
    fi
fi
exec "$VENV/bin/python" "tests/server_$CLIENT.py" "$PORT"
