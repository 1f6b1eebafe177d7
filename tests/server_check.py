"""The checks' bookkeeping shared by tests/server_openai.py and tests/server_ollama.py: each check
runs, prints one line 'ok   NAME' or 'FAIL NAME: why', and finish() prints the tally
'CLIENT: N passed, N failed' and exits 1 when any failed."""
import sys

passed = failed = 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print(f"ok   {name}")
    except Exception as e:  # a failed check, whatever raised it
        failed += 1
        print(f"FAIL {name}: {type(e).__name__}: {e}")


def finish(client):
    print(f"{client}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
