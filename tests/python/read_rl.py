"""Reads roller's rl export as RL trainers load it: `datasets` (TRL, verl's RLHFDataset) and pyarrow (JSON on stdout).

    python read_rl.py ROLLOUTS_DIR
"""
import json
import logging
import sys
import tempfile
from pathlib import Path

import datasets
import pyarrow.parquet as pq

logging.disable(logging.WARNING)
datasets.disable_progress_bars()
files = sorted(str(p) for p in Path(sys.argv[1]).glob("*.parquet"))
table = pq.read_table(files)
with tempfile.TemporaryDirectory() as cache:
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=cache)
    rows = [
        {k: row[k] for k in ("call_id", "prompt_token_ids", "completion_token_ids", "logprobs", "loss_mask", "continuity")}
        for row in ds
    ]
json.dump(
    {
        "schema": {f.name: str(f.type) for f in table.schema},
        "features": {k: repr(v) for k, v in ds.features.items() if k.endswith(("_ids", "logprobs", "loss_mask"))},
        "rows": rows,
        "equal_to_pyarrow": rows == [{k: r[k] for k in rows[0]} for r in table.to_pylist()] if rows else True,
    },
    sys.stdout,
)
