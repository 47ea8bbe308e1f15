#!/bin/bash
set -e
echo "$(sed 's/value = //' config.txt) $(cat tool.txt)" > answer.txt
