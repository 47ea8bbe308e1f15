#!/bin/bash
# Run the answer, then summarise the verifier's log with jq when the image has it (it need not).
got=$(bash /app/answer.sh)
jq -r . /logs/verifier/ctrf.json 2>/dev/null || true
if [ "$got" = 42 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
