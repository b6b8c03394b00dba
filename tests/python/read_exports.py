"""Reads roller's exports of a run with the readers users load them with, and says what they found (JSON on stdout).

    python read_exports.py RUN HF_DIR PARQUET_DIR
"""
import json
import logging
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq


def without_nulls(value):
    """A record as JSON holds it, less null members: Arrow structs carry every field of the union of rows."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def as_sft_record(row):
    """A dataset row read as its card says: `tools` and each function call's `arguments` are JSON text to load;
    `provenance` is not part of the record."""
    record = {k: v for k, v in row.items() if k != "provenance"}
    record["tools"] = json.loads(record["tools"])
    for message in record["messages"]:
        for call in message.get("tool_calls") or []:
            if call.get("type") != "custom":
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return record


def main(run: str, hf: str, parquet: str) -> None:
    report = {}
    sft = [json.loads(line) for line in Path(run, "sft.jsonl").read_text().splitlines() if line.strip()]
    # The dataset as `datasets` loads a directory: its card's configs and features, its Parquet shards. What it says of
    # the card (a part it ignores, say) is kept: a card it does not read whole is a bug in roller.
    said = []
    handler = logging.Handler(level=logging.WARNING)
    handler.emit = lambda record: said.append(record.getMessage())
    logging.getLogger("datasets").addHandler(handler)
    loaded = datasets.load_dataset(hf, split="train")
    rows = [without_nulls(as_sft_record(r)) for r in loaded]
    provenance = [r["provenance"] for r in loaded]
    report["hf"] = {
        "rows": len(rows),
        "sft_rows": len(sft),
        "equal": rows == [without_nulls(r) for r in sft],
        "features": sorted(loaded.features.keys()),
        "provenance_samples": [p["sample"] for p in provenance],
        "warnings": said,
        "split_info": {"num_examples": loaded.info.splits["train"].num_examples if loaded.info.splits else None},
        "first_difference": next(({"index": i, "loaded": a, "sft": b} for i, (a, b) in enumerate(zip(rows, [without_nulls(r) for r in sft])) if a != b), None),
    }
    report["parquet"] = {}
    for table in sorted(p.name for p in Path(parquet).iterdir() if p.is_dir()):
        t = pq.read_table(Path(parquet, table))
        report["parquet"][table] = {"rows": t.num_rows, "columns": t.column_names}
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
