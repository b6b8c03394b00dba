"""Reads roller's exports of a run with the readers users load them with, and says what they found (JSON on stdout).

    python read_exports.py RUN HF_DIR PARQUET_DIR
"""
import json
import logging
import sys
import tempfile
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


def difference(a, b, path="$"):
    """Where two JSON values first differ (a path and both sides, shortened), or None."""
    if type(a) is not type(b):
        return f"{path}: {str(a)[:120]!r} vs {str(b)[:120]!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'the dataset' if k in a else 'sft.jsonl'}"
            d = difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        return next((d for d in (difference(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b))) if d), None)
    if a == b:
        return None
    at = next((i for i, (x, y) in enumerate(zip(str(a), str(b))) if x != y), min(len(str(a)), len(str(b))))
    return f"{path} at {at}: {str(a)[max(0, at - 40):at + 80]!r} vs {str(b)[max(0, at - 40):at + 80]!r}"


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
    # A cache of its own: a dataset `datasets` built from another export must not be read back instead of this one.
    loaded = datasets.load_dataset(hf, split="train", cache_dir=tempfile.mkdtemp(prefix="roller-hf-cache-"))
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
        "first_difference": next(({"index": i, "where": difference(a, b)} for i, (a, b) in enumerate(zip(rows, [without_nulls(r) for r in sft])) if a != b), None),
    }
    # The sub-agents' config against sft_subagents.jsonl: the same records, `subagent` the struct of where each came from.
    subagents_file = Path(run, "sft_subagents.jsonl")
    if subagents_file.exists():
        wanted = [json.loads(line) for line in subagents_file.read_text().splitlines() if line.strip()]
        loaded = datasets.load_dataset(hf, "subagents", split="train", cache_dir=tempfile.mkdtemp(prefix="roller-hf-cache-"))
        got = [without_nulls(as_sft_record(r)) for r in loaded]
        keep = ("participant_id", "parent_participant_id", "spawn_tool_call_id", "depth")
        expected = [without_nulls({**{k: v for k, v in r.items() if k != "subagent"}, "subagent": {k: r["subagent"][k] for k in keep}}) for r in wanted]
        report["hf_subagents"] = {
            "rows": len(got),
            "file_rows": len(wanted),
            "equal": got == expected,
            "first_difference": next(({"index": i, "where": difference(a, b)} for i, (a, b) in enumerate(zip(got, expected)) if a != b), None),
        }
    report["parquet"] = {}
    # Each table as pyarrow reads it: its rows' identities and what roller's own files say of them (compared by the test).
    keys = {
        "samples": ["sample", "status", "input", "cache_read", "output", "requests"],
        "participants": ["sample", "participant", "role", "parent", "input", "cache_read", "output", "reasoning"],
        "calls": ["sample", "call_id", "participant_id", "input", "cache_read", "output"],
        "relations": ["sample", "relation_id", "type", "parent_participant_id", "child_participant_id", "tool_call_id"],
    }
    for table in sorted(p.name for p in Path(parquet).iterdir() if p.is_dir()):
        t = pq.read_table(Path(parquet, table))
        rows = t.select(keys[table]).to_pylist() if table in keys else []
        report["parquet"][table] = {"rows": t.num_rows, "columns": t.column_names, "keyed": rows}
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
