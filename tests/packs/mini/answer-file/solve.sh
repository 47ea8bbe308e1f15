#!/usr/bin/env bash
set -euo pipefail
port=$(sed -n 's/^port = //p' config/settings.ini)
echo "port is $port" > answer.txt
