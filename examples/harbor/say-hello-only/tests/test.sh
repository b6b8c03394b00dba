#!/bin/bash
# Fails unless the agent wrote answer.txt: the scripted model only says hello.
if [ -s /app/answer.txt ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
  exit 1
fi
