#!/bin/bash
set -e
python3 -c "import urllib.request; print(urllib.request.urlopen('http://kv:8080/value', timeout=10).read().decode().strip())" > /app/value.txt
