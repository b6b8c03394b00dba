#!/bin/bash
# Two scores in reward.json: the file the agent wrote, and the file the image brought, untouched.
wrote=0; kept=0
[ "$(cat /app/hello.txt 2>/dev/null)" = "$EXPECTED" ] && wrote=1
grep -q BLUEBIRD /app/notes.txt 2>/dev/null && kept=1
printf '{"reward": %s, "wrote_hello": %s, "kept_notes": %s}\n' "$(( wrote * kept ))" "$wrote" "$kept" > /logs/verifier/reward.json
