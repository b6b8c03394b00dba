#!/bin/bash
# Passes when the agent wrote hello.txt holding "hi".
if [ "$(cat /app/hello.txt 2>/dev/null)" = "hi" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
  exit 1
fi
