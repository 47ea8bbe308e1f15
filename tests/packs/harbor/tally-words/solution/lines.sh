#!/bin/bash
wc -l < /app/data/words.txt > /app/lines.txt
