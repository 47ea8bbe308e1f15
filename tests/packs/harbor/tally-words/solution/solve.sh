#!/bin/bash
set -e
wc -w < /app/data/words.txt > /app/count.txt
wc -l < /app/data/words.txt > /app/lines.txt
