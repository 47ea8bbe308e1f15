#!/bin/bash
# Half the reward for each right answer: the verdict is a pass only when both are right.
score=0
words=$(wc -w < /app/data/words.txt)
lines=$(wc -l < /app/data/words.txt)
[ -n "$words" ] && [ "$(tr -d '[:space:]' < /app/count.txt 2>/dev/null)" = "$words" ] && score=$((score + 1))
[ -n "$lines" ] && [ "$(tr -d '[:space:]' < /app/lines.txt 2>/dev/null)" = "$lines" ] && score=$((score + 1))
[ "$TEST_DIR" = /tests ] || { echo "TEST_DIR is not set as Harbor sets it"; exit 1; }
[ -f /srv/tally/note.txt ] || { echo "the environment's state outside the workdir is missing"; exit 1; }
echo "score $score of 2"
python3 -c "print($score / 2)" > /logs/verifier/reward.txt
