"""tests/mutation/results.json: what the runs of tests/mutation/run.py found, per mutant, and the score.

Each mutant's entry carries a hash of its definition, so an entry stands only for the mutant as it is
defined now, and the file a hash of the whole list. Read by the runner (which merges `--only` reruns into
the file), by tests/test_mutation.py and by docs/robustness.md's table (tools/robustness.py).
"""
import hashlib
import json
from dataclasses import asdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results.json"

KILLED, SURVIVED, EQUIVALENT = "killed", "survived", "equivalent"
NO_COMPILE, ERROR = "does not compile", "error"  # invalid mutants or test selections: fix them


def mutant_hash(mutant) -> str:
    """A hash of one mutant's definition (name, file, edit, description, tests, reason)."""
    return hashlib.sha256(json.dumps(asdict(mutant), sort_keys=True).encode()).hexdigest()[:16]


def list_hash(mutants) -> str:
    """A hash of the whole list, in order."""
    return hashlib.sha256("".join(mutant_hash(m) for m in mutants).encode()).hexdigest()[:16]


def load(path: Path = RESULTS) -> dict:
    """The recorded results ({} when there are none)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def summarize(recorded: dict, mutants) -> dict:
    """The figures for the current list: per outcome, the mutants whose recorded entry matches their
    definition (`missing`: no such entry), and the score, killed / (mutants - equivalent)."""
    entries = recorded.get("mutants", {})
    by_outcome = {KILLED: [], SURVIVED: [], EQUIVALENT: [], NO_COMPILE: [], ERROR: [], "missing": []}
    for m in mutants:
        entry = entries.get(m.name)
        if m.equivalent:
            by_outcome[EQUIVALENT].append(m.name)
        elif entry is None or entry.get("hash") != mutant_hash(m):
            by_outcome["missing"].append(m.name)
        else:
            by_outcome[entry["outcome"]].append(m.name)
    counted = len(mutants) - len(by_outcome[EQUIVALENT])
    return {
        "mutants": len(mutants),
        **{k: len(v) for k, v in by_outcome.items()},
        "score": round(len(by_outcome[KILLED]) / counted, 4) if counted else 1.0,
        "names": by_outcome,
    }


def save(recorded: dict, mutants, path: Path = RESULTS) -> dict:
    """Writes `recorded` (its "mutants" entries) with the current list's hash and summary; returns the
    summary. Entries of mutants no longer in the list are dropped."""
    names = {m.name for m in mutants}
    entries = recorded.setdefault("mutants", {})
    for name in [k for k in entries if k not in names]:
        del entries[name]
    summary = summarize(recorded, mutants)
    recorded["mutants_hash"] = list_hash(mutants)
    recorded["summary"] = {k: v for k, v in summary.items() if k != "names"}
    recorded["survivors"] = summary["names"][SURVIVED]
    path.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    return summary
