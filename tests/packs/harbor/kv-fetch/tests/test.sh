#!/bin/bash
python3 - <<'PY'
import urllib.request
served = urllib.request.urlopen("http://kv:8080/value", timeout=10).read().decode().strip()
try:
    written = open("/app/value.txt").read().strip()
except OSError:
    written = None
print("served", served, "written", written)
open("/logs/verifier/reward.txt", "w").write("1" if written == served else "0")
PY
